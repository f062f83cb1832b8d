/* gw_mcp.h - the Model Context Protocol endpoint: /mcp, streamable HTTP.
 *
 * POST /mcp carries one JSON-RPC message or (protocol 2025-03-26) a batch;
 * requests are answered with one application/json body, notifications and
 * responses alone with 202. The exception: a single tools/call of run_code
 * with params._meta.progressToken from a client whose Accept takes
 * text/event-stream is answered, once the job runs, as an SSE stream: the
 * program's output as notifications/progress (message: the text), then the
 * response; a client that hangs up cancels the job. `initialize` negotiates the protocol version
 * (the client's when supported, else the latest) and issues Mcp-Session-Id;
 * every later request must carry it (400 without, 404 once it is unknown or
 * expired so the client initialises again) and, when sent, a supported
 * MCP-Protocol-Version (else 400). DELETE /mcp ends a session; GET /mcp is
 * 405 (no server-initiated stream is offered). Authentication is that of the
 * job endpoints, per HTTP request; a session belongs to the tenant that
 * opened it. Methods: initialize, ping, tools/list, tools/call,
 * notifications/initialized (and other notifications, ignored).
 */
#ifndef SG_GW_MCP_H
#define SG_GW_MCP_H

#include "gw_jobs.h"
#include "gw_mcp_calls.h"
#include "gw_mcp_session.h"
#include "gw_mcp_tools.h"
#include "httpsrv.h"
#include "sg_error.h"

#define GW_MCP_VERSION_LATEST "2025-06-18"
/* tools/call requests one HTTP request may carry (a batch): each may hold the
 * worker for a job's whole time limit, so a batch must not multiply that. */
#define GW_MCP_CALLS_PER_REQUEST 4

struct gw_mcp {
    const struct gw_services *jobs; /* borrowed from the server */
    gw_mcp_runtimes_fn runtimes;
    void *runtimes_ctx;
    struct gw_mcp_sessions *sessions;
    struct gw_mcp_calls calls;         /* tools/call in flight, for notifications/cancelled */
    struct gw_sessions *code_sessions; /* borrowed: /v1/sessions for the session tools;
                                          NULL: no session tools (set by the server) */
};

/* jobs and runtimes_ctx are borrowed and must outlive the endpoint;
 * runtimes may be NULL. Free with gw_mcp_free(). */
int gw_mcp_new(const struct gw_services *jobs, gw_mcp_runtimes_fn runtimes, void *runtimes_ctx,
               size_t max_sessions, uint64_t idle_ms, struct gw_mcp **ret, struct sg_error *err);

/* NULL is a no-op. */
void gw_mcp_free(struct gw_mcp *m);

/* 1 when version is one this endpoint speaks. */
int gw_mcp_version_supported(const char *version);

/* An answer made for /mcp before it ran (413 body over the cap, 503 too
 * many bodies in flight: httpsrv's JSON error) in the JSON-RPC shape an MCP
 * client reads: same status and headers, {"jsonrpc", "id": null, "error":
 * {-32600, the message}}. Other answers are left alone. */
void gw_mcp_refusal(struct sg_http_response *resp);

/* Handle one HTTP request to /mcp (any method). */
void gw_mcp_handle(struct gw_mcp *m, const struct sg_http_request *req,
                   struct sg_http_response *resp);

#endif
