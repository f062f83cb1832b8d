#include "httpsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"

struct sg_httpsrv {
    struct MHD_Daemon *daemon;
    sg_http_handler handler;
    void *ctx;
    size_t max_body;
    uint16_t port;
};

/* Per-request state kept by MHD between calls of the access handler. */
struct conn_state {
    struct sg_buf body;
    int too_large;
};

void sg_http_add_header(struct sg_http_response *resp, const char *name, const char *value)
{
    if (resp->header_count >= SG_HTTP_MAX_EXTRA_HEADERS)
        return;
    resp->header_names[resp->header_count] = name;
    snprintf(resp->header_values[resp->header_count], sizeof(resp->header_values[0]), "%s",
             value);
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
    json_decref(o);
}

const char *sg_http_header(const struct sg_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *sg_http_query(const struct sg_http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
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
    if (!r) {
        free(resp->body);
        return MHD_NO;
    }
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

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *data_size, void **con_cls)
{
    struct sg_httpsrv *srv = cls;
    struct conn_state *st = *con_cls;
    (void)version;
    if (!st) {
        st = calloc(1, sizeof(*st));
        if (!st)
            return MHD_NO;
        sg_buf_init(&st->body, srv->max_body);
        *con_cls = st;
        /* Refuse early when the declared length is already over the cap. */
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > srv->max_body)
            st->too_large = 1;
        return MHD_YES;
    }
    if (*data_size) {
        if (!st->too_large && sg_buf_append(&st->body, data, *data_size) < 0)
            st->too_large = 1;
        *data_size = 0;
        return MHD_YES;
    }
    struct sg_http_response resp = {.status = 200};
    if (st->too_large) {
        sg_http_error(&resp, 413, "body_too_large", "request body exceeds %zu bytes",
                      srv->max_body);
        return send_response(conn, &resp);
    }
    char peer[INET6_ADDRSTRLEN + 1];
    peer_string(conn, peer, sizeof(peer));
    struct sg_http_request req = {
        .method = method,
        .url = url,
        .body = st->body.data ? st->body.data : "",
        .body_len = st->body.len,
        .peer = peer,
        .conn = conn,
    };
    srv->handler(srv->ctx, &req, &resp);
    return send_response(conn, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct conn_state *st = *con_cls;
    if (st) {
        sg_buf_free(&st->body);
        free(st);
        *con_cls = NULL;
    }
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

int sg_httpsrv_start(const struct sg_httpsrv_config *cfg, sg_http_handler handler, void *ctx,
                     struct sg_httpsrv **ret_srv, struct sg_error *err)
{
    const char *addr = cfg->bind_addr ? cfg->bind_addr : "127.0.0.1";
    struct sockaddr_storage ss;
    int v6 = 0;
    if (parse_bind(addr, cfg->port, &ss, &v6) < 0)
        return sg_error_set(err, -EINVAL, "bind address '%s' is not an IP literal", addr);
    struct sg_httpsrv *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return sg_error_set(err, -ENOMEM, "out of memory");
    srv->handler = handler;
    srv->ctx = ctx;
    srv->max_body = cfg->max_body;
    /* MHD_USE_ITC: lets sg_httpsrv_quiesce() stop the listener of a running daemon. */
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ERROR_LOG | MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
    srv->daemon = MHD_start_daemon(
        flags, cfg->port, NULL, NULL, on_access, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections ? cfg->max_connections : 64u,
        MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s ? cfg->timeout_s : 30u,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_END);
    if (!srv->daemon) {
        free(srv);
        return sg_error_set(err, -EADDRINUSE, "cannot listen on %s port %u", addr,
                            (unsigned)cfg->port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = di ? di->port : cfg->port;
    *ret_srv = srv;
    return 0;
}

uint16_t sg_httpsrv_port(const struct sg_httpsrv *srv)
{
    return srv->port;
}

void sg_httpsrv_quiesce(struct sg_httpsrv *srv)
{
    if (!srv)
        return;
    MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void sg_httpsrv_stop(struct sg_httpsrv *srv)
{
    if (!srv)
        return;
    MHD_stop_daemon(srv->daemon);
    free(srv);
}
