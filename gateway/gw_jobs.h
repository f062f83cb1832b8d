/* gw_jobs.h - the job endpoints: POST /run, /v1/run, /v1/analyze.
 *
 * Pipeline per request: authenticate -> rate limit -> validate the body ->
 * select the policy -> analyse -> (reject | answer the analysis | forward to
 * an executor) -> audit line + metrics. Nothing reaches the analyzer before
 * validation passed, and nothing reaches an executor unless the analysis
 * accepted it; the executor gets exactly the decoded bytes that were checked.
 */
#ifndef SG_GW_JOBS_H
#define SG_GW_JOBS_H

#include "gw_audit.h"
#include "gw_config.h"
#include "gw_metrics.h"
#include "gw_ratelimit.h"
#include "gw_router.h"
#include "gw_ruleset.h"
#include "gw_tenants.h"
#include "httpsrv.h"
#include "verdict_cache.h"

/* What the job pipeline uses, all borrowed from the server that owns them. */
struct gw_jobs {
    const struct gw_config *cfg;
    struct gw_ruleset_slot *rules;
    struct gw_router *router;
    struct gw_audit *audit;
    struct gw_metrics *metrics;
    struct gw_ratelimit *ratelimit;
    struct sg_vcache *vcache; /* NULL: no verdict cache */
};

/* Handle one job request (ep is GW_EP_RUN, GW_EP_V1_RUN or GW_EP_V1_ANALYZE). */
void gw_jobs_handle(const struct gw_jobs *g, enum gw_endpoint ep,
                    const struct sg_http_request *req, struct sg_http_response *resp);

/* A request answered before any pipeline ran (routing, authentication, the
 * HTTP layer's own refusals): add its X-Request-Id, write its audit line and
 * count it, like any job. tenant may be NULL. */
void gw_jobs_refused(const struct gw_jobs *g, enum gw_endpoint ep, const struct gw_tenant *tenant,
                     const struct sg_http_request *req, struct sg_http_response *resp);

#endif
