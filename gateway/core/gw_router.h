/* gw_router.h - routing accepted jobs to executors (POST /v1/exec, libcurl).
 *
 * Per language, a list of executor base URLs; a discovery URL
 * (http://tasks.SERVICE:PORT, dns+http://NAME:PORT; gw_discover.h) stands for
 * every address its name resolves to, re-resolved on each health round, so
 * executors that join or leave are used or dropped without a reload (a
 * dropped one's in-flight jobs finish). Each job goes to the next
 * healthy executor in round-robin order. A background thread checks every
 * executor's GET /healthz (all in parallel, bounded by the connect timeout)
 * every health_interval_ms; a connect failure during a job marks the executor
 * down at once.
 *
 * Failover never runs a job twice: another executor is tried only when the
 * first could not have started the job, i.e. the connection was never made
 * (refused, unresolvable, connect timeout) or the executor answered 503
 * pool_busy (the protocol says the job did not run; at most busy_retries
 * times). Any failure after the request was sent (timeout, reset, a bad
 * answer) ends the job with GW_EXEC_FAILED. Each job goes over a new
 * connection: on a reused one libcurl would re-send a request the executor
 * may have started, and idle pooled connections would hold executor slots.
 *
 * Each executor URL has a cap on in-flight jobs: the smaller of
 * executor_max_inflight and the max_jobs its /healthz advertises; when every
 * candidate is at its cap or busy the outcome is GW_EXEC_BUSY (503). Callers
 * block on their own handler thread, so a slow executor delays only its own
 * jobs. Thread-safe.
 */
#ifndef SG_GW_ROUTER_H
#define SG_GW_ROUTER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "gw_config.h"
#include "gw_discover.h"
#include "gw_relay.h"
#include "sg_error.h"
#include "sg_lang.h"

struct sg_membudget;

/* Executors per language the router tracks at once: the static URLs plus the
 * addresses discovery found (more are dropped with a discovery_full log). */
#define GW_ROUTER_SLOTS_MAX 32
#define GW_EXEC_RESPONSE_MAX (64u * 1024u * 1024u) /* bytes of one executor answer */
#define GW_BOOT_ID_MAX 32 /* an executor's boot id (its /healthz, for sessions) */

enum gw_exec_outcome {
    GW_EXEC_OK = 0,      /* the executor answered HTTP 200; body is its JSON */
    GW_EXEC_UNREACHABLE, /* no executor could be connected to (502) */
    GW_EXEC_BUSY,        /* every executor saturated or pool_busy (503) */
    GW_EXEC_FAILED,      /* failed after the job was sent: timeout, reset, bad answer (502) */
};

struct gw_exec_result {
    enum gw_exec_outcome outcome;
    long http_status; /* the executor's status, 0 when none */
    char *body;       /* owned; the executor's answer (NUL-terminated), may be NULL */
    size_t body_len;
    char executor[GW_URL_MAX]; /* the executor that took (or last refused) the job */
    char message[256];         /* why, for non-OK outcomes */
    unsigned attempts;
    int client_gone; /* a streamed job's client went away (the job was abandoned) */
    /* The answer did not fit in the gateway's memory budget (gw_answer.h):
     * the transfer was aborted after the executor took the call (a job ran),
     * outcome GW_EXEC_BUSY, never failed over. */
    int over_budget;
    struct sg_membudget *budget; /* where mem is owed back (gw_exec_result_free) */
    size_t mem;                  /* budget bytes the answer holds */
};

struct gw_router;

/* Build the router from cfg (executor URLs, timeouts, caps) and the shared
 * secret for executors (may be NULL). Runs one health round before returning,
 * then starts the checker thread. Caller frees with gw_router_free(). */
int gw_router_new(const struct gw_config *cfg, const char *executor_token, struct gw_router **ret,
                  struct sg_error *err);

void gw_router_free(struct gw_router *r);

/* Count every job's and session call's answer in budget (gw_answer.h) from
 * now on (NULL: not counted). Call before the first request. */
void gw_router_set_budget(struct gw_router *r, struct sg_membudget *budget);

/* Send one job (a JSON body) for language lang with a total time budget of
 * timeout_ms. Fills *ret (release with gw_exec_result_free()). hooks (may be
 * NULL) hear of each attempt and, when hooks->event is set, the job is
 * streamed (gw_relay.h): ret->body is then the result event's data, and a
 * client that went away ends it as GW_EXEC_FAILED with ret->client_gone. */
void gw_router_exec(struct gw_router *r, enum sg_lang lang, const char *body, size_t len,
                    uint64_t timeout_ms, const struct gw_exec_hooks *hooks,
                    struct gw_exec_result *ret);

/* POST {executor}/v1/exec/{job_id}/cancel (executor: a base URL the router
 * knows). 0 with the executor's HTTP status in *ret_status, or -ENOENT (not
 * an executor of this router) / -EIO (no answer). */
int gw_router_cancel(struct gw_router *r, const char *executor, const char *job_id,
                     long *ret_status);

/* Free the answer and release its reservation (res->mem). */
void gw_exec_result_free(struct gw_exec_result *res);

/* GET path (e.g. "/v1/runtime") from the first healthy executor of lang that
 * answers 200 (with the executor secret), within timeout_ms each. ret as
 * for gw_router_exec(); free with gw_exec_result_free(). */
void gw_router_get(struct gw_router *r, int lang, const char *path, uint64_t timeout_ms,
                   struct gw_exec_result *ret);

/* One call on the session API of the executors (executors/PROTOCOL.md). */
struct gw_session_call {
    const char *boot;   /* the executor's boot id (from the session id); NULL: a new
                           session, sent to the next healthy executor */
    const char *method; /* "GET", "POST", "PUT", "DELETE" */
    const char *path;   /* "/v1/sessions/..." */
    const char *tenant; /* X-Sandgate-Tenant */
    const char *body;   /* may be NULL */
    size_t len;
    uint64_t timeout_ms;
    /* a streamed cell's hooks (gw_relay.h; event set: the answer is an
     * event stream); NULL: a plain call */
    const struct gw_exec_hooks *hooks;
};

/* Send c to the executor of lang whose /healthz boot id is c->boot, never to
 * any other (a boot id only selects among the executors the router knows;
 * none matching: GW_EXEC_UNREACHABLE). ret->outcome is GW_EXEC_OK whenever
 * the executor answered (its status in ret->http_status, body as is). */
void gw_router_session(struct gw_router *r, int lang, const struct gw_session_call *c,
                       struct gw_exec_result *ret);

/* GET /v1/sessions on every healthy executor: the tenant's sessions (each
 * with "language" added), and in *ret_open how many are open. Caller owns. */
json_t *gw_router_sessions_list(struct gw_router *r, const char *tenant, uint64_t timeout_ms,
                                unsigned *ret_open);

/* Healthy executors of a language right now. */
size_t gw_router_healthy(struct gw_router *r, int lang);

/* {"python": [{"url","healthy","inflight"}...], "nodejs": [...]}; caller owns. */
json_t *gw_router_status(struct gw_router *r);

/* The console's Overview (GET /v1/overview): per executor
 * {"language", "healthy", "jobs_in_flight" (the gateway's count), "limit",
 *  "pools" (gw_overview_pools() of its last /healthz, or null), and "url"
 *  when with_urls}, from the last health round; never asks an executor.
 * Caller owns. */
json_t *gw_router_overview(struct gw_router *r, int with_urls);

/* Append executor gauges/counters in Prometheus text. */
int gw_router_render_metrics(struct gw_router *r, struct sg_buf *out);

/* Run one health round now (tests, and start-up): re-resolve the discovery
 * URLs, then check every executor. */
void gw_router_check_now(struct gw_router *r);

/* Replace the resolver of discovery URLs (tests; NULL restores the system's).
 * Takes effect from the next round. */
void gw_router_set_resolver(struct gw_router *r, gw_resolve_fn fn, void *ud);

#endif
