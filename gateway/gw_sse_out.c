#include "gw_sse_out.h"

#include <errno.h>
#include <string.h>

#include "buf.h"
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
    struct sg_buf b;
    sg_buf_init(&b, len + SSE_EVENT_SLACK);
    int r = sg_buf_printf(&b, "event: %s\ndata: ", name);
    if (r == 0)
        r = sg_buf_append(&b, data, len);
    if (r == 0)
        r = sg_buf_append(&b, "\n\n", 2);
    if (r == 0)
        r = out_write(o, b.data, b.len);
    sg_buf_free(&b);
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
