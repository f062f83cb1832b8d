/* exec_sse.c - the executor's streamed answers (exec_sse.h). */
#include "exec_sse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"

/* One Server-Sent Event; data is one line of compact JSON, of any length
 * (a result carrying max_output_bytes of output and artifacts is larger
 * than the stream's buffer: it is written as the client reads, not copied). */
int exec_sse_event(struct sg_http_stream *st, const char *event, const char *data)
{
    char head[64];
    int n = snprintf(head, sizeof(head), "event: %s\ndata: ", event);
    if (n < 0 || (size_t)n >= sizeof(head))
        return -EINVAL;
    int r = sg_http_stream_write(st, head, (size_t)n);
    if (r == 0)
        r = sg_http_stream_write(st, data, strlen(data));
    if (r == 0)
        r = sg_http_stream_write(st, "\n\n", 2);
    return r;
}

int exec_sse_frame(void *ud, const char *name, json_t *text)
{
    json_t *o = json_pack("{s:O}", "text", text);
    char *data = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    int r = data ? exec_sse_event(ud, name, data) : -ENOMEM;
    free(data);
    return r;
}

int exec_sse_heartbeat(void *ud)
{
    static const char hb[] = ": hb\n\n";
    return sg_http_stream_write(ud, hb, sizeof(hb) - 1);
}

static int stream_sink(void *ctx, const char *data, size_t len)
{
    return sg_http_stream_write(ctx, data, len);
}

void exec_sse_result(struct sg_http_stream *st, json_t *j)
{
    static const char head[] = "event: result\ndata: ";
    /* encoded into the stream as it is written: no copy of the answer */
    if (j && sg_http_stream_write(st, head, sizeof(head) - 1) == 0)
        json_out_dump(j, JSON_COMPACT, "\n\n", stream_sink, st);
    json_decref(j);
    sg_http_stream_end(st);
}
