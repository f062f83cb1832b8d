/* json_out.c - JSON values written out without a second whole copy (json_out.h). */
#include "json_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gather {
    json_out_sink sink;
    void *ctx;
    char *chunk;
    size_t len;
    int err; /* the sink's first failure: jansson only sees -1 */
};

static int flush(struct gather *g)
{
    int r = g->len ? g->sink(g->ctx, g->chunk, g->len) : 0;
    g->len = 0;
    if (r < 0)
        g->err = r;
    return r;
}

static int piece(const char *buffer, size_t size, void *data)
{
    struct gather *g = data;
    if (g->len + size <= JSON_OUT_CHUNK) {
        memcpy(g->chunk + g->len, buffer, size);
        g->len += size;
        return 0;
    }
    if (flush(g) < 0)
        return -1;
    if (size < JSON_OUT_CHUNK)
        return piece(buffer, size, data);
    int r = g->sink(g->ctx, buffer, size);
    if (r < 0)
        g->err = r;
    return r < 0 ? -1 : 0;
}

int json_out_dump(const json_t *j, size_t flags, const char *tail, json_out_sink sink, void *ctx)
{
    struct gather g = {.sink = sink, .ctx = ctx};
    if (!j)
        return -EINVAL;
    if (!(g.chunk = malloc(JSON_OUT_CHUNK)))
        return -ENOMEM;
    int r = json_dump_callback(j, piece, &g, flags);
    if (r == 0 && tail && tail[0])
        r = piece(tail, strlen(tail), &g);
    if (r == 0)
        r = flush(&g);
    free(g.chunk);
    return r == 0 ? 0 : g.err ? g.err : -EINVAL;
}

char *json_out_exact(const json_t *j, size_t flags, size_t *ret_len)
{
    size_t n = j ? json_dumpb(j, NULL, 0, flags) : 0;
    char *out = n ? malloc(n + 1) : NULL;
    if (!out || json_dumpb(j, out, n, flags) != n) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    if (ret_len)
        *ret_len = n;
    return out;
}
