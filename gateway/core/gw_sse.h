/* gw_sse.h - the parser of an executor's event stream (POST /v1/exec with
 * "stream": true, executors/PROTOCOL.md).
 *
 * Why hand-written: this is sandgate's own wire format, a strict subset of
 * Server-Sent Events that the executor writes (lines end in "\n"; an event is
 * at most one "event: NAME" line and exactly one "data: JSON" line, then a
 * blank line; ": ..." lines are heartbeats), so the parser can refuse
 * anything else instead of guessing; libcurl has no SSE parser and Debian
 * packages no maintained C one. A pure function over untrusted bytes, fed in
 * pieces of any size; fuzzed in tests/fuzz/fuzz_sse.c.
 */
#ifndef SG_GW_SSE_H
#define SG_GW_SSE_H

#include <stddef.h>

#include "buf.h"

#define GW_SSE_EVENT_NAME_MAX 16 /* [a-z] only */

/* One complete event (event NULL: a heartbeat comment; data then NULL).
 * data is NUL-terminated, len bytes, borrowed for the call. A negative
 * return stops the parser and is returned by gw_sse_feed(). */
typedef int (*gw_sse_fn)(void *ud, const char *event, const char *data, size_t len);

struct gw_sse {
    struct sg_buf line; /* the line being read, capped */
    char event[GW_SSE_EVENT_NAME_MAX + 1];
    struct sg_buf data; /* the event's data, capped */
    int has_data;
    int failed; /* a malformed stream: every later feed fails too */
};

/* Initialise with the cap on one event's data (and so on one line), > 0. */
void gw_sse_init(struct gw_sse *p, size_t max_data);
void gw_sse_free(struct gw_sse *p);

/* Feed len bytes. 0, -EPROTO (not the executor's format), -E2BIG (an event
 * over the cap), or fn's negative return. */
int gw_sse_feed(struct gw_sse *p, const char *buf, size_t len, gw_sse_fn fn, void *ud);

/* 1 when the bytes so far end between events (nothing half-read). */
int gw_sse_idle(const struct gw_sse *p);

#endif
