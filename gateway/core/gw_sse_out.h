/* gw_sse_out.h - Server-Sent Events to the gateway's own client: the
 * streamed POST /v1/run and the MCP endpoint's streamed tools/call.
 *
 * Begins a streamed answer (common/httpsrv.h) on the request's worker,
 * writes events ("event: NAME\ndata: JSON\n\n": data is one line of compact
 * JSON), a ": hb" comment when nothing was sent for GW_SSE_HEARTBEAT_MS, and
 * says when the client has gone. Not thread-safe: one worker owns it.
 */
#ifndef SG_GW_SSE_OUT_H
#define SG_GW_SSE_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "httpsrv.h"

#define GW_SSE_HEARTBEAT_MS 2000u

struct gw_sse_out {
    struct sg_http_stream *st; /* NULL until begun */
    uint64_t last_write_ns;
};

/* Begin the stream on req (the request the worker handles, not a copy) with
 * head's extra headers; 200, text/event-stream. 0 (also when already begun)
 * or -ENOMEM. */
int gw_sse_out_begin(struct gw_sse_out *o, const struct sg_http_request *req,
                     const struct sg_http_response *head);

/* One event; 0 or -EPIPE (the client went). */
int gw_sse_out_event(struct gw_sse_out *o, const char *name, const char *data, size_t len);

/* The idle check: -EPIPE when the client went, else a heartbeat when one is
 * due; 0 when not begun. */
int gw_sse_out_idle(struct gw_sse_out *o);

/* The client's socket to poll for a hang-up, -1 when not begun. */
int gw_sse_out_fd(const struct gw_sse_out *o);

/* End the stream (no-op when not begun). */
void gw_sse_out_end(struct gw_sse_out *o);

/* A streamed request's end: resp's body (the non-streamed answer) as the
 * final result event, then the end. An answer made before the stream began
 * (a policy rejection) is streamed as that one event, begun with head's
 * headers; one that is not a 200 keeps its status code (resp as it is). A
 * 499 (the client went) sends no event. */
void gw_sse_out_finish(struct gw_sse_out *o, const struct sg_http_request *req,
                       const struct sg_http_response *head, const struct sg_http_response *resp);

#endif
