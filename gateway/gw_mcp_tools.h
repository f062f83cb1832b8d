/* gw_mcp_tools.h - the MCP tools: run_code, check_code, list_runtimes.
 *
 * The tool list (schemas and descriptions) is generated on every tools/list
 * from the live rule set: the caller's default policy says which modules the
 * description names, whether the network is on, and the policy enum lists
 * what the caller may select; a reload shows up in the next listing. Calls go
 * through gw_jobs_tool(), the pipeline of POST /v1/run and /v1/analyze, and
 * their answers become MCP content: text for the outcome, stdout, stderr and
 * the result; image content for PNG/JPEG/SVG artifacts; an embedded resource
 * for other artifacts. Policy rejections and failed runs are results with
 * isError true whose text names rule, line and column.
 *
 * The session tools (create_session, run_in_session, close_session) are
 * POST /v1/sessions, POST /v1/sessions/{id}/exec and DELETE /v1/sessions/{id}
 * for the same caller (gw_sessions.h): variables persist between
 * run_in_session calls, and each cell passes the session's policy.
 *
 * The list_runtimes tool reports what the policy allows per language and,
 * from GET /v1/runtimes, what the images have installed and which of it the
 * caller's policies let a job import.
 */
#ifndef SG_GW_MCP_TOOLS_H
#define SG_GW_MCP_TOOLS_H

#include <jansson.h>

#include "gw_jobs.h"
#include "gw_sessions.h"
#include "gw_ruleset.h"
#include "gw_tenants.h"
#include "httpsrv.h"

#define GW_MCP_MODULES_SHOWN 80 /* modules a description names; list_runtimes has all */

/* GET /v1/runtimes for the request's caller (gw_info_runtimes), given by the
 * server so this module needs no server: fills resp like the endpoint. */
typedef void (*gw_mcp_runtimes_fn)(void *ctx, const struct sg_http_request *req,
                                   struct sg_http_response *resp);

/* Who calls, under which rules; all borrowed for one call. */
struct gw_mcp_caller {
    const struct gw_jobs *jobs;
    struct gw_sessions *code_sessions; /* NULL: no session tools */
    gw_mcp_runtimes_fn runtimes;       /* NULL: no installed-package listing */
    void *runtimes_ctx;
    const struct gw_ruleset *rs;
    const struct gw_tenant *tenant; /* NULL: auth off */
    const struct sg_http_request *req;
    const struct gw_job_sink *sink; /* run_code streams its output here; NULL: none */
    const char *job_id;             /* run_code's job id (17 chars); NULL: a new one */
};

/* The tools/list result {"tools": [...]}; caller owns it, NULL on out of memory. */
json_t *gw_mcp_tools_list(const struct gw_mcp_caller *c);

/* tools/call with params (borrowed). 0: *ret is the CallToolResult (caller
 * owns it). Negative: a JSON-RPC error (-32602 unknown tool or arguments
 * against the schema, -32603 out of memory) with msg filled. */
int gw_mcp_tools_call(const struct gw_mcp_caller *c, json_t *params, json_t **ret, char msg[256]);

#endif
