#include "gw_sse_out.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gw_util.h"

#define SSE_HEARTBEAT ": hb\n\n"
#define SSE_EVENT_SLACK 64 /* "event: NAME\ndata: " and the blank line */

static int out_write(struct gw_sse_out *o, const char *text, size_t len)
{
    if (sg_http_stream_write(o->st, text, len) < 0)
        return -EPIPE;
    o->last_write_ns = gw_now_ns();
    return 0;
}

int gw_sse_out_begin(struct gw_sse_out *o, const struct sg_http_request *req,
                     const struct sg_http_response *head)
{
    if (o->st)
        return 0;
    struct sg_http_response h = *head;
    h.status = 200;
    h.content_type = "text/event-stream";
    o->st = sg_http_stream_begin(req, &h);
    o->last_write_ns = gw_now_ns();
    return o->st ? 0 : -ENOMEM;
}

int gw_sse_out_event(struct gw_sse_out *o, const char *name, const char *data, size_t len)
{
    if (!o->st)
        return -EPIPE;
    char head[SSE_EVENT_SLACK];
    int n = snprintf(head, sizeof(head), "event: %s\ndata: ", name);
    if (n < 0 || (size_t)n >= sizeof(head))
        return -EINVAL;
    /* in three writes: a result event may be larger than the stream's
     * buffer (httpsrv.h), and is not copied */
    int r = out_write(o, head, (size_t)n);
    if (r == 0)
        r = out_write(o, data, len);
    if (r == 0)
        r = out_write(o, "\n\n", 2);
    return r;
}

int gw_sse_out_idle(struct gw_sse_out *o)
{
    if (!o->st)
        return 0;
    if (sg_http_stream_gone(o->st))
        return -EPIPE;
    if (gw_now_ns() - o->last_write_ns >= (uint64_t)GW_SSE_HEARTBEAT_MS * 1000000u)
        return out_write(o, SSE_HEARTBEAT, strlen(SSE_HEARTBEAT));
    return 0;
}

int gw_sse_out_fd(const struct gw_sse_out *o)
{
    return o->st ? sg_http_stream_fd(o->st) : -1;
}

void gw_sse_out_end(struct gw_sse_out *o)
{
    sg_http_stream_end(o->st);
    o->st = NULL;
}

void gw_sse_out_finish(struct gw_sse_out *o, const struct sg_http_request *req,
                       const struct sg_http_response *head, const struct sg_http_response *resp)
{
    if (!o->st && (resp->status != 200 || !resp->body || gw_sse_out_begin(o, req, head) < 0))
        return;
    if (resp->body && resp->status != 499)
        gw_sse_out_event(o, "result", resp->body,
                         resp->body_len ? resp->body_len : strlen(resp->body));
    gw_sse_out_end(o);
}
