#include "gw_mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gw_mcp_rpc.h"
#include "gw_mcp_tools.h"
#include "gw_respond.h"
#include "gw_sse_out.h"
#include "gw_util.h"
#include "log.h"

/* Newest first: initialize answers with the client's version if listed,
 * else with the first. */
static const char *const versions[] = {GW_MCP_VERSION_LATEST, "2025-03-26"};
#define BATCHES_UNTIL "2025-03-26" /* 2025-06-18 removed JSON-RPC batching */

int gw_mcp_version_supported(const char *v)
{
    for (size_t i = 0; v && i < sizeof(versions) / sizeof(versions[0]); i++)
        if (strcmp(v, versions[i]) == 0)
            return 1;
    return 0;
}

int gw_mcp_new(const struct gw_services *jobs, gw_mcp_runtimes_fn runtimes, void *runtimes_ctx,
               size_t max_sessions, uint64_t idle_ms, struct gw_mcp **ret, struct sg_error *err)
{
    struct gw_mcp *m = calloc(1, sizeof(*m));
    if (!m || !(m->sessions = gw_mcp_sessions_new(max_sessions, idle_ms))) {
        free(m);
        return sg_error_set(err, -ENOMEM, "out of memory");
    }
    gw_mcp_calls_init(&m->calls);
    m->jobs = jobs;
    m->runtimes = runtimes;
    m->runtimes_ctx = runtimes_ctx;
    *ret = m;
    return 0;
}

void gw_mcp_free(struct gw_mcp *m)
{
    if (!m)
        return;
    gw_mcp_sessions_free(m->sessions);
    gw_mcp_calls_destroy(&m->calls);
    free(m);
}

/* One HTTP exchange. */
struct exchange {
    struct gw_mcp *m;
    const struct sg_http_request *req;
    struct sg_http_response *resp;
    struct gw_ruleset *rs;
    const struct gw_tenant *tenant;
    char version[GW_MCP_VERSION_MAX]; /* the session's */
    char new_session[GW_MCP_SESSION_ID_LEN + 1];
    /* A tools/call with a progressToken from a client that takes SSE: the
     * run's output goes out as notifications/progress on an SSE answer. */
    json_t *progress_token; /* borrowed from the request; NULL: answer JSON */
    json_int_t progress;
    struct gw_sse_out out;
    struct gw_job_sink sink;
};

static int progress_start(void *ud)
{
    struct exchange *x = ud;
    struct sg_http_response head = {0};
    return gw_sse_out_begin(&x->out, x->req, &head);
}

/* One stdout / stderr event of the run as a progress notification (its
 * message the text; stderr marked). */
static int progress_event(void *ud, const char *name, const char *data, size_t len)
{
    struct exchange *x = ud;
    json_t *ev = json_loadb(data, len, 0, NULL);
    const char *text = json_string_value(json_object_get(ev, "text"));
    int err = strcmp(name, "stderr") == 0;
    json_t *n = json_pack("{s:s,s:s,s:{s:O,s:I,s:s++}}", "jsonrpc", "2.0", "method",
                          "notifications/progress", "params", "progressToken", x->progress_token,
                          "progress", ++x->progress, "message", err ? "stderr: " : "",
                          text ? text : "", "");
    json_decref(ev);
    char *line = n ? json_dumps(n, JSON_COMPACT) : NULL;
    json_decref(n);
    int r = line ? gw_sse_out_event(&x->out, "message", line, strlen(line)) : -ENOMEM;
    free(line);
    return r;
}

/* The progressToken of a single tools/call from a client that takes SSE
 * (string or integer, MCP's rule), or NULL. */
static json_t *progress_token(const struct exchange *x, const struct gw_rpc_batch *b)
{
    const char *accept = sg_http_header(x->req, "Accept");
    if (b->is_batch || b->count != 1 || b->msgs[0].kind != GW_RPC_REQUEST ||
        strcmp(b->msgs[0].method, "tools/call") != 0 || !accept ||
        !strcasestr(accept, "text/event-stream"))
        return NULL;
    json_t *t = json_object_get(json_object_get(b->msgs[0].params, "_meta"), "progressToken");
    return json_is_string(t) || json_is_integer(t) ? t : NULL;
}

static const char *tenant_name(const struct exchange *x)
{
    return x->tenant ? x->tenant->name : NULL;
}

/* An answer without a body (202, 204): httpsrv takes a missing body for a
 * handler that forgot to answer, so give it an empty one. */
static void no_content(struct sg_http_response *resp, int status)
{
    free(resp->body);
    resp->body = strdup("");
    resp->body_len = 0;
    resp->status = resp->body ? status : 500;
}

/* A JSON-RPC error as the whole HTTP answer. */
static void rpc_fail(struct sg_http_response *resp, int http, int code, const char *msg)
{
    gw_respond_json(resp, http, gw_rpc_error_json(NULL, code, msg));
}

void gw_mcp_refusal(struct sg_http_response *resp)
{
    if (resp->status != 413 && resp->status != 503)
        return;
    char text[256] = "request refused";
    json_t *in = resp->body ? json_loads(resp->body, 0, NULL) : NULL;
    const char *m = json_string_value(json_object_get(json_object_get(in, "error"), "message"));
    if (m)
        snprintf(text, sizeof(text), "%s", m);
    json_decref(in);
    rpc_fail(resp, resp->status, GW_RPC_INVALID_REQUEST, text);
}

static json_t *initialize(struct exchange *x, json_t *params, int *code, char *msg)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    if (!want || !json_is_object(json_object_get(params, "capabilities")) ||
        !json_is_object(json_object_get(params, "clientInfo"))) {
        *code = GW_RPC_INVALID_PARAMS;
        snprintf(msg, 256, "initialize: params need protocolVersion, capabilities, clientInfo");
        return NULL;
    }
    const char *v = gw_mcp_version_supported(want) ? want : versions[0];
    int r = x->new_session[0] ? -EALREADY
                              : gw_mcp_session_open(x->m->sessions, tenant_name(x), v, gw_now_ns(),
                                                    x->new_session);
    if (r < 0) {
        *code = GW_RPC_INVALID_REQUEST;
        snprintf(msg, 256, "%s",
                 r == -EALREADY ? "initialize: one per HTTP request"
                 : r == -ENOSPC ? "initialize: the gateway holds all the MCP sessions it can "
                                  "(other tenants'); try again later"
                                : "initialize: no session id could be made");
        return NULL;
    }
    return json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", v, "capabilities",
                     "tools", "listChanged", 0, "serverInfo", "name", "sandgate", "title",
                     "sandgate code sandbox", "version", "1", "instructions",
                     "Run untrusted Python or JavaScript in an isolated sandbox under a "
                     "policy. Read the run_code description for the rules code must follow; "
                     "check_code checks code without running it.");
}

/* tools/call, noted while it runs so that notifications/cancelled can find
 * it: run_code by the job id made for it, session_exec by its session. */
static int cancellable_call(struct exchange *x, struct gw_mcp_caller *c,
                            const struct gw_rpc_msg *msg, json_t **result, char *text)
{
    const char *name = json_string_value(json_object_get(msg->params, "name"));
    json_t *args = json_object_get(msg->params, "arguments");
    const char *sid = json_string_value(json_object_get(args, "session_id"));
    const char *mcp = sg_http_header(x->req, "Mcp-Session-Id");
    char job_id[17];
    int slot = -1;
    if (name && strcmp(name, "run_code") == 0) {
        gw_request_id(job_id);
        c->job_id = job_id;
        slot = gw_mcp_calls_begin(&x->m->calls, mcp, msg->id, GW_MCP_CALL_JOB, job_id);
    } else if (name && sid && strcmp(name, "session_exec") == 0) {
        slot = gw_mcp_calls_begin(&x->m->calls, mcp, msg->id, GW_MCP_CALL_SESSION, sid);
    }
    int code = gw_mcp_tools_call(c, msg->params, result, text);
    gw_mcp_calls_end(&x->m->calls, slot);
    return code;
}

/* notifications/cancelled for a call of this MCP session still in flight:
 * its job or its session's cell is cancelled as POST /v1/jobs/{id}/cancel
 * or /v1/sessions/{id}/cancel would, with this request's credentials. The
 * call then answers with its cancelled result. Anything else is ignored, as
 * MCP asks (the call may have ended already). */
static void cancel_call(struct exchange *x, json_t *params)
{
    struct gw_mcp_call call;
    const char *mcp = sg_http_header(x->req, "Mcp-Session-Id");
    if (gw_mcp_calls_find(&x->m->calls, mcp, json_object_get(params, "requestId"), &call) < 0)
        return;
    char url[128];
    struct sg_http_request req = *x->req;
    struct sg_http_response resp = {.status = 200};
    req.method = "POST";
    req.url = url;
    req.body = "";
    req.body_len = 0;
    if (call.kind == GW_MCP_CALL_JOB) {
        snprintf(url, sizeof(url), "/v1/jobs/%s/cancel", call.target);
        gw_jobs_cancel(x->m->jobs, &req, &resp);
    } else if (x->m->code_sessions) {
        snprintf(url, sizeof(url), "/v1/sessions/%s/cancel", call.target);
        gw_sessions_handle_tool(x->m->code_sessions, &req, &resp, NULL);
    }
    sg_log(SG_LOG_INFO, "mcp_cancel", "target=%s kind=%s status=%d", call.target,
           call.kind == GW_MCP_CALL_JOB ? "job" : "session", resp.status);
    free(resp.body);
}

/* The answer to one request (a JSON-RPC response object). */
static json_t *answer(struct exchange *x, const struct gw_rpc_msg *msg)
{
    int code = 0;
    char text[256] = "";
    json_t *result = NULL;
    struct gw_mcp_caller c = {.jobs = x->m->jobs,
                              .runtimes = x->m->runtimes,
                              .runtimes_ctx = x->m->runtimes_ctx,
                              .code_sessions = x->m->code_sessions,
                              .rs = x->rs,
                              .tenant = x->tenant,
                              .req = x->req,
                              .sink = x->progress_token ? &x->sink : NULL};
    if (strcmp(msg->method, "initialize") == 0)
        result = initialize(x, msg->params, &code, text);
    else if (strcmp(msg->method, "ping") == 0)
        result = json_object();
    else if (strcmp(msg->method, "tools/list") == 0)
        result = gw_mcp_tools_list(&c);
    else if (strcmp(msg->method, "tools/call") == 0)
        code = cancellable_call(x, &c, msg, &result, text);
    else {
        code = GW_RPC_METHOD_NOT_FOUND;
        snprintf(text, sizeof(text), "method not found: %.128s", msg->method);
    }
    if (!code && !result) {
        code = GW_RPC_INTERNAL_ERROR;
        snprintf(text, sizeof(text), "out of memory");
    }
    if (code)
        return gw_rpc_error_json(msg->id, code, text);
    return gw_rpc_result(msg->id, result);
}

/* What the client says it takes: absent, or a list naming application/json
 * (or a wildcard that covers it). The answer is always JSON. */
static int accepts_json(const char *accept)
{
    if (!accept)
        return 1;
    return strcasestr(accept, "application/json") || strstr(accept, "*/*") ||
           strcasestr(accept, "application/*");
}

static int is_json_type(const char *ct)
{
    static const char want[] = "application/json";
    return ct && strncasecmp(ct, want, sizeof(want) - 1) == 0 &&
           (ct[sizeof(want) - 1] == '\0' || ct[sizeof(want) - 1] == ';' ||
            ct[sizeof(want) - 1] == ' ');
}

/* The checks every message after initialize needs: a live session of this
 * tenant and a protocol version header, if any, that is spoken here. */
static int session_ok(struct exchange *x, int batch)
{
    const char *sid = sg_http_header(x->req, "Mcp-Session-Id");
    const char *pv = sg_http_header(x->req, "MCP-Protocol-Version");
    if (pv && !gw_mcp_version_supported(pv)) {
        char m[160];
        snprintf(m, sizeof(m), "MCP-Protocol-Version: '%.32s' is not supported (%s, %s)", pv,
                 versions[0], versions[1]);
        return rpc_fail(x->resp, 400, GW_RPC_INVALID_REQUEST, m), -EINVAL;
    }
    if (!sid)
        return rpc_fail(x->resp, 400, GW_RPC_INVALID_REQUEST,
                        "Mcp-Session-Id: required; call initialize first"),
               -EINVAL;
    if (gw_mcp_session_touch(x->m->sessions, sid, tenant_name(x), gw_now_ns(), x->version) < 0)
        return rpc_fail(x->resp, 404, GW_RPC_SESSION_NOT_FOUND,
                        "session not found: initialize again"),
               -ENOENT;
    if (batch && strcmp(x->version, BATCHES_UNTIL) != 0)
        return rpc_fail(x->resp, 400, GW_RPC_INVALID_REQUEST,
                        "batches are not part of protocol " GW_MCP_VERSION_LATEST),
               -EINVAL;
    return 0;
}

static int has_initialize(const struct gw_rpc_batch *b)
{
    for (size_t i = 0; i < b->count; i++)
        if (b->msgs[i].kind == GW_RPC_REQUEST && strcmp(b->msgs[i].method, "initialize") == 0)
            return 1;
    return 0;
}

/* Answer every request of the batch; notifications and responses need none. */
static void respond_batch(struct exchange *x, const struct gw_rpc_batch *b)
{
    json_t *out = json_array();
    unsigned calls = 0;
    for (size_t i = 0; out && i < b->count; i++) {
        const struct gw_rpc_msg *msg = &b->msgs[i];
        int call = msg->kind == GW_RPC_REQUEST && strcmp(msg->method, "tools/call") == 0;
        if (msg->kind == GW_RPC_INVALID)
            json_array_append_new(out,
                                  gw_rpc_error_json(msg->id, GW_RPC_INVALID_REQUEST, msg->error));
        else if (call && ++calls > GW_MCP_CALLS_PER_REQUEST)
            json_array_append_new(out,
                                  gw_rpc_error_json(msg->id, GW_RPC_INVALID_REQUEST,
                                                    "batch: too many tools/call in one request"));
        else if (msg->kind == GW_RPC_REQUEST)
            json_array_append_new(out, answer(x, msg));
        else if (msg->kind == GW_RPC_NOTIFICATION &&
                 strcmp(msg->method, "notifications/cancelled") == 0)
            cancel_call(x, msg->params);
    }
    if (x->new_session[0])
        sg_http_add_header(x->resp, "Mcp-Session-Id", x->new_session);
    if (out && json_array_size(out) == 0) {
        json_decref(out);
        return no_content(x->resp, 202);
    }
    json_t *one = out && !b->is_batch ? json_incref(json_array_get(out, 0)) : NULL;
    if (one)
        json_decref(out);
    gw_respond_json(x->resp, 200, one ? one : out);
    if (!x->out.st)
        return;
    /* The run streamed: the response is the stream's last event. */
    if (x->resp->body && x->resp->status == 200)
        gw_sse_out_event(&x->out, "message", x->resp->body,
                         x->resp->body_len ? x->resp->body_len : strlen(x->resp->body));
    gw_sse_out_end(&x->out);
}

static void post(struct exchange *x)
{
    if (!accepts_json(sg_http_header(x->req, "Accept")))
        return rpc_fail(x->resp, 406, GW_RPC_INVALID_REQUEST,
                        "Accept: must allow application/json");
    if (!is_json_type(sg_http_header(x->req, "Content-Type")))
        return rpc_fail(x->resp, 415, GW_RPC_INVALID_REQUEST,
                        "Content-Type: must be application/json");
    struct gw_rpc_batch b;
    struct gw_rpc_error e;
    if (gw_rpc_parse(x->req->body, x->req->body_len, &b, &e) < 0)
        return rpc_fail(x->resp, 400, e.code, e.message);
    x->progress_token = progress_token(x, &b);
    x->sink = (struct gw_job_sink){progress_start, progress_event, &x->out, x};
    if (has_initialize(&b)) {
        if (b.is_batch)
            rpc_fail(x->resp, 400, GW_RPC_INVALID_REQUEST, "initialize must not be batched");
        else
            respond_batch(x, &b);
    } else if (session_ok(x, b.is_batch) == 0) {
        respond_batch(x, &b);
    }
    gw_rpc_batch_free(&b);
}

static void delete_session(struct exchange *x)
{
    const char *sid = sg_http_header(x->req, "Mcp-Session-Id");
    if (!sid)
        return rpc_fail(x->resp, 400, GW_RPC_INVALID_REQUEST, "Mcp-Session-Id: required");
    if (gw_mcp_session_close(x->m->sessions, sid, tenant_name(x), gw_now_ns()) < 0)
        return rpc_fail(x->resp, 404, GW_RPC_SESSION_NOT_FOUND, "session not found");
    no_content(x->resp, 204);
}

void gw_mcp_handle(struct gw_mcp *m, const struct sg_http_request *req,
                   struct sg_http_response *resp)
{
    struct exchange x = {.m = m, .req = req, .resp = resp};
    x.rs = gw_ruleset_slot_get(m->jobs->rules);
    if (gw_tenants_authenticate(x.rs->tenants, req, resp, &x.tenant) == 0) {
        if (strcmp(req->method, "DELETE") == 0)
            delete_session(&x);
        else
            post(&x);
    }
    sg_log(SG_LOG_DEBUG, "mcp", "method=%s status=%d session_new=%s", req->method, resp->status,
           x.new_session[0] ? "yes" : "no");
    gw_ruleset_unref(x.rs);
}
