/* gw_relay.h - one streamed job request to an executor (POST /v1/exec with
 * "stream": true): the executor's events go to the caller's hooks as they
 * arrive, its final result event becomes the answer body, and the caller's
 * client is watched so that a hang-up aborts the request at once (the
 * executor then sees its client go and destroys the sandbox).
 *
 * Runs the transfer with libcurl's multi interface on the calling (worker)
 * thread, waking at least every GW_RELAY_TICK_MS for the hooks' idle check
 * (heartbeats, hang-up), and at once when the client's socket signals.
 */
#ifndef SG_GW_RELAY_H
#define SG_GW_RELAY_H

#include <curl/curl.h>

#include "gw_answer.h"

#define GW_RELAY_TICK_MS 200

/* What a job may be told while it runs (all members optional). */
struct gw_exec_hooks {
    /* before each attempt: the executor (base URL) about to get the job */
    void (*attempt)(void *ud, const char *executor);
    /* Streamed jobs (event != NULL): the executor began its event stream
     * (HTTP 200, text/event-stream); negative aborts. */
    int (*start)(void *ud);
    /* one stdout / stderr event; data is its JSON text; negative aborts */
    int (*event)(void *ud, const char *name, const char *data, size_t len);
    /* every GW_RELAY_TICK_MS and when the client's socket signals;
     * negative aborts (the client went) */
    int (*idle)(void *ud);
    /* the client's socket to watch for a hang-up, -1 none (yet) */
    int (*client_fd)(void *ud);
    void *ud;
    /* budget bytes the caller reserved for the answer already (gw_answer.h) */
    size_t answer_paid;
};

enum gw_relay_end {
    GW_RELAY_DONE = 0,   /* the transfer ended (see rc; body holds the answer) */
    GW_RELAY_ABORTED,    /* a hook said stop: the client went */
    GW_RELAY_NO_RESULT,  /* the event stream ended without a result event */
    GW_RELAY_BAD_STREAM, /* the event stream was malformed or over the cap */
};

/* Perform the prepared request c (URL, body, headers set; its write
 * function is replaced). body receives a non-streamed answer as it is, or
 * the result event's data, each counted in its budget (a refusal ends the
 * transfer with body->refused set). *ret_rc is libcurl's result of the
 * transfer. */
enum gw_relay_end gw_relay_perform(CURL *c, const struct gw_exec_hooks *h, struct gw_answer *body,
                                   CURLcode *ret_rc);

#endif
