#include "gw_admit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_audit_detail.h"
#include "gw_egress.h"
#include "gw_installed.h"
#include "gw_respond.h"
#include "gw_util.h"
#include "log.h"
#include "rules.h"

double gw_admit_ms(uint64_t us)
{
    return (double)us / 1000.0;
}

void gw_admit_begin(struct gw_adm *a, const struct gw_services *s, enum gw_endpoint ep,
                    const char *tool, const struct sg_http_request *req, const char *id)
{
    memset(a, 0, sizeof(*a));
    a->s = s;
    a->ep = ep;
    a->tool = tool;
    a->method = req->method;
    a->peer = req->peer;
    a->t0 = gw_now_ns();
    if (id && *id)
        snprintf(a->id, sizeof(a->id), "%s", id);
    else
        gw_request_id(a->id);
    a->rs = gw_ruleset_slot_get(s->rules);
}

const char *gw_admit_tenant_name(const struct gw_adm *a)
{
    return a->tenant ? a->tenant->name : GW_ADMIT_ANONYMOUS;
}

static uint64_t tenant_cap(uint64_t cfg_max, uint64_t tenant_max)
{
    return tenant_max && tenant_max < cfg_max ? tenant_max : cfg_max;
}

static void set_caps(struct gw_adm *a)
{
    const struct gw_config *c = a->s->cfg;
    a->caps = (struct gw_caps){
        .max_code_bytes = c->max_code_bytes,
        .max_arguments_bytes = c->max_arguments_bytes,
        .max_arguments_depth = c->max_arguments_depth,
        .max_files = c->max_files,
        .max_files_bytes = c->max_files_bytes,
        .max_timeout_ms = tenant_cap(c->max_timeout_ms, a->tenant ? a->tenant->max_timeout_ms : 0),
        .max_memory_mb = tenant_cap(c->max_memory_mb, a->tenant ? a->tenant->max_memory_mb : 0),
    };
}

int gw_admit_caller(struct gw_adm *a, const struct sg_http_request *req,
                    struct sg_http_response *resp)
{
    if (gw_tenants_authenticate(a->rs->tenants, req, resp, &a->tenant) < 0)
        return -EACCES;
    set_caps(a);
    return 0;
}

/* Equal without returning early: the time says nothing of the key. */
static bool same_key(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = la != lb;
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return diff == 0;
}

int gw_admit_caller_key(struct gw_adm *a, const char *key, const char *anonymous_key,
                        struct sg_http_response *resp)
{
    size_t n = key ? strlen(key) : 0;
    if (a->rs->tenants)
        a->tenant = n ? gw_tenants_lookup(a->rs->tenants, key, n) : NULL;
    bool ok = a->rs->tenants ? a->tenant != NULL
                             : n && anonymous_key && *anonymous_key && same_key(key, anonymous_key);
    if (!ok) {
        free(resp->body);
        resp->body = strdup("");
        resp->body_len = 0;
        resp->status = 401;
        a->outcome = "unauthorized";
        return -EACCES;
    }
    set_caps(a);
    return 0;
}

int gw_admit_rate(struct gw_adm *a, struct sg_http_response *resp)
{
    const struct gw_config *c = a->s->cfg;
    uint64_t rate = a->tenant ? a->tenant->rate : c->anonymous_rate;
    uint64_t burst = a->tenant ? a->tenant->burst : c->anonymous_burst;
    uint64_t retry_ms = 0;
    if (gw_ratelimit_take(a->s->ratelimit, gw_admit_tenant_name(a), rate, burst, gw_now_ns(),
                          &retry_ms))
        return 0;
    char secs[24];
    snprintf(secs, sizeof(secs), "%llu", (unsigned long long)((retry_ms + 999) / 1000));
    sg_http_error(resp, 429, "rate_limited",
                  "rate limit of %llu requests/s exceeded; retry after %s s",
                  (unsigned long long)rate, secs);
    sg_http_add_header(resp, "Retry-After", secs);
    a->outcome = "rate_limited";
    return -EAGAIN;
}

void gw_admit_code(struct gw_adm *a, enum sg_lang lang, const char *code, size_t len)
{
    a->has_code = true;
    a->lang = lang;
    a->code_len = len;
    /* A prefix ending on a UTF-8 character boundary, one character longer
     * than what the audit keeps, so gw_audit_detail_add still sees whether
     * the code was longer than that and whether it is valid UTF-8. */
    size_t head = len;
    if (head > GW_AUDIT_DETAIL_CODE_MAX + 4) {
        head = GW_AUDIT_DETAIL_CODE_MAX + 4;
        while (head > 0 && ((unsigned char)code[head] & 0xC0u) == 0x80u)
            head--;
    }
    free(a->code_head);
    a->code_head = malloc(head ? head : 1);
    a->code_head_len = a->code_head ? head : 0;
    if (a->code_head)
        memcpy(a->code_head, code, head);
    sg_sha256_hex(code, len, a->sha);
}

int gw_admit_policy(struct gw_adm *a, const char *want, struct sg_http_response *resp)
{
    if (!want)
        want = "";
    if (*want && a->tenant) {
        const struct sg_policy *def = gw_ruleset_policy(a->rs, a->tenant, NULL);
        if (!gw_tenant_may_use(a->tenant, want) && !(def && strcmp(def->name, want) == 0)) {
            sg_http_error(resp, 403, "policy_not_allowed", "policy: tenant %s may not select '%s'",
                          a->tenant->name, want);
            return -EPERM;
        }
    }
    a->policy = gw_ruleset_policy(a->rs, a->tenant, want);
    if (!a->policy) {
        sg_http_error(resp, 400, "unknown_policy", "policy: '%s' is not loaded", want);
        return -ENOENT;
    }
    return 0;
}

int gw_admit_network(struct gw_adm *a, json_t *want, bool tenant_default,
                     struct sg_http_response *resp)
{
    struct sg_error e = {0};
    if (!want && !tenant_default)
        return 0;
    int r = gw_egress_job_list(a->tenant ? &a->tenant->egress : NULL, want, &a->net_allow, &e);
    if (r == -EACCES)
        sg_http_error(resp, 403, "network_not_allowed", "%s", e.msg);
    else if (r < 0)
        sg_http_error(resp, 400, "bad_network", "%s", e.msg);
    return r;
}

const struct sg_policy *gw_admit_job_policy(const struct gw_adm *a)
{
    return a->net_allow ? a->policy->network : a->policy;
}

/* The verdict cache first (keyed by the policy, the language and the
 * analysed text's sha256); a miss analyses and stores the result. */
static int analyze_or_reuse(struct gw_adm *a, const struct sg_policy *p, const char *text,
                            size_t len, struct sg_error *err)
{
    uint8_t key[SG_VCACHE_KEY_LEN];
    struct sg_vcache *vc = a->s->vcache;
    if (vc) {
        char sha[SG_SHA256_HEX_LEN + 1];
        if (len == a->code_len && a->has_code)
            memcpy(sha, a->sha, sizeof(sha));
        else
            sg_sha256_hex(text, len, sha);
        sg_vcache_key(p->sha256, a->lang, sha, key);
        a->cached = sg_vcache_get(vc, key, &a->an) == 1;
        if (a->cached)
            return 0;
    }
    int r = sg_analyze(p, a->lang, text, len, &a->an, err);
    if (r == 0 && vc && sg_vcache_put(vc, key, &a->an) < 0)
        sg_log(SG_LOG_WARN, "analysis_cache", "job_id=%s error=\"out of memory\"", a->id);
    return r;
}

/* An accepted text importing a module that no image or package set
 * installs: rejected here, saying so (the executors' listings, gw_installed). */
static void require_installed(struct gw_adm *a, const char *text, size_t len)
{
    char mod[SG_IMPORTS_TEXT_MAX];
    if (!a->an.accepted ||
        gw_installed_missing_import(a->s->router, a->lang, a->an.stats.imports.text, mod,
                                    sizeof(mod)) <= 0)
        return;
    const char *at = memmem(text, len, mod, strlen(mod));
    size_t off = at ? (size_t)(at - text) : 0;
    struct sg_span span;
    sg_span_from_bytes(text, len, off, at ? off + strlen(mod) : 0, &span);
    sg_violations_add(&a->an.violations, SG_RULE_IMPORT_NOT_INSTALLED, &span, text, len,
                      "module '%s' is not installed: no image or package set of the %s "
                      "executors provides it (declare it in a package set: "
                      "docs/images.md, \"Adding packages\")",
                      mod, sg_lang_name(a->lang));
    a->an.accepted = 0;
}

static int analyze_with(struct gw_adm *a, const struct sg_policy *p, const char *text, size_t len,
                        struct sg_http_response *resp)
{
    struct sg_error err = {0};
    uint64_t t = gw_now_ns();
    int r = analyze_or_reuse(a, p, text, len, &err);
    a->analysis_us = (gw_now_ns() - t) / 1000;
    gw_metrics_observe(a->s->metrics, GW_HIST_ANALYSIS, a->analysis_us);
    if (r < 0) {
        sg_log(SG_LOG_ERROR, "analysis_failed", "job_id=%s error=\"%s\"", a->id, err.msg);
        sg_http_error(resp, 500, "internal", "analysis failed: %s", err.msg);
        return r;
    }
    a->analyzed = true;
    require_installed(a, text, len);
    gw_metrics_verdict(a->s->metrics, a->an.accepted);
    for (size_t i = 0; i < a->an.violations.count; i++)
        gw_metrics_rule(a->s->metrics, a->an.violations.items[i].rule);
    return 0;
}

int gw_admit_analyze(struct gw_adm *a, const char *text, size_t len, struct sg_http_response *resp)
{
    return analyze_with(a, gw_admit_job_policy(a), text, len, resp);
}

int gw_admit_analyze_long(struct gw_adm *a, const char *text, size_t len,
                          struct sg_http_response *resp)
{
    const struct sg_policy *p = gw_admit_job_policy(a);
    const struct sg_lang_policy *lp = a->lang == SG_LANG_PYTHON ? &p->python : &p->javascript;
    if (lp->max_source_bytes == 0)
        return analyze_with(a, p, text, len, resp);
    struct sg_policy wide = *p; /* borrows p's sets: only read while p lives */
    struct sg_lang_policy *wl = a->lang == SG_LANG_PYTHON ? &wide.python : &wide.javascript;
    size_t factor = (len + lp->max_source_bytes - 1) / lp->max_source_bytes;
    size_t nodes =
        lp->max_nodes > SG_LIMIT_NODES_MAX / factor ? SG_LIMIT_NODES_MAX : lp->max_nodes * factor;
    if (nodes < GW_ADMIT_LONG_NODES_PER_BYTE * len) /* dense cells: bounded by their bytes */
        nodes = GW_ADMIT_LONG_NODES_PER_BYTE * len;
    wl->max_source_bytes = len > lp->max_source_bytes ? len : lp->max_source_bytes;
    wl->max_nodes = nodes < SG_LIMIT_NODES_MAX ? nodes : SG_LIMIT_NODES_MAX;
    /* its own verdict-cache key: a job of the same text stays over the limit */
    char tag[SG_SHA256_HEX_LEN + 32];
    int n = snprintf(tag, sizeof(tag), "%s:long:%zu", p->sha256, len);
    sg_sha256_hex(tag, (size_t)n, wide.sha256);
    return analyze_with(a, &wide, text, len, resp);
}

size_t gw_admit_source_limit(const struct gw_adm *a)
{
    const struct sg_policy *p = gw_admit_job_policy(a);
    return a->lang == SG_LANG_PYTHON ? p->python.max_source_bytes : p->javascript.max_source_bytes;
}

void gw_admit_runtime(struct gw_adm *a, json_t *violations)
{
    size_t i;
    json_t *v;
    json_array_foreach(violations, i, v)
    {
        const char *rule = json_string_value(json_object_get(v, "rule"));
        if (!rule)
            continue;
        gw_metrics_rule(a->s->metrics, rule);
        if (!a->rt_rules)
            a->rt_rules = json_array();
        json_array_append_new(a->rt_rules, json_string(rule));
    }
}

void gw_admit_outcome(struct gw_adm *a, const char *word)
{
    snprintf(a->outcome_buf, sizeof(a->outcome_buf), "%s", word ? word : "unknown");
    a->outcome = a->outcome_buf;
}

json_t *gw_admit_policy_json(const struct gw_adm *a)
{
    return json_pack("{s:s,s:s}", "name", a->policy->name, "sha256", a->policy->sha256);
}

static json_t *audit_rules(const struct gw_adm *a)
{
    json_t *rules = json_array();
    for (size_t i = 0; rules && a->analyzed && i < a->an.violations.count; i++)
        json_array_append_new(rules, json_string(a->an.violations.items[i].rule));
    if (rules && a->rt_rules)
        json_array_extend(rules, a->rt_rules);
    return rules;
}

/* One audit line: who, what (length and sha256, never the code), under which
 * policy, the verdict and rules, where it ran, and how long each step took. */
static void audit(struct gw_adm *a, int status)
{
    char when[64];
    gw_iso_time(when);
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:s?,s:s?,s:s,s:s,s:s?,s:I,s:s?,s:s?,s:s?,s:s?,s:o,s:b,s:s?,s:i,s:s?,s:f,"
        "s:f,s:f}",
        "time", when, "request_id", a->id, "endpoint", gw_endpoint_name(a->ep), "tool", a->tool,
        "method", a->method, "tenant", gw_admit_tenant_name(a), "peer", a->peer, "language",
        a->has_code ? sg_lang_name(a->lang) : NULL, "code_bytes", (json_int_t)a->code_len,
        "code_sha256", a->has_code ? a->sha : NULL, "policy", a->policy ? a->policy->name : NULL,
        "policy_sha256", a->policy ? a->policy->sha256 : NULL, "verdict",
        a->analyzed ? (a->an.accepted ? "accept" : "reject") : NULL, "rules", audit_rules(a),
        "analysis_cached", a->cached, "executor", a->executor[0] ? a->executor : NULL, "status",
        status, "outcome", a->outcome, "analysis_ms", gw_admit_ms(a->analysis_us), "exec_ms",
        gw_admit_ms(a->exec_us), "total_ms", gw_admit_ms((gw_now_ns() - a->t0) / 1000));
    if (o && a->session_id[0])
        json_object_set_new(o, "session_id", json_string(a->session_id));
    if (o && a->net_allow)
        json_object_set_new(
            o, "network",
            json_pack("{s:O,s:O?}", "allow", a->net_allow, "decisions", a->net_result));
    if (o && a->sandbox)
        json_object_set(o, "sandbox", a->sandbox);
    gw_audit_detail_add(o, a->tenant, a->analyzed ? &a->an.violations : NULL,
                        a->analyzed && !a->an.accepted, a->code_head, a->code_head_len);
    char *line = o ? gw_audit_detail_fit(o, GW_JSON_FLAGS) : NULL;
    if (line)
        gw_audit_write(a->s->audit, line, strlen(line));
    free(line);
    json_decref(o);
}

void gw_admit_settle(struct gw_adm *a, const struct sg_http_response *resp)
{
    if (resp->status >= 400 && !a->outcome)
        a->outcome = resp->error_code ? resp->error_code : "error";
}

void gw_admit_finish(struct gw_adm *a, struct sg_http_response *resp)
{
    gw_admit_settle(a, resp);
    sg_http_add_header(resp, "X-Request-Id", a->id);
    audit(a, resp->status);
    sg_log(SG_LOG_DEBUG, "job",
           "job_id=%s endpoint=%s status=%d outcome=%s code_len=%zu "
           "code_sha256=%s",
           a->id, gw_endpoint_name(a->ep), resp->status, a->outcome ? a->outcome : "-", a->code_len,
           a->has_code ? a->sha : "-");
    gw_metrics_observe(a->s->metrics, GW_HIST_TOTAL, (gw_now_ns() - a->t0) / 1000);
}

void gw_admit_end(struct gw_adm *a)
{
    json_decref(a->rt_rules);
    json_decref(a->net_allow);
    json_decref(a->net_result);
    json_decref(a->sandbox);
    free(a->code_head);
    a->code_head = NULL;
    a->code_head_len = 0;
    if (a->analyzed)
        sg_analysis_free(&a->an);
    gw_ruleset_unref(a->rs);
    a->rt_rules = a->net_allow = a->net_result = a->sandbox = NULL;
    a->analyzed = false;
    a->rs = NULL;
}
