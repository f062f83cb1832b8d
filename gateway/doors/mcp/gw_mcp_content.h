/* gw_mcp_content.h - what the MCP tool modules share: the caller a tool call
 * serves, and the pipeline's answers as MCP content (CallToolResult), so the
 * code tools (gw_mcp_tools.h) and the session tools (gw_mcp_stools.h) answer
 * alike. The dependency runs one way: gw_mcp -> gw_mcp_tools ->
 * gw_mcp_stools -> gw_mcp_content. Results are new references (NULL on out
 * of memory).
 */
#ifndef SG_GW_MCP_CONTENT_H
#define SG_GW_MCP_CONTENT_H

#include <jansson.h>
#include <stdbool.h>

#include "gw_jobs.h"
#include "gw_ruleset.h"
#include "gw_sessions.h"
#include "gw_tenants.h"
#include "httpsrv.h"

/* GET /v1/runtimes for the request's caller (gw_info_runtimes), given by the
 * server so this module needs no server: fills resp like the endpoint. */
typedef void (*gw_mcp_runtimes_fn)(void *ctx, const struct sg_http_request *req,
                                   struct sg_http_response *resp);

/* Who calls, under which rules; all borrowed for one call. */
struct gw_mcp_caller {
    const struct gw_services *jobs;
    struct gw_sessions *code_sessions; /* NULL: no session tools */
    gw_mcp_runtimes_fn runtimes;       /* NULL: no installed-package listing */
    void *runtimes_ctx;
    const struct gw_ruleset *rs;
    const struct gw_tenant *tenant; /* NULL: auth off */
    const struct sg_http_request *req;
    const struct gw_job_sink *sink; /* run_code streams its output here; NULL: none */
    const char *job_id;             /* run_code's job id (17 chars); NULL: a new one */
};

/* The policies the caller may name: the default def and the tenant's list
 * (all loaded ones when auth is off); caller owns. */
json_t *gw_mcp_policy_enum(const struct gw_mcp_caller *c, const struct sg_policy *def);
/* A CallToolResult with one text block; NULL on out of memory. */
json_t *gw_mcp_text_result(const char *text, int is_error);
/* A /v1/run-shaped answer (o borrowed) as run_code's content: the outcome
 * line, stdout, stderr, the result, artifacts (images inline, anything else an
 * embedded resource); isError unless the job succeeded. */
json_t *gw_mcp_run_result(json_t *o);
/* A /v1/analyze-shaped answer (o borrowed) as check_code's text, rid the
 * job id it names; isError on a reject. */
json_t *gw_mcp_analysis_result(json_t *o, const char *rid);
/* An HTTP error answer (o borrowed, may be NULL) as a tool error. */
json_t *gw_mcp_error_result(int status, json_t *o, const char *rid);
/* The X-Request-Id a handler set on resp, "-" if none (borrowed from resp). */
const char *gw_mcp_request_id(const struct sg_http_response *resp);
/* true for the MIME types answered as image content (PNG, JPEG, SVG). */
bool gw_mcp_is_image(const char *mime);

#endif
