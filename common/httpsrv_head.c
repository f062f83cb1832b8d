#include "httpsrv_head.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdint.h>
#include <string.h>

/* Bytes between the end of one line of the head (the request line's
 * version, a header's value) and the next header in libmicrohttpd's read
 * buffer: its CR LF turned into NULs; after the last line, the empty line's
 * CR LF too. A bare LF (which libmicrohttpd accepts) leaves one NUL less. */
#define LINE_GAP 2u
#define LAST_GAP 4u

void sg_http_target_take(const char *uri, struct sg_http_target *ret)
{
    *ret = (struct sg_http_target){0};
    if (!uri)
        return;
    ret->raw = uri;
    ret->len = strlen(uri);
    for (size_t i = 0; i < ret->len && !ret->problem; i++)
        if ((unsigned char)uri[i] <= ' ' || uri[i] == 0x7f)
            ret->problem = "a space or control character in the request target";
    if (!ret->problem && strstr(uri, "%00"))
        ret->problem = "an encoded NUL byte in the request target";
}

struct gap_scan {
    const char *lo, *hi;   /* the header block in MHD's read buffer */
    const char *prev_end;  /* end of the previous line: the version, then each value */
    unsigned bad, outside; /* a NUL inside a value; a header not in the block (folded line) */
};

/* [from, to) is exactly the n NULs MHD wrote over CR LF line ends. */
static int only_line_ends(const char *from, const char *to, size_t n)
{
    if (to < from || (size_t)(to - from) != n)
        return 0;
    for (; from < to; from++)
        if (*from)
            return 0;
    return 1;
}

static enum MHD_Result scan_gap(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    struct gap_scan *g = cls;
    (void)kind;
    if (key < g->lo || key >= g->hi || value < g->lo || value >= g->hi) {
        g->outside++;
        return MHD_NO;
    }
    if (!only_line_ends(g->prev_end, key, LINE_GAP))
        g->bad++;
    g->prev_end = value + strlen(value);
    return MHD_YES;
}

/* libmicrohttpd 0.9.75 stores a header value up to its first NUL and drops
 * the rest. The value's bytes are still in place in its read buffer (the
 * header block [method, method + header size)), so a NUL inside a value shows
 * as bytes other than the line end between that value's end and the next
 * header, and a line that ends in a bare LF as a gap one byte short. A header
 * stored elsewhere was rebuilt from a folded line (obs-fold), which a strict
 * server refuses too. Returns NULL, or what is wrong. */
static const char *check_nul(struct MHD_Connection *conn, const char *method, const char *version,
                             size_t head_size)
{
    struct gap_scan g = {method, method + head_size, version + strlen(version), 0, 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_gap, &g);
    if (g.outside)
        return "a folded header line";
    if (g.bad || !only_line_ends(g.prev_end, g.hi, LAST_GAP))
        return "a NUL byte in a header, or a line not ended by CR LF";
    return NULL;
}

static int verdict(struct sg_http_head_verdict *ret, int status, const char *code, const char *msg)
{
    *ret = (struct sg_http_head_verdict){status, code, msg};
    return -EINVAL;
}

int sg_http_head_check(struct MHD_Connection *conn, const char *method, const char *version,
                       const struct sg_http_target *target, struct sg_http_head_verdict *ret)
{
    if (target->len > SG_HTTP_MAX_TARGET)
        return verdict(ret, 414, "uri_too_long", "the request target is over the limit");
    if (target->problem)
        return verdict(ret, 400, "bad_http", target->problem);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!ci)
        return verdict(ret, 400, "bad_http", "the header block cannot be checked");
    if (ci->header_size > SG_HTTP_MAX_HEAD)
        return verdict(ret, 431, "headers_too_large", "the request headers are over the limit");
    /* In MHD's buffer the line is "METHOD\0TARGET\0VERSION": one space each,
     * and no NUL inside the method or the target (MHD would cut them there). */
    if (!target->raw || target->raw != method + strlen(method) + 1 ||
        version != target->raw + target->len + 1)
        return verdict(ret, 400, "bad_http", "a NUL byte or extra space in the request line");
    const char *why = check_nul(conn, method, version, ci->header_size);
    return why ? verdict(ret, 400, "bad_http", why) : 0;
}
