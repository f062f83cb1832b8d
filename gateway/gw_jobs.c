#include "gw_jobs.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "analyze.h"
#include "gw_audit_detail.h"
#include "gw_info.h"
#include "gw_request.h"
#include "gw_respond.h"
#include "gw_util.h"
#include "log.h"
#include "rules.h"
#include "sha256.h"
#include "verdict_cache.h"

#define ANONYMOUS "anonymous"

struct job {
    const struct gw_jobs *s;
    enum gw_endpoint ep;
    enum gw_req_kind kind;
    int native;       /* the answer has the /v1 fields (job_id, policy, timings...) */
    const char *tool; /* MCP tool name, NULL for the HTTP endpoints */
    char id[17];
    const char *peer;
    struct gw_ruleset *rs;
    const struct gw_tenant *tenant;
    uint64_t max_timeout_ms, max_memory_mb; /* the tenant's caps, set after authentication */
    struct gw_request req;
    int parsed;
    const struct sg_policy *policy;
    struct sg_analysis an;
    int analyzed;
    int cached; /* the analysis came from the verdict cache */
    struct gw_exec_result ex;
    json_t *net_allow;   /* the job's canonical allow-list, or NULL: no network */
    json_t *net_result;  /* the executor's {allowed, denied}, or NULL */
    json_t *sandbox;     /* the executor's sandbox facts (runtime, runsc version), or NULL */
    json_t *rt_rules;    /* run-time rules the sandbox reported (audit), or NULL */
    const char *outcome; /* executor status or error code, for the audit line */
    char outcome_buf[48];
    char sha[SG_SHA256_HEX_LEN + 1];
    uint64_t t0, analysis_us, exec_us;
    int stream;                         /* the executor streams to sink */
    const struct gw_job_sink *sink;     /* where the events go, NULL: nowhere */
    const struct sg_http_request *hreq; /* the request, to begin the stream on */
    struct gw_sse_out out;              /* the built-in sink's SSE answer */
    struct gw_job_sink own;             /* the built-in sink (POST /v1/run) */
    int listed;                         /* in the table of jobs in flight */
};

static const char *tenant_name(const struct job *j)
{
    return j->tenant ? j->tenant->name : ANONYMOUS;
}

static double ms(uint64_t us)
{
    return (double)us / 1000.0;
}

static int rate_limit(struct job *j, struct sg_http_response *resp)
{
    const struct gw_config *c = j->s->cfg;
    uint64_t rate = j->tenant ? j->tenant->rate : c->anonymous_rate;
    uint64_t burst = j->tenant ? j->tenant->burst : c->anonymous_burst;
    uint64_t retry_ms = 0;
    if (gw_ratelimit_take(j->s->ratelimit, j->tenant ? j->tenant->name : ANONYMOUS, rate, burst,
                          gw_now_ns(), &retry_ms))
        return 0;
    char secs[24];
    snprintf(secs, sizeof(secs), "%llu", (unsigned long long)((retry_ms + 999) / 1000));
    sg_http_error(resp, 429, "rate_limited",
                  "rate limit of %llu requests/s exceeded; retry "
                  "after %s s",
                  (unsigned long long)rate, secs);
    sg_http_add_header(resp, "Retry-After", secs);
    return -EAGAIN;
}

static uint64_t tenant_cap(uint64_t cfg_max, uint64_t tenant_max)
{
    return tenant_max && tenant_max < cfg_max ? tenant_max : cfg_max;
}

/* Who is asking, and so how far their limits may go: worked out once. */
static int authenticate(struct job *j, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    if (gw_tenants_authenticate(j->rs->tenants, req, resp, &j->tenant) < 0)
        return -EACCES;
    const struct gw_config *c = j->s->cfg;
    j->max_timeout_ms = tenant_cap(c->max_timeout_ms, j->tenant ? j->tenant->max_timeout_ms : 0);
    j->max_memory_mb = tenant_cap(c->max_memory_mb, j->tenant ? j->tenant->max_memory_mb : 0);
    return 0;
}

static int parse_body(struct job *j, const struct sg_http_request *req,
                      struct sg_http_response *resp)
{
    const struct gw_config *c = j->s->cfg;
    struct gw_caps caps = {
        .max_code_bytes = c->max_code_bytes,
        .max_arguments_bytes = c->max_arguments_bytes,
        .max_arguments_depth = c->max_arguments_depth,
        .max_files = c->max_files,
        .max_files_bytes = c->max_files_bytes,
        .max_timeout_ms = j->max_timeout_ms,
        .max_memory_mb = j->max_memory_mb,
    };
    struct gw_req_error e;
    if (gw_request_parse(j->kind, req->body, req->body_len, &caps, &j->req, &e) < 0) {
        sg_http_error(resp, e.status, e.code, "%s", e.message);
        return -EINVAL;
    }
    j->parsed = 1;
    sg_sha256_hex(j->req.code, j->req.code_len, j->sha);
    return 0;
}

static int select_policy(struct job *j, struct sg_http_response *resp)
{
    const char *want = j->req.policy;
    if (*want && j->tenant) {
        const struct sg_policy *def = gw_ruleset_policy(j->rs, j->tenant, NULL);
        if (!gw_tenant_may_use(j->tenant, want) && !(def && strcmp(def->name, want) == 0)) {
            sg_http_error(resp, 403, "policy_not_allowed",
                          "policy: tenant %s may not select "
                          "'%s'",
                          j->tenant->name, want);
            return -EPERM;
        }
    }
    j->policy = gw_ruleset_policy(j->rs, j->tenant, want);
    if (!j->policy) {
        sg_http_error(resp, 400, "unknown_policy", "policy: '%s' is not loaded", want);
        return -ENOENT;
    }
    return 0;
}

/* The job's network (gw_egress.h): what /v1/run asked for, within the
 * tenant's allow-list, or for RAGFlow's /run the tenant's default list. */
static int select_network(struct job *j, struct sg_http_response *resp)
{
    struct sg_error e = {0};
    if (j->kind != GW_REQ_RAGFLOW_RUN && !j->req.network)
        return 0;
    json_t *want = j->req.network ? json_object_get(j->req.network, "allow") : NULL;
    int r = gw_egress_job_list(j->tenant ? &j->tenant->egress : NULL, want, &j->net_allow, &e);
    if (r == -EACCES)
        sg_http_error(resp, 403, "network_not_allowed", "%s", e.msg);
    else if (r < 0)
        sg_http_error(resp, 400, "bad_network", "%s", e.msg);
    return r;
}

/* The policy as this job sees it: its networked variant when it has network. */
static const struct sg_policy *job_policy(const struct job *j)
{
    return j->net_allow ? j->policy->network : j->policy;
}

/* The verdict cache first (the key needs the code's sha256, which the audit
 * line has anyway); a miss analyses and stores the result. */
static int analyze_or_reuse(struct job *j, struct sg_error *err)
{
    uint8_t key[SG_VCACHE_KEY_LEN];
    struct sg_vcache *vc = j->s->vcache;
    if (vc) {
        sg_vcache_key(job_policy(j)->sha256, j->req.lang, j->sha, key);
        j->cached = sg_vcache_get(vc, key, &j->an) == 1;
        if (j->cached)
            return 0;
    }
    int r = sg_analyze(job_policy(j), j->req.lang, j->req.code, j->req.code_len, &j->an, err);
    if (r == 0 && vc && sg_vcache_put(vc, key, &j->an) < 0)
        sg_log(SG_LOG_WARN, "analysis_cache", "job_id=%s error=\"out of memory\"", j->id);
    return r;
}

static int analyze(struct job *j, struct sg_http_response *resp)
{
    struct sg_error err = {0};
    uint64_t t = gw_now_ns();
    int r = analyze_or_reuse(j, &err);
    j->analysis_us = (gw_now_ns() - t) / 1000;
    gw_metrics_observe(j->s->metrics, GW_HIST_ANALYSIS, j->analysis_us);
    if (r < 0) {
        sg_log(SG_LOG_ERROR, "analysis_failed", "job_id=%s error=\"%s\"", j->id, err.msg);
        sg_http_error(resp, 500, "internal", "analysis failed: %s", err.msg);
        return r;
    }
    j->analyzed = 1;
    gw_metrics_verdict(j->s->metrics, j->an.accepted);
    for (size_t i = 0; i < j->an.violations.count; i++)
        gw_metrics_rule(j->s->metrics, j->an.violations.items[i].rule);
    return 0;
}

static json_t *policy_json(const struct sg_policy *p)
{
    return json_pack("{s:s,s:s}", "name", p->name, "sha256", p->sha256);
}

static json_t *timings_json(const struct job *j)
{
    return json_pack("{s:f,s:b,s:f,s:f}", "analysis_ms", ms(j->analysis_us), "cached", j->cached,
                     "exec_ms", ms(j->exec_us), "total_ms", ms((gw_now_ns() - j->t0) / 1000));
}

/* Native endpoints add the job id, policy, violations and timings. */
static void add_native(struct job *j, json_t *o)
{
    json_object_set_new(o, "job_id", json_string(j->id));
    json_object_set_new(o, "policy", policy_json(j->policy));
    if (!json_object_get(o, "violations"))
        json_object_set_new(o, "violations", sg_violations_to_json(&j->an.violations));
    json_object_set_new(o, "timings", timings_json(j));
}

static void respond_analysis(struct job *j, struct sg_http_response *resp)
{
    const struct sg_analysis_stats *st = &j->an.stats;
    /* a cached answer reports 0 for the phases: nothing was parsed */
    json_t *o = json_pack(
        "{s:s,s:o,s:o,s:{s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:b}}", "verdict",
        j->an.accepted ? "accept" : "reject", "violations",
        sg_violations_to_json(&j->an.violations), "policy", policy_json(j->policy), "stats",
        "source_bytes", (json_int_t)st->source_bytes, "nodes", (json_int_t)st->nodes, "max_depth",
        (json_int_t)st->max_depth, "canon_ms", ms(st->canon_us), "parse_ms", ms(st->parse_us),
        "eval_ms", ms(st->eval_us), "analysis_ms", ms(j->analysis_us), "cached", j->cached);
    if (o)
        json_object_set_new(o, "dropped_violations",
                            json_integer((json_int_t)j->an.violations.dropped));
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
    return t < j->max_timeout_ms ? t : j->max_timeout_ms;
}

static json_t *exec_body(struct job *j)
{
    const struct gw_config *c = j->s->cfg;
    uint64_t m = j->req.memory_mb ? j->req.memory_mb : c->default_memory_mb;
    json_t *limits =
        json_pack("{s:I,s:I}", "timeout_ms", (json_int_t)job_timeout_ms(j), "memory_mb",
                  (json_int_t)(m < j->max_memory_mb ? m : j->max_memory_mb));
    if (limits && c->enable_seccomp >= 0)
        json_object_set_new(limits, "enable_seccomp", json_boolean(c->enable_seccomp));
    /* s% checks UTF-8: the analysis already refused anything else. */
    json_t *o = json_pack("{s:s,s:s,s:s%,s:O,s:o}", "job_id", j->id, "language",
                          sg_lang_name(j->req.lang), "code", j->req.code, j->req.code_len,
                          "arguments", j->req.arguments, "limits", limits);
    if (o && j->req.files)
        json_object_set(o, "files", j->req.files);
    /* The run-time half of the policy travels with the job (policies/README.md),
     * built when the policies were loaded (the networked variant's for a job
     * with network). */
    json_t *rt = gw_ruleset_runtime(j->rs, job_policy(j), j->req.lang == SG_LANG_JAVASCRIPT);
    if (o && (!rt || json_object_set(o, "runtime", rt) < 0)) {
        json_decref(o);
        o = NULL;
    }
    if (o && j->an.stats.imports.count)
        json_object_set_new(o, "imports", imports_json(&j->an.stats.imports));
    if (o && j->net_allow)
        json_object_set_new(o, "network", json_pack("{s:O}", "allow", j->net_allow));
    if (o && j->stream)
        json_object_set_new(o, "stream", json_true());
    return o;
}

/* The built-in sink: the job's own SSE answer (POST /v1/run). */
static int own_start(void *ud)
{
    struct job *j = ud;
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", j->id);
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
    if (j->listed && gw_jobtab_set_executor(j->s->jobtab, j->id, executor))
        gw_router_cancel(j->s->router, executor, j->id, &status);
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

/* Run-time stops count by rule and go to the audit line. */
static void record_runtime(struct job *j, json_t *rtv)
{
    size_t i;
    json_t *v;
    json_array_foreach(rtv, i, v)
    {
        const char *rule = json_string_value(json_object_get(v, "rule"));
        gw_metrics_rule(j->s->metrics, rule);
        if (!j->rt_rules)
            j->rt_rules = json_array();
        json_array_append_new(j->rt_rules, json_string(rule));
    }
}

static void exec_failed(struct job *j, struct sg_http_response *resp)
{
    const struct gw_exec_result *x = &j->ex;
    int busy = x->outcome == GW_EXEC_BUSY;
    j->outcome = busy                                ? "executor_busy"
                 : x->outcome == GW_EXEC_UNREACHABLE ? "executor_unreachable"
                                                     : "executor_failed";
    sg_log(SG_LOG_WARN, "exec_failed", "job_id=%s outcome=%s attempts=%u msg=\"%s\"", j->id,
           j->outcome, x->attempts, x->message);
    if (busy && j->ep == GW_EP_RUN) /* RAGFlow's own manager: HTTP 200, exit_code -10 */
        return gw_respond_json(resp, 200, gw_result_pool_busy());
    sg_http_error(resp, busy ? 503 : 502, j->outcome, "%s",
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
                                        .ud = j};
    j->listed = gw_jobtab_add(j->s->jobtab, j->id, tenant_name(j)) == 0;
    int cancelled = j->listed && gw_jobtab_cancel_asked(j->s->jobtab, j->id);
    if (!cancelled || cancelled_answer(&j->ex) < 0)
        gw_router_exec(j->s->router, j->req.lang, text, strlen(text),
                       job_timeout_ms(j) + j->s->cfg->exec_grace_ms, &hooks, &j->ex);
    if (j->listed)
        gw_jobtab_end(j->s->jobtab, j->id);
}

static void execute(struct job *j, struct sg_http_response *resp)
{
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
    j->exec_us = (gw_now_ns() - t) / 1000;
    gw_metrics_observe(j->s->metrics, GW_HIST_EXEC, j->exec_us);
    if (j->ex.client_gone) {
        j->outcome = "client_gone";
        sg_log(SG_LOG_INFO, "client_gone", "job_id=%s executor=%s", j->id, j->ex.executor);
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
    json_t *o = gw_result_from_executor(ans);
    json_t *rtv = gw_runtime_violations(ans);
    if (json_is_object(json_object_get(ans, "sandbox")))
        j->sandbox = json_incref(json_object_get(ans, "sandbox"));
    record_runtime(j, rtv);
    if (j->net_allow && json_is_object(json_object_get(ans, "network"))) {
        j->net_result = json_incref(json_object_get(ans, "network"));
        gw_metrics_egress(j->s->metrics, json_array_size(json_object_get(j->net_result, "allowed")),
                          json_array_size(json_object_get(j->net_result, "denied")));
    }
    const char *st = json_string_value(json_object_get(o, "status"));
    snprintf(j->outcome_buf, sizeof(j->outcome_buf), "%s", st ? st : "unknown");
    j->outcome = j->outcome_buf;
    if (j->native && o) {
        add_native(j, o);
        json_object_set(o, "limits", json_object_get(ans, "limits"));
        json_object_set(o, "clamped", json_object_get(ans, "clamped"));
        json_object_set(json_object_get(o, "timings"), "executor", json_object_get(ans, "timings"));
        json_array_extend(json_object_get(o, "violations"), rtv);
        if (json_object_get(ans, "pool"))
            json_object_set(o, "pool", json_object_get(ans, "pool"));
        if (j->net_result)
            json_object_set(o, "network", j->net_result);
    } else if (o) {
        gw_result_ragflow_shape(o);
    }
    json_decref(rtv);
    json_decref(ans);
    gw_respond_json(resp, 200, o);
}

/* One audit line: who, what (length and sha256, never the code), under which
 * policy, the verdict and rules, where it ran, and how long each step took. */
static void audit(struct job *j, int status)
{
    char when[64];
    gw_iso_time(when);
    json_t *rules = json_array();
    for (size_t i = 0; rules && j->analyzed && i < j->an.violations.count; i++)
        json_array_append_new(rules, json_string(j->an.violations.items[i].rule));
    if (rules && j->rt_rules)
        json_array_extend(rules, j->rt_rules);
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s?,s:s,s:s,s:s?,s:I,s:s?,s:s?,s:s?,s:s?,s:o,s:b,s:s?,s:i,s:s?,s:f,s:f,"
        "s:f}",
        "time", when, "request_id", j->id, "endpoint", gw_endpoint_name(j->ep), "tool", j->tool,
        "tenant", j->tenant ? j->tenant->name : ANONYMOUS, "peer", j->peer, "language",
        j->parsed ? sg_lang_name(j->req.lang) : NULL, "code_bytes",
        (json_int_t)(j->parsed ? j->req.code_len : 0), "code_sha256", j->parsed ? j->sha : NULL,
        "policy", j->policy ? j->policy->name : NULL, "policy_sha256",
        j->policy ? j->policy->sha256 : NULL, "verdict",
        j->analyzed ? (j->an.accepted ? "accept" : "reject") : NULL, "rules", rules,
        "analysis_cached", j->cached, "executor", j->ex.executor[0] ? j->ex.executor : NULL,
        "status", status, "outcome", j->outcome, "analysis_ms", ms(j->analysis_us), "exec_ms",
        ms(j->exec_us), "total_ms", ms((gw_now_ns() - j->t0) / 1000));
    if (o && j->net_allow)
        json_object_set_new(
            o, "network",
            json_pack("{s:O,s:O?}", "allow", j->net_allow, "decisions", j->net_result));
    if (o && j->sandbox)
        json_object_set(o, "sandbox", j->sandbox);
    gw_audit_detail_add(o, j->tenant, j->analyzed ? &j->an.violations : NULL,
                        j->analyzed && !j->an.accepted, j->parsed ? j->req.code : NULL,
                        j->parsed ? j->req.code_len : 0);
    char *line = o ? gw_audit_detail_fit(o, GW_JSON_FLAGS) : NULL;
    if (line)
        gw_audit_write(j->s->audit, line, strlen(line));
    free(line);
    json_decref(o);
}

/* An accepted job importing a module that no image or package set
 * installs is rejected here, saying so, rather than failing at run time. */
static void require_installed(struct job *j)
{
    char mod[SG_IMPORTS_TEXT_MAX];
    if (gw_info_missing_import(j->s->router, j->req.lang, j->an.stats.imports.text, j->req.files,
                               mod, sizeof(mod)) <= 0)
        return;
    const char *at = memmem(j->req.code, j->req.code_len, mod, strlen(mod));
    size_t off = at ? (size_t)(at - j->req.code) : 0;
    struct sg_span span;
    sg_span_from_bytes(j->req.code, j->req.code_len, off, at ? off + strlen(mod) : 0, &span);
    sg_violations_add(&j->an.violations, SG_RULE_IMPORT_NOT_INSTALLED, &span, j->req.code,
                      j->req.code_len,
                      "module '%s' is not installed: no image or package set of the %s "
                      "executors provides it (declare it in a package set: "
                      "docs/images.md, \"Adding packages\")",
                      mod, sg_lang_name(j->req.lang));
    j->an.accepted = 0;
}

/* The pipeline; each step fills resp and stops the chain on failure. */
static void run_pipeline(struct job *j, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    if (authenticate(j, req, resp) < 0 || rate_limit(j, resp) < 0 || parse_body(j, req, resp) < 0)
        return;
    const char *accept = sg_http_header(req, "Accept");
    if (j->ep == GW_EP_V1_RUN && (j->req.stream || (accept && strstr(accept, "text/event-stream"))))
        j->sink = &j->own;
    j->stream = j->sink && j->kind == GW_REQ_RUN;
    if (select_policy(j, resp) < 0 || select_network(j, resp) < 0 || analyze(j, resp) < 0)
        return;
    if (j->kind == GW_REQ_ANALYZE) {
        j->outcome = j->an.accepted ? "accept" : "reject";
        return respond_analysis(j, resp);
    }
    if (j->an.accepted)
        require_installed(j);
    if (!j->an.accepted) {
        j->outcome = "rejected";
        json_t *o = gw_result_rejected(&j->an.violations);
        if (o && j->native)
            add_native(j, o);
        return gw_respond_json(resp, 200, o);
    }
    execute(j, resp);
}

/* The request's end: its id on the answer, the audit line, the metrics. */
static void finish(struct job *j, struct sg_http_response *resp)
{
    if (resp->status >= 400 && !j->outcome)
        j->outcome = resp->error_code ? resp->error_code : "error";
    sg_http_add_header(resp, "X-Request-Id", j->id);
    audit(j, resp->status);
    sg_log(SG_LOG_DEBUG, "job",
           "job_id=%s endpoint=%s status=%d outcome=%s code_len=%zu "
           "code_sha256=%s",
           j->id, gw_endpoint_name(j->ep), resp->status, j->outcome,
           j->parsed ? j->req.code_len : 0, j->parsed ? j->sha : "-");
    gw_metrics_observe(j->s->metrics, GW_HIST_TOTAL, (gw_now_ns() - j->t0) / 1000);
}

/* A streamed answer ends with the body as its result event. A job answered
 * before it ran (a policy rejection) is streamed as that one event; an error
 * before the stream began keeps its status code. */
static void stream_finish(struct job *j, struct sg_http_response *resp)
{
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", j->id);
    gw_sse_out_finish(&j->out, j->hreq, &head, resp);
}

static void handle(struct job *jp, const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct job j = *jp;
    j.t0 = gw_now_ns();
    j.peer = req->peer;
    j.hreq = req;
    j.own = (struct gw_job_sink){own_start, own_event, &j.out, &j};
    if (!j.id[0]) /* else the caller's (an MCP call, cancellable by it) */
        gw_request_id(j.id);
    j.rs = gw_ruleset_slot_get(j.s->rules);
    run_pipeline(&j, req, resp);
    finish(&j, resp);
    if (j.sink == &j.own)
        stream_finish(&j, resp);
    gw_exec_result_free(&j.ex);
    json_decref(j.rt_rules);
    json_decref(j.net_allow);
    json_decref(j.net_result);
    json_decref(j.sandbox);
    if (j.analyzed)
        sg_analysis_free(&j.an);
    gw_request_free(&j.req);
    gw_ruleset_unref(j.rs);
}

void gw_jobs_handle(const struct gw_jobs *s, enum gw_endpoint ep, const struct sg_http_request *req,
                    struct sg_http_response *resp)
{
    struct job j = {.s = s, .ep = ep, .native = ep != GW_EP_RUN};
    j.kind = ep == GW_EP_RUN      ? GW_REQ_RAGFLOW_RUN
             : ep == GW_EP_V1_RUN ? GW_REQ_RUN
                                  : GW_REQ_ANALYZE;
    handle(&j, req, resp);
}

void gw_jobs_tool(const struct gw_jobs *s, const char *tool, enum gw_req_kind kind,
                  const struct sg_http_request *req, const struct gw_job_sink *sink,
                  const char *job_id, struct sg_http_response *resp)
{
    struct job j = {.s = s, .ep = GW_EP_MCP, .kind = kind, .native = 1, .tool = tool, .sink = sink};
    if (job_id)
        snprintf(j.id, sizeof(j.id), "%s", job_id);
    handle(&j, req, resp);
}

void gw_jobs_tool_note(const struct gw_jobs *s, const char *tool, const struct gw_tenant *tenant,
                       const struct sg_http_request *req, struct sg_http_response *resp,
                       const char *outcome)
{
    struct job j = {.s = s,
                    .ep = GW_EP_MCP,
                    .tool = tool,
                    .peer = req->peer,
                    .t0 = gw_now_ns(),
                    .tenant = tenant,
                    .outcome = outcome};
    gw_request_id(j.id);
    finish(&j, resp);
}

void gw_jobs_refused(const struct gw_jobs *s, enum gw_endpoint ep, const struct gw_tenant *tenant,
                     const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct job j = {.s = s, .ep = ep, .peer = req->peer, .t0 = gw_now_ns(), .tenant = tenant};
    gw_request_id(j.id);
    finish(&j, resp);
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

static void cancel_job(struct job *j, const char *url, struct sg_http_response *resp)
{
    char id[GW_JOBTAB_ID_MAX + 1], exec[GW_URL_MAX];
    if (cancel_path_id(url, id) < 0)
        return sg_http_error(resp, 404, "job_not_found", "no such job");
    enum gw_jobtab_state st = gw_jobtab_cancel(j->s->jobtab, id, tenant_name(j), exec);
    if (st == GW_JOB_UNKNOWN)
        return sg_http_error(resp, 404, "job_not_found", "no job %s", id);
    if (st == GW_JOB_ENDED)
        return sg_http_error(resp, 409, "job_ended", "job %s has already ended", id);
    long status = 0;
    if (exec[0] && (gw_router_cancel(j->s->router, exec, id, &status) < 0 || status != 202))
        sg_log(SG_LOG_WARN, "cancel_failed", "job_id=%s executor=%s status=%ld", id, exec, status);
    sg_log(SG_LOG_INFO, "cancel", "job_id=%s request_id=%s executor=%s", id, j->id,
           exec[0] ? exec : "-");
    j->outcome = "cancel_sent";
    gw_respond_json(resp, 202, json_pack("{s:s,s:s}", "job_id", id, "status", "cancelling"));
}

void gw_jobs_cancel(const struct gw_jobs *s, const struct sg_http_request *req,
                    struct sg_http_response *resp)
{
    struct job j = {.s = s, .ep = GW_EP_V1_CANCEL, .peer = req->peer, .t0 = gw_now_ns()};
    gw_request_id(j.id);
    j.rs = gw_ruleset_slot_get(j.s->rules);
    if (authenticate(&j, req, resp) == 0)
        cancel_job(&j, req->url, resp);
    finish(&j, resp);
    gw_ruleset_unref(j.rs);
}
