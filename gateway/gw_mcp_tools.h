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
 * The session tools (session_create, session_exec, session_upload,
 * session_download, session_close) live in gw_mcp_stools.h; this module lists
 * and dispatches them when the caller has code_sessions.
 *
 * The list_runtimes tool reports what the policy allows per language and,
 * from GET /v1/runtimes, what the images have installed and which of it the
 * caller's policies let a job import.
 */
#ifndef SG_GW_MCP_TOOLS_H
#define SG_GW_MCP_TOOLS_H

#include <jansson.h>
#include <stdbool.h>

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

/* The tools/list result {"tools": [...]}; caller owns it, NULL on out of memory. */
json_t *gw_mcp_tools_list(const struct gw_mcp_caller *c);

/* tools/call with params (borrowed). 0: *ret is the CallToolResult (caller
 * owns it). Negative: a JSON-RPC error (-32602 unknown tool or arguments
 * against the schema, -32603 out of memory) with msg filled. */
int gw_mcp_tools_call(const struct gw_mcp_caller *c, json_t *params, json_t **ret, char msg[256]);

/* For gw_mcp_stools.c, so the session tools answer as these do. */
json_t *gw_mcp_policy_enum(const struct gw_mcp_caller *c, const struct sg_policy *def);
/* A CallToolResult with one text block; NULL on out of memory. */
json_t *gw_mcp_text_result(const char *text, int is_error);
/* A /v1/run-shaped answer (o borrowed) as run_code's content. */
json_t *gw_mcp_run_result(json_t *o);
/* An HTTP error answer (o borrowed, may be NULL) as a tool error. */
json_t *gw_mcp_error_result(int status, json_t *o, const char *rid);
/* The X-Request-Id a handler set on resp, "-" if none (borrowed from resp). */
const char *gw_mcp_request_id(const struct sg_http_response *resp);
/* true for the MIME types answered as image content (PNG, JPEG, SVG). */
bool gw_mcp_is_image(const char *mime);

#endif
