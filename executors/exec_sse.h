/* exec_sse.h - the executor's streamed answers (PROTOCOL.md): a one-shot
 * job's and a session cell's. The runner's stream frames become stdout /
 * stderr events, heartbeats are ": hb" comments, and the answer's JSON body
 * is the final result event. The stream (common/httpsrv.h) is the caller's;
 * exec_sse_result ends it.
 */
#ifndef SG_EXEC_SSE_H
#define SG_EXEC_SSE_H

#include <jansson.h>

#include "httpsrv.h"

/* A streamed job or cell sends a comment this often when it has nothing else to
 * send, so that a client (and the gateway) sees a live connection. */
#define EXEC_STREAM_HEARTBEAT_MS 2000u

/* One event; data is one line of compact JSON. 0 or negative (the client
 * went). */
int exec_sse_event(struct sg_http_stream *st, const char *event, const char *data);

/* job_hooks.frame / .heartbeat with ud the stream. */
int exec_sse_frame(void *ud, const char *name, json_t *text);
int exec_sse_heartbeat(void *ud);

/* The streamed answer's end: j (consumed) as the final result event, then
 * the stream ends. */
void exec_sse_result(struct sg_http_stream *st, json_t *j);

#endif
