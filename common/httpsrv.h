/* httpsrv.h - a small JSON-over-HTTP server on top of libmicrohttpd.
 *
 * Both daemons use it: it reads the request body up to a hard cap (answering
 * 413 itself past the cap, before the handler ever runs), then calls one
 * handler with the whole request. Handlers run on the connection's thread
 * (thread per connection, bounded by max_connections), so a handler may block
 * on an upstream without stalling other clients.
 */
#ifndef SG_HTTPSRV_H
#define SG_HTTPSRV_H

#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

struct sg_httpsrv;
struct MHD_Connection;

struct sg_http_request {
    const char *method; /* borrowed for the handler call */
    const char *url;    /* path only, no query string */
    const char *body;   /* NUL-terminated; body_len excludes the NUL */
    size_t body_len;
    const char *peer;   /* textual peer address, e.g. "127.0.0.1" */
    struct MHD_Connection *conn;
};

#define SG_HTTP_MAX_EXTRA_HEADERS 4

struct sg_http_response {
    int status;               /* default 200 */
    char *body;               /* owned by the server after return; free()d */
    size_t body_len;          /* 0 means strlen(body) */
    const char *content_type; /* static string; default application/json */
    const char *header_names[SG_HTTP_MAX_EXTRA_HEADERS];  /* static strings */
    char header_values[SG_HTTP_MAX_EXTRA_HEADERS][128];
    int header_count;
};

typedef void (*sg_http_handler)(void *ctx, const struct sg_http_request *req,
                                struct sg_http_response *resp);

struct sg_httpsrv_config {
    const char *bind_addr;    /* IPv4 or IPv6 literal; NULL = 127.0.0.1 */
    uint16_t port;            /* 0 picks a free port; see sg_httpsrv_port() */
    size_t max_body;          /* bytes; larger bodies get 413 */
    unsigned max_connections; /* concurrent connections (threads) */
    unsigned timeout_s;       /* idle connection timeout */
};

/* Start serving. On success *ret_srv is owned by the caller (stop with
 * sg_httpsrv_stop()). */
int sg_httpsrv_start(const struct sg_httpsrv_config *cfg, sg_http_handler handler, void *ctx,
                     struct sg_httpsrv **ret_srv, struct sg_error *err);

/* The port actually bound (useful with port 0). */
uint16_t sg_httpsrv_port(const struct sg_httpsrv *srv);

/* Stop accepting new connections (the listening socket is closed); requests
 * on connections already open are still served. Call it first to drain, then
 * sg_httpsrv_stop() once in-flight work is done. NULL is a no-op. */
void sg_httpsrv_quiesce(struct sg_httpsrv *srv);

/* Stop accepting, wait for in-flight handlers to finish, free. NULL is a no-op. */
void sg_httpsrv_stop(struct sg_httpsrv *srv);

/* Request header lookup (case-insensitive); borrowed, NULL when absent. */
const char *sg_http_header(const struct sg_http_request *req, const char *name);

/* Query-string argument lookup; borrowed, NULL when absent. */
const char *sg_http_query(const struct sg_http_request *req, const char *name);

/* Add a response header (name must be a static string); ignored past the cap. */
void sg_http_add_header(struct sg_http_response *resp, const char *name, const char *value);

/* Set a JSON error body {"error":{"code","message"}} with the given status. */
void sg_http_error(struct sg_http_response *resp, int status, const char *code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
