/* gw_server.h - the sandgate gateway: HTTP endpoints, lifecycle, reload, drain.
 *
 * Endpoints: POST /run (RAGFlow), POST /v1/run, POST /v1/analyze,
 * GET /healthz, GET /readyz, GET /metrics, GET /v1/policies, POST/DELETE
 * /mcp. The job endpoints live in gw_jobs.c, MCP in gw_mcp.c; this module
 * routes, authenticates the
 * informational ones, and owns the shared state below.
 */
#ifndef SG_GW_SERVER_H
#define SG_GW_SERVER_H

#include <stdatomic.h>
#include <stdint.h>

#include "gw_audit.h"
#include "gw_audit_api.h"
#include "gw_audit_index.h"
#include "gw_config.h"
#include "gw_console.h"
#include "gw_dify.h"
#include "gw_jobs.h"
#include "gw_mcp.h"
#include "gw_sessions.h"
#include "gw_metrics.h"
#include "gw_ratelimit.h"
#include "gw_router.h"
#include "gw_ruleset.h"
#include "httpsrv.h"
#include "membudget.h"
#include "verdict_cache.h"

struct gw_server {
    struct gw_config cfg;
    struct gw_ruleset_slot rules;
    struct gw_router *router;
    struct gw_audit *audit;
    struct gw_metrics *metrics;
    struct gw_ratelimit *ratelimit;
    struct sg_vcache *vcache; /* NULL when analysis_cache_entries is 0 */
    struct sg_httpsrv *http;
    struct sg_membudget budget;  /* what requests may hold at once (membudget.h) */
    struct gw_services jobs;     /* borrowed views of the above for gw_jobs.c */
    struct gw_mcp *mcp;          /* POST/DELETE /mcp */
    struct gw_jobtab *jobtab;    /* jobs in flight, for cancel */
    struct gw_sessions sessions; /* /v1/sessions... */
    struct gw_dify dify;         /* Dify's sandbox API, its own listener (dify_port) */
    pthread_mutex_t reload_lock; /* one reload at a time */
    atomic_uint inflight;        /* handlers running now */
    atomic_int draining;
    atomic_uint_fast64_t reloads_ok, reloads_failed;

    struct gw_audit_index *audit_index; /* NULL when audit_index is off */
    struct gw_audit_api audit_api;      /* GET /v1/audit... */
    struct gw_console *console;         /* GET /console/... */
};

/* Build everything from cfg (already validated): rules, router (one health
 * round), audit writer, metrics. Does not listen yet. Caller frees with
 * gw_server_free(). */
int gw_server_new(const struct gw_config *cfg, struct gw_server **ret, struct sg_error *err);

/* Start listening on cfg.listen:cfg.port. */
int gw_server_listen(struct gw_server *s, struct sg_error *err);

uint16_t gw_server_port(const struct gw_server *s);

/* Reload policies and tokens atomically; on error the old set stays. */
int gw_server_reload(struct gw_server *s, struct sg_error *err);

/* Stop accepting, wait up to cfg.drain_timeout_ms for in-flight requests,
 * then stop the listener. Returns the requests still running (0 = clean). */
unsigned gw_server_drain(struct gw_server *s);

/* NULL is a no-op. Stops the listener if still running. */
void gw_server_free(struct gw_server *s);

/* What `sandgate -t` checks: the rules (policies, tokens), the executor token
 * file and that the audit log can be opened for appending. */
int gw_server_check(const struct gw_config *cfg, struct sg_error *err);

/* The handlers registered with httpsrv (exposed for tests). */
void gw_server_handle(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp);
enum sg_http_head gw_server_head(void *ctx, const struct sg_http_request *req,
                                 struct sg_http_response *resp);
/* The sg_httpsrv get_on_worker hook: GETs that wait on an executor. */
bool gw_server_get_on_worker(void *ctx, const struct sg_http_request *req);

void gw_server_refused(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp);

#endif
