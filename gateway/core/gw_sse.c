#include "gw_sse.h"

#include <errno.h>
#include <string.h>

#define PREFIX_EVENT "event: "
#define PREFIX_DATA "data: "

void gw_sse_init(struct gw_sse *p, size_t max_data)
{
    memset(p, 0, sizeof(*p));
    /* a line holds "data: " and the data */
    sg_buf_init(&p->line, max_data + sizeof(PREFIX_DATA));
    sg_buf_init(&p->data, max_data);
}

void gw_sse_free(struct gw_sse *p)
{
    sg_buf_free(&p->line);
    sg_buf_free(&p->data);
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n > GW_SSE_EVENT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'a' || s[i] > 'z')
            return 0;
    return 1;
}

static int has_prefix(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* One complete line (without its "\n"). */
static int take_line(struct gw_sse *p, const char *s, size_t n, gw_sse_fn fn, void *ud)
{
    if (n == 0) { /* the end of an event */
        if (!p->has_data)
            return p->event[0] ? -EPROTO : 0; /* a name without data */
        int r = fn(ud, p->event[0] ? p->event : "message", p->data.data ? p->data.data : "",
                   p->data.len);
        p->event[0] = '\0';
        p->has_data = 0;
        sg_buf_reset(&p->data);
        return r;
    }
    if (s[0] == ':')
        return p->event[0] || p->has_data ? -EPROTO : fn(ud, NULL, NULL, 0);
    if (has_prefix(s, n, PREFIX_EVENT)) {
        size_t k = strlen(PREFIX_EVENT);
        if (p->event[0] || p->has_data || !name_ok(s + k, n - k))
            return -EPROTO;
        memcpy(p->event, s + k, n - k);
        p->event[n - k] = '\0';
        return 0;
    }
    if (has_prefix(s, n, PREFIX_DATA)) {
        size_t k = strlen(PREFIX_DATA);
        if (p->has_data || memchr(s + k, '\r', n - k) || memchr(s + k, '\0', n - k))
            return -EPROTO;
        p->has_data = 1;
        return sg_buf_append(&p->data, s + k, n - k) < 0 ? -E2BIG : 0;
    }
    return -EPROTO;
}

int gw_sse_feed(struct gw_sse *p, const char *buf, size_t len, gw_sse_fn fn, void *ud)
{
    if (p->failed)
        return -EPROTO;
    while (len > 0) {
        const char *nl = memchr(buf, '\n', len);
        size_t take = nl ? (size_t)(nl - buf) : len;
        if (sg_buf_append(&p->line, buf, take) < 0) {
            p->failed = 1;
            return -E2BIG;
        }
        if (!nl)
            return 0;
        int r = take_line(p, p->line.data ? p->line.data : "", p->line.len, fn, ud);
        sg_buf_reset(&p->line);
        if (r < 0) {
            p->failed = 1;
            return r;
        }
        buf = nl + 1;
        len -= take + 1;
    }
    return 0;
}

int gw_sse_idle(const struct gw_sse *p)
{
    return !p->failed && p->line.len == 0 && !p->has_data && !p->event[0];
}
