#include "httpsrv.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "httpsrv_conns.h"
#include "httpsrv_head.h"
#include "membudget.h"
#include "httpsrv_pool.h"
#include "sg_cond.h"
#include "sg_time.h"

#define DEFAULT_RECEIVE_TIMEOUT_S 30u
#define DEFAULT_HEADER_TIMEOUT_S 10u
#define DEFAULT_CONN_SLACK 64u /* connections beyond the workers by default */
#define MHD_LIMIT_SLACK 64u    /* MHD's own hard limit sits above ours */
#define EVENT_THREADS 2u       /* epoll threads: I/O, header checks and GETs only */
#define RETRY_AFTER_S "1"
/* A request refused on its headers with a body at most this large has the
 * body read and dropped before the answer: closing with unread bytes makes
 * the kernel reset the connection, and the client may lose the answer. A
 * larger body is not read: the answer goes at once and the connection closes. */
#define DISCARD_MAX (64u * 1024u)
/* libmicrohttpd keeps a request's line, headers and its answer's headers in
 * one memory pool per connection; what does not fit it answers itself (its
 * own 414/431 pages, before any callback). The pool is mmap()ed above 32 KiB,
 * so its untouched part costs address space, not memory. sandgate's own
 * limits sit well inside it, so that a request over them gets the JSON shape. */
#define MHD_POOL_BYTES (64u * 1024u)
#define STREAM_BLOCK (16u * 1024u) /* bytes MHD asks a stream for at once */
/* Descriptors a daemon needs besides its client connections: listeners,
 * epoll and wake-up descriptors, upstream sockets, files. */
#define FD_RESERVE 256u

struct sg_httpsrv {
    struct MHD_Daemon *daemon;
    struct sg_http_handlers h;
    void *ctx;
    size_t max_body, max_body_total;
    struct sg_membudget *budget; /* borrowed; NULL: bodies count in body_total only */
    unsigned max_connections;
    uint16_t port;
    atomic_size_t body_total; /* bytes held by bodies in flight */
    atomic_uint suspended;
    atomic_int stopping; /* sg_httpsrv_stop began: no connection may be suspended anew */
    atomic_uint_fast64_t refused_library_limit; /* libmicrohttpd's own hard limit */
    atomic_uint_fast64_t library_answers;
    struct sg_workq *workq;
    struct sg_conns *conns;
    /* Set by sg_httpsrv_quiesce(): every new connection is closed at accept.
     * Not MHD_quiesce_daemon(): in libmicrohttpd 0.9.75 it takes the
     * listening socket out of each event thread's epoll set from the calling
     * thread while those threads may be doing the same, and the loser aborts
     * the process ("Failed to remove listen FD from epoll set"). */
    atomic_int quiesced;
};

enum st_phase { ST_HEAD = 0, ST_BODY, ST_DISCARD, ST_QUEUED, ST_DONE, ST_STREAM };

/* Per-request state kept by MHD between calls of the access handler. */
struct conn_state {
    struct sg_httpsrv *srv;
    struct MHD_Connection *conn;
    struct sg_buf body;
    size_t held; /* body's allocation: reserved in the budget, less its NUL in body_total */
    int too_large, overloaded;
    int small_body;              /* the framing is sound and the body at most DISCARD_MAX */
    int decided;                 /* the answer is decided (queued, or waiting for a drained body) */
    int started;                 /* the access handler has seen this request */
    unsigned long long declared; /* Content-Length, 0 when none */
    struct sg_http_target target; /* the request target as received */
    enum st_phase phase;
    /* counted in srv->suspended (from dispatch until the access handler sees
     * the answer, or the request completes without that: a client that went
     * while its request was suspended is closed by MHD on resume without a
     * further call of the access handler, and the count must still drop, or
     * sg_httpsrv_stop() waits for it forever). Event thread only. */
    int counted;
    char peer[INET6_ADDRSTRLEN + 1];
    struct sg_http_request req;
    struct sg_http_response resp;
    /* 1, or 2 while a streaming handler runs: MHD may complete the request
     * (client gone) before the handler returns, and req/resp must outlive
     * both. Whoever drops the last reference frees. */
    atomic_int refs;
    struct sg_http_stream *stream;
    /* req's method and url once streaming: libmicrohttpd's own strings go
     * with the connection, which may close before the handler returns */
    char *method_copy, *url_copy;
};

struct sg_http_stream {
    pthread_mutex_t lock;
    pthread_cond_t room;         /* the reader made room, or the client went */
    struct MHD_Connection *conn; /* NULL once MHD released the response */
    struct sg_buf buf;
    size_t off;               /* bytes of buf already handed to MHD */
    int ended, gone, waiting; /* waiting: the reader suspended the connection */
    int refs;                 /* the handler + MHD's response */
    int fd;                   /* dup of the client socket, for poll only */
    struct sg_http_response head;
};

/* Set on a worker thread by sg_http_stream_begin(): the handler it runs
 * streams, so run_task() leaves the connection to the stream. */
static __thread int tl_streamed;

void sg_http_add_header(struct sg_http_response *resp, const char *name, const char *value)
{
    if (resp->header_count >= SG_HTTP_MAX_EXTRA_HEADERS)
        return;
    resp->header_names[resp->header_count] = name;
    snprintf(resp->header_values[resp->header_count], sizeof(resp->header_values[0]), "%s", value);
    resp->header_count++;
}

void sg_http_error(struct sg_http_response *resp, int status, const char *code, const char *fmt,
                   ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    free(resp->body);
    resp->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    resp->body_len = 0;
    resp->status = status;
    resp->error_code = code;
    json_decref(o);
}

const char *sg_http_header(const struct sg_http_request *req, const char *name)
{
    return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name) : NULL;
}

const char *sg_http_query(const struct sg_http_request *req, const char *name)
{
    return req->conn ? MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name) : NULL;
}

static enum MHD_Result send_response(struct MHD_Connection *conn, struct sg_http_response *resp)
{
    if (!resp->body) {
        resp->status = 500;
        resp->body = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"no response\"}}");
    }
    size_t len = resp->body_len ? resp->body_len : (resp->body ? strlen(resp->body) : 0);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, resp->body, MHD_RESPMEM_MUST_FREE);
    resp->body = NULL; /* the MHD response owns it now (or it was freed) */
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            resp->content_type ? resp->content_type : "application/json");
    for (int i = 0; i < resp->header_count; i++)
        MHD_add_response_header(r, resp->header_names[i], resp->header_values[i]);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    return ret;
}

static void peer_string(struct MHD_Connection *conn, char *out, size_t outsz)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(out, outsz, "unknown");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)outsz);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)outsz);
}

static struct sg_conn_rec *conn_rec(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Queue st->resp; from now on the connection answers, so the receive
 * deadline no longer applies. */
static enum MHD_Result answer(struct conn_state *st)
{
    st->decided = 1;
    sg_conns_mark(st->srv->conns, conn_rec(st->conn), SG_CONN_BUSY);
    return send_response(st->conn, &st->resp);
}

/* An answer decided on the headers (see DISCARD_MAX). */
static enum MHD_Result answer_early(struct conn_state *st)
{
    if (!st->small_body)
        return answer(st);
    st->decided = 1;
    st->phase = ST_DISCARD; /* a body to drain: the request deadline applies */
    sg_conns_mark(st->srv->conns, conn_rec(st->conn), SG_CONN_BODY);
    return MHD_YES;
}

/* An answer httpsrv makes itself: JSON error, then the owner's hook. */
static enum MHD_Result refuse(struct conn_state *st, int status, const char *code, const char *msg)
{
    sg_http_error(&st->resp, status, code, "%s", msg);
    if (status == 503)
        sg_http_add_header(&st->resp, "Retry-After", RETRY_AFTER_S);
    if (st->srv->h.refused)
        st->srv->h.refused(st->srv->ctx, &st->req, &st->resp);
    return st->phase == ST_HEAD ? answer_early(st) : answer(st);
}

/* 503 server_busy on the head. A body within the cap is drained (read and
 * dropped, never held) so that a client which sends it all before reading
 * sees the 503, not a reset. */
static enum MHD_Result refuse_busy_draining(struct conn_state *st, const char *msg)
{
    st->small_body = st->small_body || (st->declared > 0 && st->declared <= st->srv->max_body);
    return refuse(st, 503, "server_busy", msg);
}

static enum MHD_Result refuse_too_large(struct conn_state *st)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "request body exceeds %zu bytes", st->srv->max_body);
    return refuse(st, 413, "body_too_large", msg);
}

struct header_scan {
    unsigned content_length, transfer_encoding, host, bad_name;
    const char *cl_value, *te_value;
};

/* RFC 9110 token characters: what a header name may be made of. */
static int is_token(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
            return 0;
    return 1;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    struct header_scan *hs = cls;
    (void)kind;
    if (!is_token(key))
        hs->bad_name++;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        hs->content_length++;
        hs->cl_value = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        hs->transfer_encoding++;
        hs->te_value = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        hs->host++;
    }
    return MHD_YES;
}

/* The checks a strict server makes that libmicrohttpd 0.9.75 does not (it
 * keeps the first Content-Length, takes any header name, and answers a
 * missing Host with an HTML page): header names are tokens, HTTP/1.1 has
 * exactly one Host, one length, never both framings. */
static enum MHD_Result check_head(struct conn_state *st, const char *version)
{
    struct header_scan hs = {0};
    MHD_get_connection_values(st->conn, MHD_HEADER_KIND, scan_header, &hs);
    if (hs.bad_name)
        return refuse(st, 400, "bad_http", "a header name is not a token");
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && hs.host != 1)
        return refuse(st, 400, "bad_http", "HTTP/1.1 needs exactly one Host header");
    if (hs.transfer_encoding && strcasecmp(hs.te_value, "chunked") != 0)
        return refuse(st, 400, "bad_http", "Transfer-Encoding other than chunked");
    if (hs.content_length > 1)
        return refuse(st, 400, "bad_http", "more than one Content-Length header");
    if (hs.content_length && hs.transfer_encoding)
        return refuse(st, 400, "bad_http", "both Content-Length and Transfer-Encoding headers");
    if (hs.transfer_encoding > 1)
        return refuse(st, 400, "bad_http", "more than one Transfer-Encoding header");
    if (hs.cl_value) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(hs.cl_value, &end, 10);
        if (!isdigit((unsigned char)hs.cl_value[0]) || *end || errno)
            return refuse(st, 400, "bad_http", "Content-Length is not a number");
        st->small_body = n <= DISCARD_MAX;
        st->declared = n;
    } else if (!hs.transfer_encoding) {
        st->small_body = 1; /* no body at all */
    }
    return MHD_YES;
}

/* The request line and header block, before anything else is looked at. */
static enum MHD_Result check_request_line(struct conn_state *st, const char *version)
{
    struct sg_http_head_verdict v;
    if (sg_http_head_check(st->conn, st->req.method, version, &st->target, &v) == 0)
        return MHD_YES;
    return refuse(st, v.status, v.code, v.msg);
}

/* Make the body's allocation `bytes` (more than held), counted in
 * body_total and reserved in the budget first. -EBUSY when either is full
 * (nothing changes), -ENOMEM. */
static int hold(struct conn_state *st, size_t bytes)
{
    struct sg_httpsrv *srv = st->srv;
    size_t more = bytes - st->held; /* body_total counts body bytes: the NUL aside */
    size_t more_body = st->held ? more : more - 1;
    if (atomic_fetch_add(&srv->body_total, more_body) + more_body > srv->max_body_total) {
        atomic_fetch_sub(&srv->body_total, more_body);
        return -EBUSY;
    }
    if (!sg_membudget_reserve(srv->budget, more)) {
        atomic_fetch_sub(&srv->body_total, more_body);
        return -EBUSY;
    }
    int r = sg_buf_presize(&st->body, bytes);
    if (r < 0) {
        atomic_fetch_sub(&srv->body_total, more_body);
        sg_membudget_release(srv->budget, more);
        return r;
    }
    st->held = bytes;
    return 0;
}

static enum MHD_Result on_head(struct conn_state *st, const char *version)
{
    struct sg_httpsrv *srv = st->srv;
    enum MHD_Result r = check_request_line(st, version);
    if (st->decided || r != MHD_YES)
        return r;
    r = check_head(st, version);
    if (st->decided || r != MHD_YES)
        return r;
    if (srv->h.head && srv->h.head(srv->ctx, &st->req, &st->resp) == SG_HTTP_ANSWER_NOW)
        return answer_early(st);
    /* the owner's connections between head and complete request: a tenant's
     * slow bodies from many addresses are bounded like one address's */
    if (st->resp.owner[0] && sg_conns_own(srv->conns, conn_rec(st->conn), st->resp.owner) < 0)
        return refuse_busy_draining(
            st, "too many requests of this tenant are arriving at once; retry shortly");
    /* Sizes after the owner's checks: an unauthenticated body is refused
     * unread whatever its size. A body a little over the cap is drained
     * (never held) so that clients which send it all before reading still
     * see the 413; a far larger declaration is answered at once. */
    if (st->declared > srv->max_body) {
        st->small_body = st->declared / 2 <= srv->max_body;
        return refuse_too_large(st);
    }
    /* a declared body is held at once, whole: its memory is reserved
     * before one byte is read */
    if (st->declared > 0 && hold(st, st->declared + 1) < 0)
        return refuse_busy_draining(st, "too many request bodies in flight; retry shortly");
    st->phase = ST_BODY; /* the head is accepted: no longer evictable */
    sg_conns_mark(srv->conns, conn_rec(st->conn), SG_CONN_BODY);
    return MHD_YES;
}

static void take_body(struct conn_state *st, const char *data, size_t n)
{
    struct sg_httpsrv *srv = st->srv;
    if (st->too_large || st->overloaded)
        return; /* discarded: the answer is already decided */
    size_t need = st->body.len + n + 1;
    if (n > srv->max_body || st->body.len > srv->max_body - n) {
        st->too_large = 1;
        return;
    }
    /* a body without a length (chunked) grows by doubling, each step
     * reserved before the buffer grows */
    size_t grow = need > 2 * st->held ? need : 2 * st->held;
    if (grow > srv->max_body + 1)
        grow = srv->max_body + 1;
    if (need > st->held && hold(st, grow) < 0) {
        st->overloaded = 1;
        return;
    }
    if (sg_buf_append(&st->body, data, n) < 0)
        st->too_large = 1;
}

static void conn_state_unref(struct conn_state *st)
{
    if (atomic_fetch_sub(&st->refs, 1) != 1)
        return;
    sg_buf_free(&st->body);
    atomic_fetch_sub(&st->srv->body_total, st->held ? st->held - 1 : 0);
    sg_membudget_release(st->srv->budget, st->held);
    sg_membudget_release(st->srv->budget, st->resp.held);
    free(st->resp.body);
    free(st->method_copy);
    free(st->url_copy);
    free(st);
}

static void run_task(void *arg)
{
    struct conn_state *st = arg;
    tl_streamed = 0;
    st->srv->h.handle(st->srv->ctx, &st->req, &st->resp);
    if (tl_streamed) {
        conn_state_unref(st); /* the connection is the stream's now */
        return;
    }
    st->phase = ST_DONE;
    MHD_resume_connection(st->conn);
}

static void stream_unref_locked(struct sg_http_stream *s)
{
    int last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (!last)
        return;
    sg_buf_free(&s->buf);
    pthread_cond_destroy(&s->room);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* MHD's content reader: what is buffered, the end, or (nothing yet) suspend
 * the connection until the next write so the event thread never spins. */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
    struct sg_http_stream *s = cls;
    (void)pos;
    pthread_mutex_lock(&s->lock);
    ssize_t n = 0;
    if (s->buf.len > s->off) {
        size_t k = s->buf.len - s->off < max ? s->buf.len - s->off : max;
        memcpy(out, s->buf.data + s->off, k);
        s->off += k;
        if (s->off == s->buf.len) {
            sg_buf_reset(&s->buf);
            s->off = 0;
        }
        pthread_cond_broadcast(&s->room);
        n = (ssize_t)k;
    } else if (s->ended) {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        s->waiting = 1;
        MHD_suspend_connection(s->conn);
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void stream_released(void *cls)
{
    struct sg_http_stream *s = cls;
    pthread_mutex_lock(&s->lock);
    s->gone = 1;
    s->conn = NULL;
    s->waiting = 0;
    pthread_cond_broadcast(&s->room);
    stream_unref_locked(s);
}

/* On the event thread, once the handler began a stream: queue it. */
static enum MHD_Result stream_answer(struct conn_state *st)
{
    struct sg_http_stream *s = st->stream;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
                                                               stream_read, s, stream_released);
    if (!r) {
        stream_released(s); /* the handler sees a gone client */
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, s->head.content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    for (int i = 0; i < s->head.header_count; i++)
        MHD_add_response_header(r, s->head.header_names[i], s->head.header_values[i]);
    enum MHD_Result ret = MHD_queue_response(st->conn, (unsigned)s->head.status, r);
    MHD_destroy_response(r);
    return ret;
}

struct sg_http_stream *sg_http_stream_begin(const struct sg_http_request *req,
                                            const struct sg_http_response *resp)
{
    struct conn_state *st =
        (struct conn_state *)(void *)((char *)(uintptr_t)req - offsetof(struct conn_state, req));
    struct sg_http_stream *s = calloc(1, sizeof(*s));
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(st->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    char *method = strdup(st->req.method), *url = strdup(st->req.url);
    if (!s || !ci || !method || !url || pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        free(method);
        free(url);
        return NULL;
    }
    if (sg_cond_init_mono(&s->room) < 0 ||
        (s->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        free(method);
        free(url);
        return NULL;
    }
    sg_buf_init(&s->buf, SG_HTTP_STREAM_BUF_MAX);
    /* From here the request outlives its connection: no more header lookups
     * (sg_http_header() answers NULL), method and url are copies. */
    st->method_copy = method;
    st->url_copy = url;
    st->req.method = method;
    st->req.url = url;
    st->req.conn = NULL;
    s->conn = st->conn;
    s->refs = 2;
    s->head = *resp;
    s->head.body = NULL;
    if (!s->head.content_type)
        s->head.content_type = "text/event-stream";
    st->stream = s;
    atomic_fetch_add(&st->refs, 1);
    st->phase = ST_STREAM;
    tl_streamed = 1;
    MHD_resume_connection(st->conn);
    return s;
}

/* Append data[0..len), len <= the buffer's cap, waiting for room; called
 * with s->lock held. */
static int stream_put(struct sg_http_stream *s, const char *data, size_t len)
{
    uint64_t deadline = sg_time_mono_ns() + (uint64_t)SG_HTTP_STREAM_STALL_MS * 1000000u;
    struct timespec ts;
    sg_cond_deadline(deadline, &ts);
    while (!s->gone && s->buf.len + len > s->buf.cap) {
        if (s->off) { /* drop what MHD has taken before waiting for room */
            memmove(s->buf.data, s->buf.data + s->off, s->buf.len - s->off);
            s->buf.len -= s->off;
            s->off = 0;
            continue;
        }
        if (pthread_cond_timedwait(&s->room, &s->lock, &ts) == ETIMEDOUT)
            s->gone = 1;
    }
    int r = s->gone || sg_buf_append(&s->buf, data, len) < 0 ? -EPIPE : 0;
    if (r == 0 && s->waiting && s->conn) {
        s->waiting = 0;
        MHD_resume_connection(s->conn);
    }
    return r;
}

int sg_http_stream_write(struct sg_http_stream *s, const char *data, size_t len)
{
    int r = 0;
    pthread_mutex_lock(&s->lock);
    /* a write larger than the buffer goes in pieces as the client reads */
    for (size_t done = 0; r == 0 && done < len;) {
        size_t piece = len - done < SG_HTTP_STREAM_PIECE ? len - done : SG_HTTP_STREAM_PIECE;
        r = stream_put(s, data + done, piece);
        done += piece;
    }
    if (len == 0 && s->gone)
        r = -EPIPE;
    pthread_mutex_unlock(&s->lock);
    return r;
}

int sg_http_stream_gone(struct sg_http_stream *s)
{
    pthread_mutex_lock(&s->lock);
    int gone = s->gone;
    pthread_mutex_unlock(&s->lock);
    struct pollfd p = {.fd = s->fd, .events = POLLRDHUP};
    return gone || (poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

int sg_http_stream_fd(const struct sg_http_stream *s)
{
    return s->fd;
}

void sg_http_stream_end(struct sg_http_stream *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->ended = 1;
    close(s->fd);
    s->fd = -1;
    if (s->waiting && s->conn) {
        s->waiting = 0;
        MHD_resume_connection(s->conn);
    }
    stream_unref_locked(s);
}

static void uncount(struct conn_state *st)
{
    if (st->counted) {
        st->counted = 0;
        atomic_fetch_sub(&st->srv->suspended, 1);
    }
}

/* The body is complete: answer GETs here (unless the daemon says one may
 * wait on another service), hand the rest to a worker. */
static enum MHD_Result dispatch(struct conn_state *st)
{
    struct sg_httpsrv *srv = st->srv;
    if (st->too_large)
        return refuse_too_large(st);
    if (st->overloaded)
        return refuse(st, 503, "server_busy", "too many request bodies in flight; retry shortly");
    st->req.body = st->body.data ? st->body.data : "";
    st->req.body_len = st->body.len;
    if (strcmp(st->req.method, MHD_HTTP_METHOD_GET) == 0 &&
        !(srv->h.get_on_worker && srv->h.get_on_worker(srv->ctx, &st->req))) {
        srv->h.handle(srv->ctx, &st->req, &st->resp);
        return answer(st);
    }
    /* Counted before stopping is read, and stop sets stopping before it
     * reads the count (both sequentially consistent): a request arriving on
     * a kept-alive connection while the server stops is either waited for
     * or refused, never suspended behind the stop's check (libmicrohttpd
     * aborts when stopped with a connection suspended). */
    atomic_fetch_add(&srv->suspended, 1);
    if (atomic_load(&srv->stopping)) {
        atomic_fetch_sub(&srv->suspended, 1);
        return refuse(st, 503, "shutting_down", "the server is stopping");
    }
    if (sg_workq_reserve(srv->workq) < 0) {
        atomic_fetch_sub(&srv->suspended, 1);
        return refuse(st, 503, "server_busy", "every worker is busy; retry shortly");
    }
    sg_conns_mark(srv->conns, conn_rec(st->conn), SG_CONN_BUSY);
    st->phase = ST_QUEUED;
    st->counted = 1;
    MHD_suspend_connection(st->conn);
    sg_workq_push(srv->workq, st);
    return MHD_YES;
}

static struct conn_state *state_new(struct sg_httpsrv *srv, struct MHD_Connection *conn)
{
    struct conn_state *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    atomic_init(&st->refs, 1);
    st->srv = srv;
    st->conn = conn;
    st->resp.status = 200;
    sg_buf_init(&st->body, srv->max_body);
    peer_string(conn, st->peer, sizeof(st->peer));
    st->req = (struct sg_http_request){"", "", "", 0, st->peer, conn};
    return st;
}

/* The request line is parsed (MHD's URI log callback): the request's state
 * starts here, so that an answer MHD makes itself later still reaches
 * on_completed(), and the target is looked at as received, before MHD splits
 * off the query and unescapes it in place. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct conn_state *st = state_new(cls, conn);
    if (st)
        sg_http_target_take(uri, &st->target);
    return st;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *data_size, void **con_cls)
{
    struct sg_httpsrv *srv = cls;
    struct conn_state *st = *con_cls;
    if (!st && !(st = *con_cls = state_new(srv, conn)))
        return MHD_NO;
    if (!st->started) {
        st->started = 1;
        st->req.method = method;
        st->req.url = url;
        return on_head(st, version);
    }
    if (st->phase == ST_DONE) {
        uncount(st);
        st->phase = ST_QUEUED; /* answered once */
        return answer(st);
    }
    if (st->phase == ST_STREAM) {
        uncount(st);
        st->phase = ST_QUEUED;
        return stream_answer(st);
    }
    if (*data_size) {
        if (st->phase == ST_BODY)
            take_body(st, data, *data_size);
        *data_size = 0; /* ST_DISCARD: dropped */
        return MHD_YES;
    }
    return st->phase == ST_DISCARD ? answer(st) : dispatch(st);
}

/* What libmicrohttpd answered itself after the request line (a header line
 * without a colon, its pool full, a Content-Length it cannot parse, broken
 * chunked framing): its own page went out, but the owner still gets the
 * refusal for its audit line and metric. */
static void report_library_answer(struct conn_state *st)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(st->conn, MHD_CONNECTION_INFO_HTTP_STATUS);
    if (st->decided || st->stream || !ci || ci->http_status < 400 || !st->srv->h.refused)
        return;
    unsigned status = ci->http_status;
    const char *code = status == 431   ? "headers_too_large"
                       : status == 414 ? "uri_too_long"
                       : status == 413 ? "body_too_large"
                                       : "bad_http";
    sg_http_error(&st->resp, (int)status, code, "answered by libmicrohttpd");
    st->srv->h.refused(st->srv->ctx, &st->req, &st->resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct sg_httpsrv *srv = cls;
    (void)toe;
    struct conn_state *st = *con_cls;
    if (st) {
        uncount(st);
        report_library_answer(st);
        conn_state_unref(st);
        *con_cls = NULL;
    }
    /* the next request's clocks; evictable until its head is accepted */
    sg_conns_mark(srv->conns, conn_rec(conn), SG_CONN_HEAD);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct sg_httpsrv *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *addr =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        *socket_context =
            fd && addr ? sg_conns_add(srv->conns, fd->connect_fd, addr->client_addr) : NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        sg_conns_remove(srv->conns, *socket_context);
        *socket_context = NULL;
    }
}

/* libmicrohttpd's own messages become key=value log lines; each error page
 * it sends itself (docs/troubleshooting.md) is also counted, including those
 * made before any callback of ours runs. Runs on an event thread. */
__attribute__((format(printf, 2, 0))) static void on_library_log(void *cls, const char *fmt,
                                                                 va_list ap)
{
    static const char answered[] = "Error processing request (HTTP response code is ";
    /* libmicrohttpd's own refusal at accept: its hard limit, which sits
     * above ours (reached only while evicted connections are closing) */
    static const char limit[] = "Server reached connection limit";
    struct sg_httpsrv *srv = cls;
    if (strncmp(fmt, answered, sizeof(answered) - 1) == 0)
        atomic_fetch_add(&srv->library_answers, 1);
    if (strncmp(fmt, limit, sizeof(limit) - 1) == 0)
        atomic_fetch_add(&srv->refused_library_limit, 1);
    char msg[256], quoted[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    sg_log_quote(msg, quoted, sizeof(quoted));
    sg_log(SG_LOG_INFO, "http_library", "msg=\"%s\"", quoted);
}

/* The global and per-address limits (httpsrv_conns.h: a connection still
 * waiting for its head may be evicted to make room): refuse (close at once)
 * rather than leave new clients waiting in the listen backlog as MHD's own
 * limit does. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct sg_httpsrv *srv = cls;
    (void)addrlen;
    if (atomic_load(&srv->quiesced))
        return MHD_NO; /* closed unanswered: the server is draining */
    return sg_conns_admit(srv->conns, addr) == 0 ? MHD_YES : MHD_NO;
}

static int parse_bind(const char *addr, uint16_t port, struct sockaddr_storage *ss, int *ret_v6)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        *ret_v6 = 0;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        *ret_v6 = 1;
        return 0;
    }
    return -EINVAL;
}

static void srv_free(struct sg_httpsrv *srv)
{
    sg_workq_free(srv->workq);
    sg_conns_free(srv->conns);
    free(srv);
}

static struct sg_httpsrv *srv_new(const struct sg_httpsrv_config *cfg,
                                  const struct sg_http_handlers *h, void *ctx)
{
    struct sg_httpsrv *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return NULL;
    srv->h = *h;
    srv->ctx = ctx;
    srv->max_body = cfg->max_body;
    srv->max_body_total = cfg->max_body_total ? cfg->max_body_total : 4 * cfg->max_body;
    srv->budget = cfg->budget;
    unsigned workers = cfg->workers ? cfg->workers : 64u;
    srv->max_connections =
        cfg->max_connections ? cfg->max_connections : workers + DEFAULT_CONN_SLACK;
    unsigned rt = cfg->receive_timeout_s ? cfg->receive_timeout_s : DEFAULT_RECEIVE_TIMEOUT_S;
    unsigned ht = cfg->header_timeout_s ? cfg->header_timeout_s : DEFAULT_HEADER_TIMEOUT_S;
    struct sg_conn_limits lim = {
        .max_open = srv->max_connections,
        .per_address = cfg->per_ip_connections,
        .per_owner = cfg->per_owner_connections,
        .head_ms = (uint64_t)(ht < rt ? ht : rt) * 1000u,
        .request_ms = (uint64_t)rt * 1000u,
    };
    srv->conns = sg_conns_new(&lim);
    srv->workq = sg_workq_new(workers, cfg->max_queued, run_task);
    if (!srv->conns || !srv->workq) {
        srv_free(srv);
        return NULL;
    }
    return srv;
}

/* Every connection the limits admit needs a descriptor: raise the soft
 * limit to what they need when the hard limit allows, refuse to start when
 * it does not (a connection refused by the kernel at accept is not counted
 * and spins no limit of ours). */
static int check_fd_limit(unsigned max_connections, struct sg_error *err)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)max_connections + MHD_LIMIT_SLACK + FD_RESERVE;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max >= need) {
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            return 0;
    }
    return sg_error_set(err, -EMFILE,
                        "max_connections %u needs %llu file descriptors, the limit (ulimit -n) "
                        "allows %llu: lower max_connections or raise the limit",
                        max_connections, (unsigned long long)need, (unsigned long long)rl.rlim_max);
}

int sg_httpsrv_start(const struct sg_httpsrv_config *cfg, const struct sg_http_handlers *h,
                     void *ctx, struct sg_httpsrv **ret_srv, struct sg_error *err)
{
    const char *addr = cfg->bind_addr ? cfg->bind_addr : "127.0.0.1";
    struct sockaddr_storage ss;
    int v6 = 0;
    if (parse_bind(addr, cfg->port, &ss, &v6) < 0)
        return sg_error_set(err, -EINVAL, "bind address '%s' is not an IP literal", addr);
    struct sg_httpsrv *srv = srv_new(cfg, h, ctx);
    if (!srv)
        return sg_error_set(err, -ENOMEM, "out of memory");
    int r = check_fd_limit(srv->max_connections, err);
    if (r < 0) {
        srv_free(srv);
        return r;
    }
    /* Strictness 0: check_head() makes the strict checks itself, so that the
     * refusals are JSON (MHD's own are HTML pages).
     * epoll threads own the sockets. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0);
    srv->daemon = MHD_start_daemon(
        flags, cfg->port, on_accept, srv, on_access, srv, MHD_OPTION_EXTERNAL_LOGGER,
        on_library_log, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, EVENT_THREADS, MHD_OPTION_CONNECTION_LIMIT,
        srv->max_connections + MHD_LIMIT_SLACK, MHD_OPTION_CONNECTION_TIMEOUT,
        cfg->timeout_s ? cfg->timeout_s : 30u, MHD_OPTION_STRICT_FOR_CLIENT, 0,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        srv, MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)MHD_POOL_BYTES, MHD_OPTION_END);
    if (!srv->daemon) {
        srv_free(srv);
        return sg_error_set(err, -EADDRINUSE, "cannot listen on %s port %u", addr,
                            (unsigned)cfg->port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = di ? di->port : cfg->port;
    *ret_srv = srv;
    return 0;
}

void sg_httpsrv_get_stats(struct sg_httpsrv *srv, struct sg_httpsrv_stats *ret)
{
    *ret = (struct sg_httpsrv_stats){0};
    if (!srv)
        return;
    struct sg_conn_stats cs;
    sg_conns_get_stats(srv->conns, &cs);
    ret->open = cs.open;
    ret->refused_at_accept = cs.refused_global + atomic_load(&srv->refused_library_limit);
    ret->refused_per_address = cs.refused_per_address;
    ret->refused_per_owner = cs.refused_per_owner;
    ret->evicted = cs.evicted;
    ret->library_answers = atomic_load(&srv->library_answers);
    ret->cut_header_timeout = cs.cut_head;
    ret->cut_receive_timeout = cs.cut_request;
    ret->body_bytes = atomic_load(&srv->body_total);
}

uint16_t sg_httpsrv_port(const struct sg_httpsrv *srv)
{
    return srv->port;
}

void sg_httpsrv_quiesce(struct sg_httpsrv *srv)
{
    if (srv)
        atomic_store(&srv->quiesced, 1);
}

void sg_httpsrv_stop(struct sg_httpsrv *srv)
{
    if (!srv)
        return;
    sg_httpsrv_quiesce(srv);
    atomic_store(&srv->stopping, 1);
    /* MHD must not be stopped with a connection suspended: let every handler
     * finish and its connection be resumed and answered first. */
    struct timespec nap = {0, 5 * 1000 * 1000};
    while (sg_workq_pending(srv->workq) || atomic_load(&srv->suspended))
        nanosleep(&nap, NULL);
    MHD_stop_daemon(srv->daemon); /* closes the listening socket */
    srv_free(srv);
}
