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

#include "gw_metrics.h"
#include "gw_server.h"
#include "gw_tenants.h"
#include "httpsrv.h"

/* Handle one job request (ep is GW_EP_RUN, GW_EP_V1_RUN or GW_EP_V1_ANALYZE). */
void gw_jobs_handle(struct gw_server *s, enum gw_endpoint ep, const struct sg_http_request *req,
                    struct sg_http_response *resp);

/* Resolve the request's tenant under rs. Returns 0 with *ret_tenant (NULL
 * when auth is off) or -EACCES after filling resp with 401. */
int gw_jobs_authenticate(const struct gw_ruleset *rs, const struct sg_http_request *req,
                         struct sg_http_response *resp, const struct gw_tenant **ret_tenant);

#endif
