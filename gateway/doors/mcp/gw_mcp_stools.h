/* gw_mcp_stools.h - the MCP session tools over the public session API
 * (gw_sessions.h, README "Sessions"), for the same caller:
 *
 *   session_create   {language?, policy?}            POST /v1/sessions
 *   session_exec     {session_id, code, timeout_ms?} POST /v1/sessions/{id}/exec
 *   session_upload   {session_id, name, content_b64} PUT /v1/sessions/{id}/files/{name}
 *   session_download {session_id, name}              GET /v1/sessions/{id}/files/{name}
 *   session_close    {session_id}                    DELETE /v1/sessions/{id}
 *
 * Variables persist between session_exec calls and each cell passes the
 * session's policy (gw_sessions does both). Arguments of the wrong type or
 * missing are JSON-RPC invalid params; a file name outside the job files'
 * rule (sg_file_name.h), bad base64, a file over the caps and every error the
 * session API answers are tool errors (isError) the model can read. A
 * downloaded PNG/JPEG/SVG is image content, anything else an embedded
 * resource with the bytes in base64, as run_code answers artifacts.
 */
#ifndef SG_GW_MCP_STOOLS_H
#define SG_GW_MCP_STOOLS_H

#include <jansson.h>
#include <stdbool.h>

#include "gw_mcp_content.h"

/* The bytes of one file session_download returns: the executor's cap on a
 * session file (executors/sessions.h: SESSIONS_FILE_MAX). */
#define GW_MCP_DOWNLOAD_MAX (8u * 1024u * 1024u)

/* For the unknown-tool message. */
#define GW_MCP_STOOLS_NAMES                                                                        \
    "session_create, session_exec, session_upload, session_download, session_close"

/* true when name is one of the session tools. */
bool gw_mcp_stools_has(const char *name);

/* The session tools' entries for tools/list (a new array), NULL on out of
 * memory. def: the caller's default policy (borrowed). */
json_t *gw_mcp_stools_list(const struct gw_mcp_caller *c, const struct sg_policy *def);

/* tools/call of a session tool, as gw_mcp_tools_call(): 0 with *ret the
 * CallToolResult (caller owns it), or a negative JSON-RPC error with msg. */
int gw_mcp_stools_call(const struct gw_mcp_caller *c, const char *name, json_t *args, json_t **ret,
                       char msg[256]);

#endif
