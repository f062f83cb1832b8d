/* gw_jobs.h - the job endpoints: POST /run, /v1/run, /v1/analyze.
 *
 * Each request goes through admission (gw_admit.h: caller, rate, body,
 * policy, network, analysis, audit, metrics); this module parses the bodies
 * of these endpoints (gw_request.h), sends an accepted job to an executor
 * with exactly the decoded bytes that were checked, and shapes the answer:
 * RAGFlow's for /run, the native one for /v1 and the MCP tools.
 */
#ifndef SG_GW_JOBS_H
#define SG_GW_JOBS_H

#include "gw_admit.h"
#include "gw_sse_out.h"
#include "httpsrv.h"

/* Handle one job request (ep is GW_EP_RUN, GW_EP_V1_RUN or GW_EP_V1_ANALYZE).
 * POST /v1/run with "stream": true or "Accept: text/event-stream" answers with
 * Server-Sent Events once the job runs (stdout / stderr events, ": hb"
 * heartbeats every GW_SSE_HEARTBEAT_MS, one final result event whose data
 * is the body the request would have had); a policy rejection is a single
 * result event; failures before the job runs keep their status codes. A
 * client that goes away cancels its job (heartbeats: gw_sse_out.h). */

/* Where a streamed job's output goes while it runs: start is called once the
 * executor streams (begin the client's answer), event for each stdout /
 * stderr event (data: the executor's JSON text); negative returns abort the
 * job as the client's hang-up. out is the client's stream, watched for a
 * hang-up and given heartbeats. */
struct gw_job_sink {
    int (*start)(void *ud);
    int (*event)(void *ud, const char *name, const char *data, size_t len);
    struct gw_sse_out *out;
    void *ud;
};

/* POST /v1/jobs/{job_id}/cancel (tenant-scoped: 404 for an unknown id or
 * another tenant's job, 409 when it ended, 202 when the cancel was sent). */
/* What a job may hold in the gateway's memory beyond its request body
 * (which the HTTP server reserved): the body sent to the executor, as JSON
 * and as text; the executor's answer with its outputs at their default caps,
 * as received, parsed and re-shaped; a fixed part for the rest. Reserved in
 * the memory budget before the job is sent; past the budget the job gets
 * the door's busy answer (as when every executor is busy). Pure. */
#define GW_JOB_MEMORY_FIXED (256u * 1024u)
#define GW_JOB_MEMORY_BODY_COPIES 2u
#define GW_JOB_MEMORY_ANSWER (4u << 20)
size_t gw_job_memory(size_t body_len);

void gw_jobs_cancel(const struct gw_services *g, const struct sg_http_request *req,
                    struct sg_http_response *resp);
void gw_jobs_handle(const struct gw_services *g, enum gw_endpoint ep,
                    const struct sg_http_request *req, struct sg_http_response *resp);

/* One MCP tool call through the very pipeline of its HTTP twin (kind
 * GW_REQ_RUN: POST /v1/run; GW_REQ_ANALYZE: POST /v1/analyze): req carries
 * the caller's headers and, as its body, the /v1 body the tool's arguments
 * make. The answer in resp is what that endpoint would have answered; the
 * audit line says endpoint "mcp" and the tool name. With sink (may be NULL)
 * a run streams its output there while it runs. job_id (may be NULL: a new
 * one) is the job's id, made by the caller so it can cancel the job. */
void gw_jobs_tool(const struct gw_services *g, const char *tool, enum gw_req_kind kind,
                  const struct sg_http_request *req, const struct gw_job_sink *sink,
                  const char *job_id, struct sg_http_response *resp);

/* A front door that reads its own request and shapes its own answer around
 * the same pipeline (Dify's sandbox API, gw_dify.h). Each hook fills resp
 * and returns < 0 to refuse. */
struct gw_door {
    /* who asks (instead of gw_admit_caller) */
    int (*caller)(struct gw_adm *a, const struct sg_http_request *req,
                  struct sg_http_response *resp, void *ud);
    /* the body into *ret (code, language, arguments, policy, limits, script);
     * *ret_network: the job takes the tenant's default network list */
    int (*parse)(struct gw_adm *a, const struct sg_http_request *req, struct gw_request *ret,
                 bool *ret_network, struct sg_http_response *resp, void *ud);
    /* resp holds what POST /v1/run would answer: rewrite it in the door's shape */
    void (*answer)(const struct gw_adm *a, struct sg_http_response *resp, void *ud);
    void *ud;
};

/* One request through door (audited and counted as endpoint ep). */
void gw_jobs_door(const struct gw_services *s, enum gw_endpoint ep, const struct gw_door *door,
                  const struct sg_http_request *req, struct sg_http_response *resp);

/* The audit line, id and metric of a tool call that runs no job (resp holds
 * its answer, outcome a short static word). tenant may be NULL. */
void gw_jobs_tool_note(const struct gw_services *g, const char *tool,
                       const struct gw_tenant *tenant, const struct sg_http_request *req,
                       struct sg_http_response *resp, const char *outcome);

/* A request answered before any pipeline ran (routing, authentication, the
 * HTTP layer's own refusals): add its X-Request-Id, write its audit line and
 * count it, like any job. tenant may be NULL. */
void gw_jobs_refused(const struct gw_services *g, enum gw_endpoint ep,
                     const struct gw_tenant *tenant, const struct sg_http_request *req,
                     struct sg_http_response *resp);

#endif
