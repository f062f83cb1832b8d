/* gw_mcp_calls.h - the MCP tools/call requests in flight that a client may
 * cancel (notifications/cancelled, params.requestId): run_code's job and
 * session_exec's session, keyed by the MCP session and the request id.
 *
 * Bounded: past GW_MCP_CALLS_MAX calls in flight a new one runs but cannot
 * be cancelled this way (the job / session cancel endpoints still can). An
 * entry is found only under the MCP session that made it, so one client
 * cannot name another's call; the cancel itself then goes through the
 * tenant-scoped cancel of the job or session. Thread-safe.
 */
#ifndef SG_GW_MCP_CALLS_H
#define SG_GW_MCP_CALLS_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "gw_mcp_session.h"
#include "gw_sessions.h"

#define GW_MCP_CALLS_MAX 256   /* calls in flight that can be cancelled */
#define GW_MCP_CALL_KEY_MAX 80 /* a request id as compact JSON, longer: not cancellable */
#define GW_MCP_CALL_TARGET_MAX (GW_SESSION_PUBLIC_ID_LEN + 1)

enum gw_mcp_call_kind { GW_MCP_CALL_JOB = 0, GW_MCP_CALL_SESSION };

struct gw_mcp_call {
    bool used;
    char session[GW_MCP_SESSION_ID_LEN + 1]; /* the MCP session */
    char key[GW_MCP_CALL_KEY_MAX];           /* the JSON-RPC request id, compact JSON */
    enum gw_mcp_call_kind kind;
    char target[GW_MCP_CALL_TARGET_MAX]; /* the job id or the public session id */
};

struct gw_mcp_calls {
    pthread_mutex_t lock;
    struct gw_mcp_call slot[GW_MCP_CALLS_MAX];
};

void gw_mcp_calls_init(struct gw_mcp_calls *t);
void gw_mcp_calls_destroy(struct gw_mcp_calls *t);

/* Note request id (borrowed) of MCP session as running kind on target.
 * Returns the slot to give to gw_mcp_calls_end, or -1 when it cannot be
 * noted (table full, id too long, names too long). */
int gw_mcp_calls_begin(struct gw_mcp_calls *t, const char *session, json_t *id,
                       enum gw_mcp_call_kind kind, const char *target);

/* The call in slot (from begin; -1 is a no-op) ended. */
void gw_mcp_calls_end(struct gw_mcp_calls *t, int slot);

/* The call request id of session names, copied out: 0, or -ENOENT (unknown,
 * ended, or another session's). */
int gw_mcp_calls_find(struct gw_mcp_calls *t, const char *session, json_t *id,
                      struct gw_mcp_call *ret);

#endif
