/* Fuzz the gateway's parser of an executor's event stream (gw_sse.h), fed in
 * pieces of a fuzzer-chosen size and with a fuzzer-chosen cap: every event
 * handed out has a name of [a-z] (or is a heartbeat), NUL-terminated data
 * within the cap, and a parser that failed keeps failing. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct limits {
    size_t cap;
    unsigned events;
};

static int check(void *ud, const char *event, const char *d, size_t len)
{
    struct limits *l = ud;
    if (!event) {
        if (d || len)
            abort();
        return 0;
    }
    size_t n = strlen(event);
    if (n == 0 || n > GW_SSE_EVENT_NAME_MAX || strspn(event, "abcdefghijklmnopqrstuvwxyz") != n)
        abort();
    if (len > l->cap || d[len] != '\0' || memchr(d, '\n', len) || memchr(d, '\r', len))
        abort();
    return ++l->events % 97 == 0 ? -ECANCELED : 0; /* the callback's verdict stops it too */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t step = (size_t)data[0] % 64 + 1;
    struct limits l = {.cap = (size_t)data[1] * 8 + 1}; /* sg_buf: 0 is its default cap */
    const char *d = (const char *)data + 2;
    size_t n = size - 2;
    struct gw_sse p;
    gw_sse_init(&p, l.cap);
    int failed = 0;
    for (size_t off = 0; off < n; off += step) {
        size_t len = off + step <= n ? step : n - off;
        int r = gw_sse_feed(&p, d + off, len, check, &l);
        if (failed && r != -EPROTO)
            abort();
        if (r < 0)
            failed = 1;
        if (r < 0 && r != -EPROTO && r != -E2BIG && r != -ECANCELED)
            abort();
    }
    if (failed && gw_sse_idle(&p))
        abort();
    gw_sse_free(&p);
    return 0;
}
