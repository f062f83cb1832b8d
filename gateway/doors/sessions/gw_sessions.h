/* gw_sessions.h - the public session API: /v1/sessions and /v1/sessions/...
 * (README "Sessions", docs/api.md).
 *
 * A session lives on one executor (executors/sessions.h). Its public id is
 * "<py|js>-<executor boot id>-<128 random bits>": the gateway keeps no table,
 * any gateway can route any call, and the boot id only selects among the
 * executors the router already knows (gw_router_session); an executor that
 * restarted or left makes the session "session_lost". The executor keeps the
 * session's tenant (checked on every call: another tenant's session is 404),
 * its policy's name and the cells it ran; each new cell is analysed together
 * with those (names bound earlier resolve as they did) and only an accepted
 * cell is sent. The per-tenant cap on open sessions (tokens file
 * max_sessions, else the config's) is counted from the executors' own tables
 * at each creation, so it holds across gateway restarts; creations through
 * one gateway are serialised so two cannot both take the last place.
 */
#ifndef SG_GW_SESSIONS_H
#define SG_GW_SESSIONS_H

#include <pthread.h>
#include <stdbool.h>

#include "gw_admit.h"
#include "httpsrv.h"

#define GW_SESSION_PUBLIC_ID_LEN (3 + 16 + 1 + 32)
#define GW_SESSION_CALL_MS 10000u /* info, list, delete, cancel, files */
#define GW_SESSION_CREATE_MS 60000u
/* The cells of a session, at most (the executor's SESSIONS_HISTORY_MAX): the
 * text analysed with a new cell, whatever the policy's max_source_bytes. */
#define GW_SESSIONS_HISTORY_MAX (1024u * 1024u)

struct gw_sessions {
    const struct gw_services *jobs; /* borrowed: config, rules, router, audit, metrics */
    pthread_mutex_t create_lock;
};

void gw_sessions_init(struct gw_sessions *g, const struct gw_services *jobs);
void gw_sessions_destroy(struct gw_sessions *g);

/* true for "/v1/sessions" and "/v1/sessions/..." */
bool gw_sessions_path(const char *url);

/* Handle one request under /v1/sessions (any method). */
void gw_sessions_handle(struct gw_sessions *g, const struct sg_http_request *req,
                        struct sg_http_response *resp);

/* The same for an MCP tool (tool: its name, borrowed; NULL for a call the
 * MCP layer makes itself, such as a cancel): a cell is never streamed,
 * whatever the request's Accept says, and the audit line says endpoint "mcp"
 * and the tool. */
void gw_sessions_handle_tool(struct gw_sessions *g, const struct sg_http_request *req,
                             struct sg_http_response *resp, const char *tool);

#endif
