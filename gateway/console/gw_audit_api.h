/* gw_audit_api.h - the console's read endpoints (docs/api.md): GET /v1/audit,
 * GET /v1/audit/{request_id} and GET /v1/policies/{name}.
 *
 * Reads the audit index (gw_audit_index.h); never the log. A tenant sees its
 * own lines; a tenant marked "admin" in the tokens file (or every caller when
 * the gateway runs without a tokens file, loopback only) sees all tenants and
 * may filter by tenant. Another tenant's request id answers 404, as an
 * unknown one does. Each call is rate limited as the tenant's jobs are and
 * writes its own audit line (endpoint "console"); the list leaves those lines
 * out unless asked for with endpoint=console.
 *
 * Queries run on a worker thread (gw_server_get_on_worker) with a time
 * budget; pages are newest first, GW_AUDIT_API_PAGE_MAX at most, and the
 * cursor is the opaque next_cursor of the previous page.
 */
#ifndef SG_GW_AUDIT_API_H
#define SG_GW_AUDIT_API_H

#include <stdbool.h>

#include "gw_audit.h"
#include "gw_audit_index.h"
#include "gw_config.h"
#include "gw_ratelimit.h"
#include "gw_router.h"
#include "gw_ruleset.h"
#include "httpsrv.h"

#define GW_AUDIT_API_PAGE_DEFAULT 50
#define GW_AUDIT_API_PAGE_MAX 200
#define GW_AUDIT_API_QUERY_MS 3000 /* a query running longer is stopped (503) */
#define GW_AUDIT_API_VALUE_MAX 256 /* longest filter value */

/* Borrowed views of the server's state; index NULL when audit_index is off. */
struct gw_audit_api {
    const struct gw_config *cfg;
    struct gw_ruleset_slot *rules;
    struct gw_audit_index *index;
    struct gw_ratelimit *ratelimit;
    struct gw_audit *audit;
    struct gw_router *router;
};

/* GET /v1/audit/summary: the last hour per minute (gw_audit_summary.h), of
 * the caller's tenant (an admin's: all, or ?tenant=).
 * GET /v1/policies/{name} answers the validated document of one policy the
 * caller may use (its allowed policies and its default; every policy
 * without a tokens file), else 404 policy_not_found.
 */
/* GET /v1/overview: the executors' warm pools per flavour and the jobs and
 * sessions in flight, from the router's last health round
 * (gw_router_overview(); cached, never a request to an executor, answered
 * with the audit index off too): {"executors": [...], "jobs_in_flight",
 * "sessions_open"}. A tenant sees the same pools without the executors'
 * URLs; an admin sees the URLs too.
 */
/* 1 for /v1/audit, /v1/audit/{anything}, /v1/overview and
 * /v1/policies/{anything}. */
bool gw_audit_api_path(const char *url);

/* Answer a request whose path gw_audit_api_path() accepted (any method). */
void gw_audit_api_handle(const struct gw_audit_api *a, const struct sg_http_request *req,
                         struct sg_http_response *resp);

#endif
