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

#include "gw_mcp_content.h"

#define GW_MCP_MODULES_SHOWN 80 /* modules a description names; list_runtimes has all */

/* The tools/list result {"tools": [...]}; caller owns it, NULL on out of memory. */
json_t *gw_mcp_tools_list(const struct gw_mcp_caller *c);

/* tools/call with params (borrowed). 0: *ret is the CallToolResult (caller
 * owns it). Negative: a JSON-RPC error (-32602 unknown tool or arguments
 * against the schema, -32603 out of memory) with msg filled. */
int gw_mcp_tools_call(const struct gw_mcp_caller *c, json_t *params, json_t **ret, char msg[256]);

#endif
