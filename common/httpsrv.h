/* httpsrv.h - a small JSON-over-HTTP server on top of libmicrohttpd.
 *
 * Both daemons use it. The connection model is event-driven: a couple of
 * epoll threads own every socket and never block, so thousands of slow or
 * idle clients cost a file descriptor each, not a thread. A request's life:
 *
 *   1. headers arrive -> strict checks (the request target over 8 KiB: 414,
 *      the head over 16 KiB: 431, a NUL byte anywhere in the head, a space in
 *      the target, a folded line, duplicate Content-Length, Content-Length with
 *      Transfer-Encoding, a declared body over max_body) and the
 *      optional `head` callback, which may refuse before one body byte is
 *      read (authentication, routing);
 *   2. the body is read up to max_body, and all bodies in flight together up
 *      to max_body_total;
 *   3. GET requests are answered on the event thread (their handlers must be
 *      quick and never block); other requests are handed to a bounded pool of
 *      worker threads while the connection is suspended, so a handler may
 *      block on an upstream. No free worker and no queue slot: 503 at once.
 *
 * Bounds: max_connections in total and per_ip_connections per client
 * address. Past either, the oldest connection still waiting for its request
 * head (a new one, or one kept alive after an answer) is closed to make room,
 * taken from the new connection's address (its limit) or from the address
 * that holds the most (the total); when there is none the new one is closed at accept,
 * never left waiting (httpsrv_conns.h). A connection whose head was accepted
 * is never evicted. Deadlines: header_timeout_s for a request's head and
 * receive_timeout_s for its head and body, however slowly they trickle in
 * (the connection is closed); the idle timeout closes a connection without
 * traffic in any phase (a client that does not read its answer).
 *
 * Every answer httpsrv makes itself (400, 413, 414, 431, 503) is the JSON
 * error shape and goes through the `refused` callback first, so the owner can
 * add a request id, an audit line and a metric like for any other answer.
 * What libmicrohttpd answers itself (its HTML pages: docs/troubleshooting.md)
 * is passed to `refused` after the fact when the request line was parsed
 * (headers added then are not sent), for the audit line and the metric.
 */
#ifndef SG_HTTPSRV_H
#define SG_HTTPSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

struct sg_httpsrv;
struct sg_membudget;
struct MHD_Connection;

struct sg_http_request {
    const char *method; /* borrowed for the handler call */
    const char *url;    /* path only, no query string */
    const char *body;   /* NUL-terminated; body_len excludes the NUL ("" in head) */
    size_t body_len;
    const char *peer; /* textual peer address, e.g. "127.0.0.1" */
    struct MHD_Connection *conn;
};

#define SG_HTTP_MAX_EXTRA_HEADERS 6

struct sg_http_response {
    int status;               /* default 200 */
    char *body;               /* owned by the server after return; free()d */
    size_t body_len;          /* 0 means strlen(body) */
    const char *content_type; /* static string; default application/json */
    const char *header_names[SG_HTTP_MAX_EXTRA_HEADERS]; /* static strings */
    char header_values[SG_HTTP_MAX_EXTRA_HEADERS][256];
    int header_count;
    const char *error_code; /* static; set by sg_http_error(), NULL otherwise */
    /* Bytes the handler reserved in the server's memory budget
     * (sg_httpsrv_config.budget) for this answer: the server releases them
     * once the answer is sent or the connection is gone. */
    size_t held;
    /* Set by the head hook: the request's owner (a tenant, as authenticated),
     * whose connections between an accepted head and a complete request are
     * limited (sg_httpsrv_config.per_owner_connections; past it 503
     * server_busy). Empty: none. */
    char owner[96];
};

typedef void (*sg_http_handler)(void *ctx, const struct sg_http_request *req,
                                struct sg_http_response *resp);

/* What `head` decides once the headers are in. */
enum sg_http_head { SG_HTTP_GO_ON = 0, SG_HTTP_ANSWER_NOW = 1 };

struct sg_http_handlers {
    sg_http_handler handle; /* the whole request */
    /* Headers only (body ""): return SG_HTTP_ANSWER_NOW after filling resp
     * to answer without reading the body. NULL = always go on. Runs on an
     * event thread: must not block. */
    enum sg_http_head (*head)(void *ctx, const struct sg_http_request *req,
                              struct sg_http_response *resp);
    /* Called with each answer httpsrv makes itself, just before it is sent.
     * May add headers. NULL = none. Runs on an event thread. */
    sg_http_handler refused;
    /* GETs are answered on the event threads unless this says true for the
     * request (one that may wait on another service): then a worker takes it
     * like any other request. NULL = every GET on the event threads. Runs on
     * an event thread: must not block. */
    bool (*get_on_worker)(void *ctx, const struct sg_http_request *req);
};

struct sg_httpsrv_config {
    const char *bind_addr;       /* IPv4 or IPv6 literal; NULL = 127.0.0.1 */
    uint16_t port;               /* 0 picks a free port; see sg_httpsrv_port() */
    size_t max_body;             /* bytes; larger bodies get 413 */
    unsigned workers;            /* handler threads for non-GET requests */
    unsigned timeout_s;          /* idle connection timeout */
    unsigned max_connections;    /* open connections in total; 0 = workers + 64 */
    unsigned per_ip_connections; /* open connections per client address; 0 = no limit */
    /* connections per owner (sg_http_response.owner) whose head was
     * accepted and whose request is not complete (a slow body); 0 = no limit */
    unsigned per_owner_connections;
    unsigned max_queued;        /* requests waiting for a worker; past it 503 */
    unsigned receive_timeout_s; /* headers + body of one request; 0 = 30 */
    unsigned header_timeout_s;  /* the head of a request (capped by receive_timeout_s); 0 = 10 */
    size_t max_body_total;      /* bytes held by all bodies in flight; 0 = 4 * max_body */
    /* The daemon's memory budget (borrowed, outlives the server; NULL =
     * none): each body's memory is reserved in it before it is read (a
     * declared length at once, a chunked body as its buffer doubles) and
     * released when the request ends; past it 503 server_busy. */
    struct sg_membudget *budget;
};

/* Start serving. On success *ret_srv is owned by the caller (stop with
 * sg_httpsrv_stop()). The process's descriptor limit (RLIMIT_NOFILE) must
 * hold max_connections and a reserve: the soft limit is raised when the hard
 * one allows, otherwise -EMFILE with a message saying what is needed. */
int sg_httpsrv_start(const struct sg_httpsrv_config *cfg, const struct sg_http_handlers *h,
                     void *ctx, struct sg_httpsrv **ret_srv, struct sg_error *err);

struct sg_httpsrv_stats {
    unsigned open;                /* connections open now */
    uint64_t refused_at_accept;   /* closed at once: over max_connections, none evictable */
    uint64_t refused_per_address; /* closed at once: over per_ip_connections, none evictable */
    uint64_t refused_per_owner;   /* 503 on the head: over per_owner_connections */
    uint64_t evicted;             /* closed waiting for a head, to admit a newer one */
    uint64_t library_answers;     /* error pages libmicrohttpd sent itself */
    uint64_t cut_header_timeout;  /* closed: no complete head within header_timeout_s */
    uint64_t cut_receive_timeout; /* closed: a request took over receive_timeout_s */
    size_t body_bytes;            /* request bodies held now */
};

/* Connection counters for /metrics; all 0 when srv is NULL. */
void sg_httpsrv_get_stats(struct sg_httpsrv *srv, struct sg_httpsrv_stats *ret);

/* The port actually bound (useful with port 0). */
uint16_t sg_httpsrv_port(const struct sg_httpsrv *srv);

/* Stop taking new connections: from its return each one is closed as soon
 * as it is accepted, unanswered (the socket stays open until
 * sg_httpsrv_stop()); requests on connections already open are still served.
 * Call it first to drain, then sg_httpsrv_stop() once in-flight work is done.
 * NULL is a no-op. */
void sg_httpsrv_quiesce(struct sg_httpsrv *srv);

/* Stop accepting, wait for in-flight handlers to finish, free. NULL is a no-op. */
void sg_httpsrv_stop(struct sg_httpsrv *srv);

/* Request header lookup (case-insensitive); borrowed, NULL when absent. */
const char *sg_http_header(const struct sg_http_request *req, const char *name);

/* Query-string argument lookup; borrowed, NULL when absent. */
const char *sg_http_query(const struct sg_http_request *req, const char *name);

/* Add a response header (name must be a static string); ignored past the cap. */
void sg_http_add_header(struct sg_http_response *resp, const char *name, const char *value);

/* Streamed answers (Server-Sent Events and the like). A handler on a worker
 * thread may, instead of filling resp, begin a stream: the status line and
 * headers go out at once and what the handler writes follows as it comes
 * (chunked), while the handler keeps its worker (streams count within the
 * worker pool, so they are bounded like every job). The event threads never
 * wait for the handler: when the stream has nothing to send the connection
 * is suspended and the next write resumes it. req and resp stay valid until
 * the handler returns, even when the client has gone; but once the stream
 * began, req's headers are no longer available (sg_http_header() and
 * sg_http_query() answer NULL: read them before) and copies of req made
 * before must not be used for them either.
 *
 * Writes are buffered up to SG_HTTP_STREAM_BUF_MAX bytes; a write that finds
 * the buffer full waits up to SG_HTTP_STREAM_STALL_MS for the client to read,
 * then fails: a client that does not read is treated as gone. A write of any
 * length is accepted: it goes into the buffer in pieces of
 * SG_HTTP_STREAM_PIECE bytes as the client reads (so a result event larger
 * than the buffer still reaches the client; memory stays bounded). */
#define SG_HTTP_STREAM_BUF_MAX (1024u * 1024u)
#define SG_HTTP_STREAM_PIECE (64u * 1024u)
#define SG_HTTP_STREAM_STALL_MS 10000u

struct sg_http_stream;

/* Begin a streamed answer with resp's status, content type and extra
 * headers (its body is ignored). Only from the handler of a non-GET request,
 * once per request. NULL when out of memory (then answer through resp). The
 * handler must end the stream with sg_http_stream_end() before it returns. */
struct sg_http_stream *sg_http_stream_begin(const struct sg_http_request *req,
                                            const struct sg_http_response *resp);

/* Queue len bytes. 0, or -EPIPE once the client has gone (or stalled past
 * SG_HTTP_STREAM_STALL_MS): the caller should stop its work. */
int sg_http_stream_write(struct sg_http_stream *s, const char *data, size_t len);

/* 1 when the client has hung up (its end of the connection is closed), 0
 * otherwise; never blocks. */
int sg_http_stream_gone(struct sg_http_stream *s);

/* A descriptor of the client's connection, only to poll(2) for POLLRDHUP /
 * POLLHUP (never read or write it); valid until sg_http_stream_end(). */
int sg_http_stream_fd(const struct sg_http_stream *s);

/* The last write: the answer ends once the buffer is sent. Frees the
 * handler's side of s. NULL is a no-op. */
void sg_http_stream_end(struct sg_http_stream *s);

/* Set a JSON error body {"error":{"code","message"}} with the given status. */
void sg_http_error(struct sg_http_response *resp, int status, const char *code, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

#endif
