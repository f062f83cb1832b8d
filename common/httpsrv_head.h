/* httpsrv_head.h - the strict checks of a request's head that libmicrohttpd
 * 0.9.75 does not make itself, part of common/httpsrv.c.
 *
 * libmicrohttpd keeps a header value up to its first NUL byte and drops the
 * rest, takes several spaces in the request line, a NUL inside the method or
 * the target, folded header lines and any target length up to its buffer.
 * These checks find each of them, mostly in the library's own read buffer,
 * where the head is still in place as received (CR and LF overwritten with
 * NULs). They run on an event thread and never block.
 */
#ifndef SG_HTTPSRV_HEAD_H
#define SG_HTTPSRV_HEAD_H

#include <stddef.h>

#define SG_HTTP_MAX_TARGET (8u * 1024u) /* the request target; past it 414 */
#define SG_HTTP_MAX_HEAD (16u * 1024u)  /* request line + headers; past it 431 */

struct MHD_Connection;

/* The request target as MHD's URI log callback sees it: before MHD splits off
 * the query and unescapes it in place. raw points into MHD's read buffer and
 * is only compared as an address afterwards. */
struct sg_http_target {
    const char *raw;     /* NULL: none seen */
    size_t len;          /* strlen(raw) at that moment */
    const char *problem; /* a space, control byte or %00 in it; NULL when none */
};

/* Record the target (uri may be NULL) in *ret. */
void sg_http_target_take(const char *uri, struct sg_http_target *ret);

/* What is wrong with a head: status (400, 414, 431), error code, message. */
struct sg_http_head_verdict {
    int status;
    const char *code; /* static */
    const char *msg;  /* static */
};

/* The request line and header block of the request on conn, whose method and
 * version are the pointers MHD passed to the access handler. Returns 0 when
 * sound, else -EINVAL with *ret filled. */
int sg_http_head_check(struct MHD_Connection *conn, const char *method, const char *version,
                       const struct sg_http_target *target, struct sg_http_head_verdict *ret);

#endif
