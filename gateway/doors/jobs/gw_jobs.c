#include "gw_jobs.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "analyze.h"
#include "gw_request.h"
#include "gw_respond.h"
#include "gw_util.h"
#include "log.h"
#include "membudget.h"
#include "rules.h"
#include "sha256.h"
#include "verdict_cache.h"

struct job {
    struct gw_adm a; /* the admission: caller, policy, analysis, audit */
    const struct gw_services *s;
    enum gw_req_kind kind;
    int native; /* the answer has the /v1 fields (job_id, policy, timings...) */
    struct gw_request req;
    int parsed;
    struct gw_exec_result ex;
    int stream;                         /* the executor streams to sink */
    const struct gw_job_sink *sink;     /* where the events go, NULL: nowhere */
    const struct sg_http_request *hreq; /* the request, to begin the stream on */
    struct gw_sse_out out;              /* the built-in sink's SSE answer */
    struct gw_job_sink own;             /* the built-in sink (POST /v1/run) */
    int listed;                         /* in the table of jobs in flight */
    const struct gw_door *door;         /* its own request and answer, or NULL */
    bool door_network;                  /* the door asks for the tenant's default list */
    size_t mem;                         /* bytes reserved in the memory budget */
};

static int parse_body(struct job *j, const struct sg_http_request *req,
                      struct sg_http_response *resp)
{
    struct gw_req_error e;
    if (j->door) {
        if (j->door->parse(&j->a, req, &j->req, &j->door_network, resp, j->door->ud) < 0)
            return -EINVAL;
        j->parsed = 1;
        gw_admit_code(&j->a, j->req.lang, j->req.code, j->req.code_len);
        return 0;
    }
    if (gw_request_parse(j->kind, req->body, req->body_len, &j->a.caps, &j->req, &e) < 0) {
        sg_http_error(resp, e.status, e.code, "%s", e.message);
        return -EINVAL;
    }
    j->parsed = 1;
    gw_admit_code(&j->a, j->req.lang, j->req.code, j->req.code_len);
    return 0;
}

/* The job's network (gw_egress.h): what /v1/run asked for, within the
 * tenant's allow-list, or for RAGFlow's /run the tenant's default list. */
static int select_network(struct job *j, struct sg_http_response *resp)
{
    json_t *want = j->req.network ? json_object_get(j->req.network, "allow") : NULL;
    return gw_admit_network(&j->a, want, j->kind == GW_REQ_RAGFLOW_RUN || j->door_network, resp);
}

static json_t *timings_json(const struct job *j)
{
    return json_pack("{s:f,s:b,s:f,s:f}", "analysis_ms", gw_admit_ms(j->a.analysis_us), "cached",
                     j->a.cached, "exec_ms", gw_admit_ms(j->a.exec_us), "total_ms",
                     gw_admit_ms((gw_now_ns() - j->a.t0) / 1000));
}

/* Native endpoints add the job id, policy, violations and timings. */
static void add_native(struct job *j, json_t *o)
{
    json_object_set_new(o, "job_id", json_string(j->a.id));
    json_object_set_new(o, "policy", gw_admit_policy_json(&j->a));
    if (!json_object_get(o, "violations"))
        json_object_set_new(o, "violations", sg_violations_to_json(&j->a.an.violations));
    json_object_set_new(o, "timings", timings_json(j));
}

static void respond_analysis(struct job *j, struct sg_http_response *resp)
{
    const struct sg_analysis *an = &j->a.an;
    const struct sg_analysis_stats *st = &an->stats;
    /* a cached answer reports 0 for the phases: nothing was parsed */
    json_t *o = json_pack(
        "{s:s,s:o,s:o,s:{s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:b}}", "verdict",
        an->accepted ? "accept" : "reject", "violations", sg_violations_to_json(&an->violations),
        "policy", gw_admit_policy_json(&j->a), "stats", "source_bytes",
        (json_int_t)st->source_bytes, "nodes", (json_int_t)st->nodes, "max_depth",
        (json_int_t)st->max_depth, "canon_ms", gw_admit_ms(st->canon_us), "parse_ms",
        gw_admit_ms(st->parse_us), "eval_ms", gw_admit_ms(st->eval_us), "analysis_ms",
        gw_admit_ms(j->a.analysis_us), "cached", j->a.cached);
    if (o)
        json_object_set_new(o, "dropped_violations",
                            json_integer((json_int_t)an->violations.dropped));
    gw_respond_json(resp, 200, o);
}

/* The analysis's modules (analyze.h: at most SG_IMPORTS_MAX names of the
 * characters the executor accepts) for the executor's pool choice. */
static json_t *imports_json(const struct sg_imports *im)
{
    json_t *a = json_array();
    for (const char *p = im->text; a && *p;) {
        size_t n = strcspn(p, ",");
        json_array_append_new(a, json_stringn(p, n));
        p += n + (p[n] == ',');
    }
    return a;
}

static uint64_t job_timeout_ms(const struct job *j)
{
    uint64_t t = j->req.timeout_ms ? j->req.timeout_ms : j->s->cfg->default_timeout_ms;
    return t < j->a.caps.max_timeout_ms ? t : j->a.caps.max_timeout_ms;
}

static json_t *exec_body(struct job *j)
{
    const struct gw_config *c = j->s->cfg;
    uint64_t m = j->req.memory_mb ? j->req.memory_mb : c->default_memory_mb;
    uint64_t max_m = j->a.caps.max_memory_mb;
    json_t *limits = json_pack("{s:I,s:I}", "timeout_ms", (json_int_t)job_timeout_ms(j),
                               "memory_mb", (json_int_t)(m < max_m ? m : max_m));
    if (limits && c->enable_seccomp >= 0)
        json_object_set_new(limits, "enable_seccomp", json_boolean(c->enable_seccomp));
    /* s% checks UTF-8: the analysis already refused anything else. */
    json_t *o = json_pack("{s:s,s:s,s:s%,s:O,s:o}", "job_id", j->a.id, "language",
                          sg_lang_name(j->req.lang), "code", j->req.code, j->req.code_len,
                          "arguments", j->req.arguments, "limits", limits);
    if (o && j->req.files)
        json_object_set(o, "files", j->req.files);
    /* The run-time half of the policy travels with the job (policies/README.md),
     * built when the policies were loaded (the networked variant's for a job
     * with network). */
    json_t *rt =
        gw_ruleset_runtime(j->a.rs, gw_admit_job_policy(&j->a), j->req.lang == SG_LANG_JAVASCRIPT);
    if (o && (!rt || json_object_set(o, "runtime", rt) < 0)) {
        json_decref(o);
        o = NULL;
    }
    if (o && j->a.an.stats.imports.count)
        json_object_set_new(o, "imports", imports_json(&j->a.an.stats.imports));
    if (o && j->a.net_allow)
        json_object_set_new(o, "network", json_pack("{s:O}", "allow", j->a.net_allow));
    if (o && j->stream)
        json_object_set_new(o, "stream", json_true());
    if (o && j->req.script)
        json_object_set_new(o, "mode", json_string("script"));
    if (o && j->req.flavour[0])
        json_object_set_new(o, "flavour", json_string(j->req.flavour));
    return o;
}

/* The built-in sink: the job's own SSE answer (POST /v1/run). */
static int own_start(void *ud)
{
    struct job *j = ud;
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", j->a.id);
    return gw_sse_out_begin(&j->out, j->hreq, &head);
}

static int own_event(void *ud, const char *name, const char *data, size_t len)
{
    struct job *j = ud;
    return gw_sse_out_event(&j->out, name, data, len);
}

/* The router's hooks (gw_relay.h) for a job. */
static void hook_attempt(void *ud, const char *executor)
{
    struct job *j = ud;
    long status = 0;
    /* A cancel that came before the executor was known goes there now; the
     * executor remembers it for the job about to arrive. */
    if (j->listed && gw_jobtab_set_executor(j->s->jobtab, j->a.id, executor))
        gw_router_cancel(j->s->router, executor, j->a.id, &status);
}

static int hook_start(void *ud)
{
    struct job *j = ud;
    return j->sink->start(j->sink->ud);
}

static int hook_event(void *ud, const char *name, const char *data, size_t len)
{
    struct job *j = ud;
    return j->sink->event(j->sink->ud, name, data, len);
}

static int hook_idle(void *ud)
{
    struct job *j = ud;
    return j->sink ? gw_sse_out_idle(j->sink->out) : 0;
}

static int hook_client_fd(void *ud)
{
    struct job *j = ud;
    return j->sink ? gw_sse_out_fd(j->sink->out) : -1;
}

/* The executor's refusal of a job no package set can serve (422
 * no_package_set: the modules it imports are in different sets): its
 * message, or NULL for any other failure. Caller frees. */
static char *no_package_set(const struct gw_exec_result *x)
{
    if (x->outcome != GW_EXEC_FAILED || x->http_status != 422 || !x->body)
        return NULL;
    json_t *b = json_loadb(x->body, x->body_len, 0, NULL);
    json_t *e = json_object_get(b, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    char *ret = code && strcmp(code, "no_package_set") == 0
                    ? strndup(msg ? msg : "no package set installs all of the job's modules", 400)
                    : NULL;
    json_decref(b);
    return ret;
}

static void exec_failed(struct job *j, struct sg_http_response *resp)
{
    const struct gw_exec_result *x = &j->ex;
    char *nps = no_package_set(x);
    if (nps) { /* the job's fault, not the executor's: never a 5xx */
        j->a.outcome = "no_package_set";
        if (j->a.ep == GW_EP_RUN)
            gw_respond_json(
                resp, 200, gw_result_runner_error(GW_EXEC_FAILED_EXIT_CODE, nps, "no_package_set"));
        else
            sg_http_error(resp, 422, "no_package_set", "%s", nps);
        free(nps);
        return;
    }
    int busy = x->outcome == GW_EXEC_BUSY;
    j->a.outcome = busy                                ? "executor_busy"
                   : x->outcome == GW_EXEC_UNREACHABLE ? "executor_unreachable"
                                                       : "executor_failed";
    sg_log(SG_LOG_WARN, "exec_failed", "job_id=%s outcome=%s attempts=%u msg=\"%s\"", j->a.id,
           j->a.outcome, x->attempts, x->message);
    if (busy && j->a.ep == GW_EP_RUN) /* RAGFlow's own manager: HTTP 200, exit_code -10 */
        return gw_respond_json(resp, 200, gw_result_pool_busy());
    if (x->outcome == GW_EXEC_FAILED && j->a.ep == GW_EP_RUN) /* may have run: no retry */
        return gw_respond_json(
            resp, 200,
            gw_result_runner_error(GW_EXEC_FAILED_EXIT_CODE,
                                   x->message[0] ? x->message : "the executor failed",
                                   "executor_failed"));
    sg_http_error(resp, busy ? 503 : 502, j->a.outcome, "%s",
                  x->message[0] ? x->message : "no executor could take the job");
    if (busy)
        sg_http_add_header(resp, "Retry-After", "1");
}

/* What the executor answers for a job cancelled before it was sent. */
static int cancelled_answer(struct gw_exec_result *ex)
{
    static const char body[] = "{\"status\":\"cancelled\",\"exit_code\":-130,"
                               "\"detail\":\"cancelled\",\"time_used_ms\":0}";
    free(ex->body);
    ex->body = strdup(body);
    ex->body_len = sizeof(body) - 1;
    ex->outcome = GW_EXEC_OK;
    return ex->body ? 0 : -ENOMEM;
}

/* Send the job (listed for cancel while it runs); fills j->ex. */
static void send_job(struct job *j, const char *text)
{
    const struct gw_exec_hooks hooks = {.attempt = hook_attempt,
                                        .start = j->stream ? hook_start : NULL,
                                        .event = j->stream ? hook_event : NULL,
                                        .idle = hook_idle,
                                        .client_fd = hook_client_fd,
                                        .ud = j,
                                        .answer_paid = GW_JOB_MEMORY_ANSWER};
    j->listed = gw_jobtab_add(j->s->jobtab, j->a.id, gw_admit_tenant_name(&j->a)) == 0;
    int cancelled = j->listed && gw_jobtab_cancel_asked(j->s->jobtab, j->a.id);
    if (!cancelled || cancelled_answer(&j->ex) < 0)
        gw_router_exec(j->s->router, j->req.lang, text, strlen(text),
                       job_timeout_ms(j) + j->s->cfg->exec_grace_ms, &hooks, &j->ex);
    if (j->listed)
        gw_jobtab_end(j->s->jobtab, j->a.id);
    snprintf(j->a.executor, sizeof(j->a.executor), "%s", j->ex.executor);
}

/* The executor's answer in the front door's shape. */
static void answer(struct job *j, json_t *ans, struct sg_http_response *resp)
{
    json_t *o = gw_result_from_executor(ans);
    json_t *rtv = gw_runtime_violations(ans);
    gw_admit_runtime(&j->a, rtv);
    if (json_is_object(json_object_get(ans, "sandbox")))
        j->a.sandbox = json_incref(json_object_get(ans, "sandbox"));
    if (j->a.net_allow && json_is_object(json_object_get(ans, "network"))) {
        j->a.net_result = json_incref(json_object_get(ans, "network"));
        gw_metrics_egress(j->s->metrics,
                          json_array_size(json_object_get(j->a.net_result, "allowed")),
                          json_array_size(json_object_get(j->a.net_result, "denied")));
    }
    gw_admit_outcome(&j->a, json_string_value(json_object_get(o, "status")));
    if (j->native && o) {
        add_native(j, o);
        json_object_set(o, "limits", json_object_get(ans, "limits"));
        json_object_set(o, "clamped", json_object_get(ans, "clamped"));
        json_object_set(json_object_get(o, "timings"), "executor", json_object_get(ans, "timings"));
        json_array_extend(json_object_get(o, "violations"), rtv);
        if (json_object_get(ans, "pool"))
            json_object_set(o, "pool", json_object_get(ans, "pool"));
        if (j->a.net_result)
            json_object_set(o, "network", j->a.net_result);
    } else if (o) {
        gw_result_ragflow_shape(o);
    }
    json_decref(rtv);
    gw_respond_json(resp, 200, o);
}

size_t gw_job_memory(size_t body_len)
{
    return GW_JOB_MEMORY_FIXED + GW_JOB_MEMORY_BODY_COPIES * body_len + GW_JOB_MEMORY_ANSWER;
}

static void execute(struct job *j, struct sg_http_response *resp)
{
    size_t mem = gw_job_memory(j->hreq ? j->hreq->body_len : 0);
    if (!sg_membudget_reserve(j->s->budget, mem)) {
        j->ex.outcome = GW_EXEC_BUSY;
        snprintf(j->ex.message, sizeof(j->ex.message),
                 "the gateway's memory budget is in use; retry shortly");
        return exec_failed(j, resp);
    }
    j->mem = mem;
    json_t *body = exec_body(j);
    char *text = body ? json_dumps(body, GW_JSON_FLAGS) : NULL;
    json_decref(body);
    if (!text) {
        sg_http_error(resp, 500, "internal", "cannot encode the job");
        return;
    }
    uint64_t t = gw_now_ns();
    send_job(j, text);
    free(text);
    j->a.exec_us = (gw_now_ns() - t) / 1000;
    gw_metrics_observe(j->s->metrics, GW_HIST_EXEC, j->a.exec_us);
    if (j->ex.client_gone) {
        j->a.outcome = "client_gone";
        sg_log(SG_LOG_INFO, "client_gone", "job_id=%s executor=%s", j->a.id, j->ex.executor);
        return sg_http_error(resp, 499, "client_gone", "the client went away; job cancelled");
    }
    if (j->ex.outcome != GW_EXEC_OK)
        return exec_failed(j, resp);
    json_t *ans = json_loadb(j->ex.body, j->ex.body_len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(ans)) {
        json_decref(ans);
        j->ex.outcome = GW_EXEC_FAILED;
        snprintf(j->ex.message, sizeof(j->ex.message), "executor %.200s answered invalid JSON",
                 j->ex.executor);
        return exec_failed(j, resp);
    }
    answer(j, ans, resp);
    json_decref(ans);
}

/* The pipeline; each step fills resp and stops the chain on failure. */
static void run_pipeline(struct job *j, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    struct gw_adm *a = &j->a;
    if ((j->door ? j->door->caller(a, req, resp, j->door->ud) : gw_admit_caller(a, req, resp)) < 0)
        return;
    if (gw_admit_rate(a, resp) < 0) {
        if (a->ep == GW_EP_RUN) /* RAGFlow's manager: 429 in its result shape */
            gw_respond_json(resp, 429,
                            gw_result_runner_error(GW_RATE_LIMITED_EXIT_CODE,
                                                   GW_RATE_LIMITED_STDERR, "rate_limited"));
        return;
    }
    if (parse_body(j, req, resp) < 0)
        return;
    const char *accept = sg_http_header(req, "Accept");
    if (a->ep == GW_EP_V1_RUN && (j->req.stream || (accept && strstr(accept, "text/event-stream"))))
        j->sink = &j->own;
    j->stream = j->sink && j->kind == GW_REQ_RUN;
    if (gw_admit_policy(a, j->req.policy, resp) < 0 || select_network(j, resp) < 0 ||
        gw_admit_analyze(a, j->req.code, j->req.code_len, resp) < 0)
        return;
    if (j->kind == GW_REQ_ANALYZE) {
        a->outcome = a->an.accepted ? "accepted" : "rejected";
        return respond_analysis(j, resp);
    }
    if (!a->an.accepted) {
        a->outcome = "rejected";
        json_t *o = gw_result_rejected(&a->an.violations);
        if (o && j->native)
            add_native(j, o);
        return gw_respond_json(resp, 200, o);
    }
    execute(j, resp);
}

/* A streamed answer ends with the body as its result event. A job answered
 * before it ran (a policy rejection) is streamed as that one event; an error
 * before the stream began keeps its status code. */
static void stream_finish(struct job *j, struct sg_http_response *resp)
{
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", j->a.id);
    gw_sse_out_finish(&j->out, j->hreq, &head, resp);
}

static void handle(struct job *jp, enum gw_endpoint ep, const char *tool, const char *id,
                   const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct job j = *jp;
    gw_admit_begin(&j.a, j.s, ep, tool, req, id);
    j.hreq = req;
    j.own = (struct gw_job_sink){own_start, own_event, &j.out, &j};
    run_pipeline(&j, req, resp);
    if (j.door) {
        gw_admit_settle(&j.a, resp);
        j.door->answer(&j.a, resp, j.door->ud);
    }
    gw_admit_finish(&j.a, resp);
    if (j.sink == &j.own)
        stream_finish(&j, resp);
    else if (j.a.ep != GW_EP_MCP) { /* the server's answer: the executor's held until sent */
        resp->held += j.ex.mem;
        j.ex.mem = 0;
    }
    gw_exec_result_free(&j.ex);
    gw_request_free(&j.req);
    gw_admit_end(&j.a);
    sg_membudget_release(j.s->budget, j.mem);
}

void gw_jobs_handle(const struct gw_services *s, enum gw_endpoint ep,
                    const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct job j = {.s = s, .native = ep != GW_EP_RUN};
    j.kind = ep == GW_EP_RUN      ? GW_REQ_RAGFLOW_RUN
             : ep == GW_EP_V1_RUN ? GW_REQ_RUN
                                  : GW_REQ_ANALYZE;
    handle(&j, ep, NULL, NULL, req, resp);
}

void gw_jobs_tool(const struct gw_services *s, const char *tool, enum gw_req_kind kind,
                  const struct sg_http_request *req, const struct gw_job_sink *sink,
                  const char *job_id, struct sg_http_response *resp)
{
    struct job j = {.s = s, .kind = kind, .native = 1, .sink = sink};
    handle(&j, GW_EP_MCP, tool, job_id, req, resp);
}

void gw_jobs_door(const struct gw_services *s, enum gw_endpoint ep, const struct gw_door *door,
                  const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct job j = {.s = s, .kind = GW_REQ_RUN, .native = 1, .door = door};
    handle(&j, ep, NULL, NULL, req, resp);
}

void gw_jobs_tool_note(const struct gw_services *s, const char *tool,
                       const struct gw_tenant *tenant, const struct sg_http_request *req,
                       struct sg_http_response *resp, const char *outcome)
{
    struct gw_adm a;
    gw_admit_begin(&a, s, GW_EP_MCP, tool, req, NULL);
    a.tenant = tenant;
    a.outcome = outcome;
    gw_admit_finish(&a, resp);
    gw_admit_end(&a);
}

void gw_jobs_refused(const struct gw_services *s, enum gw_endpoint ep,
                     const struct gw_tenant *tenant, const struct sg_http_request *req,
                     struct sg_http_response *resp)
{
    struct gw_adm a;
    gw_admit_begin(&a, s, ep, NULL, req, NULL);
    a.tenant = tenant;
    gw_admit_finish(&a, resp);
    gw_admit_end(&a);
}

/* The job id in /v1/jobs/{job_id}/cancel, or -EINVAL. */
static int cancel_path_id(const char *url, char out[GW_JOBTAB_ID_MAX + 1])
{
    static const char prefix[] = "/v1/jobs/", suffix[] = "/cancel";
    size_t pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1, n = strlen(url);
    if (n <= pl + sl || n - pl - sl > GW_JOBTAB_ID_MAX || strncmp(url, prefix, pl) != 0 ||
        strcmp(url + n - sl, suffix) != 0)
        return -EINVAL;
    for (size_t i = pl; i < n - sl; i++)
        if (!strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-", url[i]))
            return -EINVAL;
    memcpy(out, url + pl, n - pl - sl);
    out[n - pl - sl] = '\0';
    return 0;
}

static void cancel_job(struct gw_adm *a, const char *url, struct sg_http_response *resp)
{
    char id[GW_JOBTAB_ID_MAX + 1], exec[GW_URL_MAX];
    if (cancel_path_id(url, id) < 0)
        return sg_http_error(resp, 404, "job_not_found", "no such job");
    enum gw_jobtab_state st = gw_jobtab_cancel(a->s->jobtab, id, gw_admit_tenant_name(a), exec);
    if (st == GW_JOB_UNKNOWN)
        return sg_http_error(resp, 404, "job_not_found", "no job %s", id);
    if (st == GW_JOB_ENDED)
        return sg_http_error(resp, 409, "job_ended", "job %s has already ended", id);
    long status = 0;
    if (exec[0] && (gw_router_cancel(a->s->router, exec, id, &status) < 0 || status != 202))
        sg_log(SG_LOG_WARN, "cancel_failed", "job_id=%s executor=%s status=%ld", id, exec, status);
    sg_log(SG_LOG_INFO, "cancel", "job_id=%s request_id=%s executor=%s", id, a->id,
           exec[0] ? exec : "-");
    a->outcome = "cancel_sent";
    gw_respond_json(resp, 202, json_pack("{s:s,s:s}", "job_id", id, "status", "cancelling"));
}

void gw_jobs_cancel(const struct gw_services *s, const struct sg_http_request *req,
                    struct sg_http_response *resp)
{
    struct gw_adm a;
    gw_admit_begin(&a, s, GW_EP_V1_CANCEL, NULL, req, NULL);
    if (gw_admit_caller(&a, req, resp) == 0)
        cancel_job(&a, req->url, resp);
    gw_admit_finish(&a, resp);
    gw_admit_end(&a);
}
