#include "gw_dify.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw_jobs.h"
#include "gw_respond.h"
#include "log.h"

#define RUN_PATH "/v1/sandbox/run"
#define DEPS_PATH "/v1/sandbox/dependencies"
#define DEPS_REFRESH_PATH "/v1/sandbox/dependencies/refresh"
#define ERROR_MAX (256u * 1024u)
#define DEPS_FETCH_MS 10000u

/* One run's state, for the door's hooks. */
struct drun {
    struct gw_dify *d;
    bool final;             /* resp is already in Dify's shape */
    uint32_t preload_lines; /* lines the preload adds before the code */
};

static const char *str_or(json_t *v, const char *def)
{
    return json_is_string(v) ? json_string_value(v) : def;
}

/* {"code", "message", "data"} with HTTP status; data (taken) may be NULL. */
static void answer(struct sg_http_response *resp, int status, int code, const char *message,
                   json_t *data)
{
    json_t *o = json_pack("{s:i,s:s,s:o}", "code", code, "message", message, "data",
                          data ? data : json_null());
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    free(resp->body);
    resp->body = text ? text : strdup("");
    resp->body_len = 0;
    resp->status = status;
}

static int door_caller(struct gw_adm *a, const struct sg_http_request *req,
                       struct sg_http_response *resp, void *ud)
{
    struct drun *q = ud;
    int r = gw_admit_caller_key(a, sg_http_header(req, "X-Api-Key"), a->s->cfg->dify_api_key, resp);
    q->final = r < 0;
    return r;
}

/* dify_policy when it is loaded and the tenant may use it, else "" (the
 * tenant's default). */
static void choose_policy(const struct gw_adm *a, char out[65])
{
    const char *want = a->s->cfg->dify_policy;
    const struct sg_policy *p = *want ? gw_ruleset_policy(a->rs, NULL, want) : NULL;
    const struct sg_policy *def = gw_ruleset_policy(a->rs, a->tenant, NULL);
    bool usable = p && strcmp(p->name, want) == 0 &&
                  (!a->tenant || gw_tenant_may_use(a->tenant, want) || p == def);
    snprintf(out, 65, "%s", usable ? want : "");
}

static int parse_fail(struct gw_dify_error *e, int http, int code, const char *sg_code,
                      const char *msg)
{
    e->http = http;
    e->code = code;
    e->sg_code = sg_code;
    snprintf(e->message, sizeof(e->message), "%s", msg);
    return -EINVAL;
}

/* A field dify-sandbox's binding requires (a non-empty string). */
static const char *required(json_t *in, const char *key, struct gw_dify_error *e)
{
    json_t *v = json_object_get(in, key);
    if (json_is_string(v) && json_string_length(v) > 0)
        return json_string_value(v);
    char msg[160];
    snprintf(msg, sizeof(msg),
             "Key: '%s' Error:Field validation for '%s' failed on the 'required' tag", key, key);
    parse_fail(e, 200, -400, NULL, msg);
    return NULL;
}

static uint32_t count_lines(const char *s, size_t n)
{
    uint32_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines;
}

/* The program: the preload (dify-sandbox runs it first, in the same
 * process) and the code, as one script; its size is the code cap's. */
static int assemble(const char *preload, json_t *code, size_t max_code, struct gw_dify_run *r,
                    struct gw_dify_error *e)
{
    size_t pl = preload ? strlen(preload) : 0, cl = json_string_length(code);
    size_t n = pl ? pl + 1 + cl : cl;
    if (n > max_code) {
        char msg[128];
        snprintf(msg, sizeof(msg), "code: %zu bytes exceeds the cap of %zu", n, max_code);
        return parse_fail(e, 413, -400, "code_too_large", msg);
    }
    if (!(r->code = malloc(n + 1)))
        return parse_fail(e, 500, -500, "internal", "out of memory");
    if (pl) {
        memcpy(r->code, preload, pl);
        r->code[pl] = '\n';
        r->preload_lines = count_lines(preload, pl) + 1;
    }
    memcpy(r->code + (pl ? pl + 1 : 0), json_string_value(code), cl + 1);
    r->code_len = n;
    return 0;
}

static int parse_fields(json_t *in, size_t max_code, struct gw_dify_run *r, struct gw_dify_error *e)
{
    json_t *pre = json_object_get(in, "preload"), *net = json_object_get(in, "enable_network");
    const char *lang;
    if (!json_is_object(in))
        return parse_fail(e, 200, -400, NULL, "invalid request body: expected a JSON object");
    if (!(lang = required(in, "language", e)) || !required(in, "code", e))
        return -EINVAL;
    if ((pre && !json_is_null(pre) && !json_is_string(pre)) ||
        (net && !json_is_null(net) && !json_is_boolean(net)))
        return parse_fail(e, 200, -400, NULL,
                          "preload must be a string and enable_network a boolean");
    if (strcmp(lang, "python3") != 0 && strcmp(lang, "nodejs") != 0)
        return parse_fail(e, 400, -400, NULL, "unsupported language");
    r->lang = strcmp(lang, "nodejs") == 0 ? SG_LANG_JAVASCRIPT : SG_LANG_PYTHON;
    r->enable_network = json_is_true(net);
    return assemble(json_string_value(pre), json_object_get(in, "code"), max_code, r, e);
}

int gw_dify_parse(const char *body, size_t len, size_t max_code, struct gw_dify_run *ret,
                  struct gw_dify_error *err)
{
    memset(ret, 0, sizeof(*ret));
    json_t *in = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
    int r = parse_fields(in, max_code, ret, err);
    json_decref(in);
    if (r < 0) {
        free(ret->code);
        ret->code = NULL;
    }
    return r;
}

static int door_parse(struct gw_adm *a, const struct sg_http_request *req, struct gw_request *r,
                      bool *ret_network, struct sg_http_response *resp, void *ud)
{
    struct drun *q = ud;
    const struct gw_config *c = a->s->cfg;
    struct gw_dify_run run;
    struct gw_dify_error e;
    memset(r, 0, sizeof(*r));
    if (gw_dify_parse(req->body, req->body_len, a->caps.max_code_bytes, &run, &e) < 0) {
        if (e.sg_code) { /* admission's refusal: audited under its code */
            sg_http_error(resp, e.http, e.sg_code, "%s", e.message);
        } else {
            answer(resp, e.http, e.code, e.message, NULL);
            q->final = true;
        }
        return -EINVAL;
    }
    if (!(r->arguments = json_object())) {
        free(run.code);
        sg_http_error(resp, 500, "internal", "out of memory");
        return -ENOMEM;
    }
    r->lang = run.lang;
    r->code = run.code;
    r->code_len = run.code_len;
    q->preload_lines = run.preload_lines;
    r->script = 1;
    r->timeout_ms = c->dify_timeout_ms;
    choose_policy(a, r->policy);
    *ret_network = run.enable_network && c->dify_enable_network != 0;
    return 0;
}

/* "line L, column C: message [rule]" per violation, on the lines of the
 * code Dify sent (a violation in the preload says so). */
static char *rejection_text(const struct gw_adm *a, uint32_t preload_lines)
{
    struct sg_buf b;
    sg_buf_init(&b, ERROR_MAX);
    sg_buf_printf(&b, "rejected by policy '%s':\n", a->policy->name);
    for (size_t i = 0; i < a->an.violations.count; i++) {
        const struct sg_violation *v = &a->an.violations.items[i];
        bool in_pre = v->line <= preload_lines;
        if (sg_buf_printf(&b, "%sline %u, column %u: %s [%s]\n", in_pre ? "preload " : "",
                          in_pre ? v->line : v->line - preload_lines, v->column, v->message,
                          v->rule) < 0)
            break;
    }
    size_t n;
    return sg_buf_steal(&b, &n);
}

/* What dify-sandbox puts in "error": nothing for exit code 0 (but the
 * runner's own error), else "process exited with code N", then each detail
 * on its own line. */
static char *error_text(int exit_code, const char *exec_error, const char *stderr_text)
{
    struct sg_buf b;
    sg_buf_init(&b, ERROR_MAX + 64);
    if (exit_code == 0) {
        sg_buf_append(&b, exec_error, strlen(exec_error));
    } else {
        sg_buf_printf(&b, "process exited with code %d", exit_code);
        const char *parts[] = {exec_error, stderr_text};
        for (size_t i = 0; i < 2; i++) {
            size_t n = strlen(parts[i]);
            if (!n)
                continue;
            if (b.len && b.data[b.len - 1] != '\n')
                sg_buf_append(&b, "\n", 1);
            sg_buf_append(&b, parts[i], n < ERROR_MAX ? n : ERROR_MAX);
        }
    }
    if (!b.data)
        sg_buf_append(&b, "", 0);
    size_t n;
    return sg_buf_steal(&b, &n);
}

/* The runner's own failure: a limit (exit -1, as dify-sandbox's killed
 * process) or a run-time stop (its rules). */
static int exec_error(json_t *o, int exit_code, struct sg_buf *out)
{
    const char *st = json_string_value(json_object_get(o, "status"));
    const char *lim = json_string_value(json_object_get(o, "resource_limit_type"));
    if (st && strcmp(st, "resource_limit_exceeded") == 0) {
        if (lim && strcmp(lim, "time") == 0)
            sg_buf_printf(out, "error: timeout\n");
        else
            sg_buf_printf(out, "error: %s limit exceeded\n", lim ? lim : "resource");
        return -1;
    }
    if (st && strcmp(st, "unauthorized_access") == 0) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(o, "violations"), i, v)
            sg_buf_printf(out, "error: %s [%s]\n", str_or(json_object_get(v, "message"), "denied"),
                          str_or(json_object_get(v, "rule"), "runtime"));
        return exit_code ? exit_code : -1;
    }
    return exit_code;
}

static void job_answer(const struct gw_adm *a, struct drun *q, json_t *o,
                       struct sg_http_response *resp)
{
    const char *st = json_string_value(json_object_get(o, "status"));
    const char *out = json_string_value(json_object_get(o, "stdout"));
    const char *err = json_string_value(json_object_get(o, "stderr"));
    int exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
    char *text = NULL;
    if (a->analyzed && !a->an.accepted) {
        text = rejection_text(a, q->preload_lines);
        exit_code = GW_UNSAFE_EXIT_CODE;
    } else if (st &&
               (strcmp(st, "success") == 0 || strcmp(st, "program_error") == 0 ||
                strcmp(st, "runtime_error") == 0 || strcmp(st, "resource_limit_exceeded") == 0 ||
                strcmp(st, "unauthorized_access") == 0)) {
        struct sg_buf ee;
        sg_buf_init(&ee, ERROR_MAX);
        exit_code = exec_error(o, exit_code, &ee);
        if (!ee.data)
            sg_buf_append(&ee, "", 0);
        text = error_text(exit_code, ee.data ? ee.data : "", err ? err : "");
        sg_buf_free(&ee);
    } else { /* the runner failed, or the job was cancelled: nothing to show */
        const char *detail = json_string_value(json_object_get(o, "detail"));
        return answer(resp, 200, -500, detail ? detail : (st ? st : "runner error"), NULL);
    }
    json_t *data = json_pack("{s:s,s:s,s:s,s:i}", "stdout", out ? out : "", "stderr",
                             err && !(a->analyzed && !a->an.accepted) ? err : "", "error",
                             text ? text : "", "exit_code", exit_code);
    free(text);
    answer(resp, 200, 0, "success", data);
}

static void door_answer(const struct gw_adm *a, struct sg_http_response *resp, void *ud)
{
    struct drun *q = ud;
    if (q->final)
        return;
    json_t *o = resp->body ? json_loads(resp->body, JSON_ALLOW_NUL, NULL) : NULL;
    json_t *e = json_object_get(o, "error");
    char msg[400];
    snprintf(msg, sizeof(msg), "%s: %s", str_or(json_object_get(e, "code"), "error"),
             str_or(json_object_get(e, "message"), "refused"));
    if (resp->status == 200 && json_is_object(o) && !e)
        job_answer(a, q, o, resp);
    else if (resp->status == 429)
        answer(resp, 429, -429, GW_RATE_LIMITED_STDERR, NULL);
    else if (resp->status == 503)
        answer(resp, 503, -503, "Too many requests", NULL);
    else if (resp->status >= 400 && resp->status < 500)
        answer(resp, 200, -400, msg, NULL);
    else
        answer(resp, 200, -500, msg, NULL);
    json_decref(o);
}

static void handle_run(struct gw_dify *d, const struct sg_http_request *req,
                       struct sg_http_response *resp)
{
    struct drun q = {.d = d};
    const struct gw_door door = {door_caller, door_parse, door_answer, &q};
    unsigned now = atomic_fetch_add(&d->running, 1) + 1;
    if (now > d->s->cfg->dify_max_requests) { /* dify-sandbox's MAX_REQUESTS */
        struct gw_adm a;
        gw_admit_begin(&a, d->s, GW_EP_DIFY, NULL, req, NULL);
        answer(resp, 503, -503, "Too many requests", NULL);
        a.outcome = "too_many_requests";
        gw_admit_finish(&a, resp);
        gw_admit_end(&a);
    } else {
        gw_jobs_door(d->s, GW_EP_DIFY, &door, req, resp);
    }
    atomic_fetch_sub(&d->running, 1);
}

/* The image's packages as dify-sandbox lists them: [{name, version}]. */
static json_t *dependencies(const struct gw_dify *d)
{
    struct gw_exec_result ex;
    gw_router_get(d->s->router, SG_LANG_PYTHON, "/v1/runtime", DEPS_FETCH_MS, &ex);
    json_t *listing = ex.outcome == GW_EXEC_OK ? json_loadb(ex.body, ex.body_len, 0, NULL) : NULL;
    gw_exec_result_free(&ex);
    json_t *out = json_array();
    size_t i;
    json_t *pkg;
    json_array_foreach(json_object_get(listing, "packages"), i, pkg)
    {
        const char *name = json_string_value(json_object_get(pkg, "name"));
        const char *version = json_string_value(json_object_get(pkg, "version"));
        if (name)
            json_array_append_new(
                out, json_pack("{s:s,s:s}", "name", name, "version", version ? version : ""));
    }
    json_decref(listing);
    return out;
}

static void handle_deps(struct gw_dify *d, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    struct gw_adm a;
    gw_admit_begin(&a, d->s, GW_EP_DIFY, NULL, req, NULL);
    const char *lang = sg_http_query(req, "language");
    if (gw_admit_caller_key(&a, sg_http_header(req, "X-Api-Key"), d->s->cfg->dify_api_key, resp) ==
            0 &&
        gw_admit_rate(&a, resp) < 0) {
        answer(resp, 429, -429, GW_RATE_LIMITED_STDERR, NULL);
    } else if (resp->status != 401) {
        if (!lang || !*lang)
            answer(resp, 200, -400,
                   "Key: 'language' Error:Field validation for 'language' "
                   "failed on the 'required' tag",
                   NULL);
        else if (strcmp(lang, "python3") != 0)
            answer(resp, 400, -400, "unsupported language", NULL);
        else
            answer(resp, 200, 0, "success", json_pack("{s:o}", "dependencies", dependencies(d)));
        a.outcome = resp->status == 200 ? "ok" : "bad_request";
    }
    gw_admit_finish(&a, resp);
    gw_admit_end(&a);
}

void gw_dify_handle(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct gw_dify *d = ctx;
    enum gw_endpoint ep = GW_EP_DIFY;
    bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
    if (strcmp(req->url, "/health") == 0 && get) {
        free(resp->body);
        resp->body = strdup("\"ok\"");
        resp->status = 200;
    } else if (strcmp(req->url, RUN_PATH) == 0 && post) {
        handle_run(d, req, resp);
    } else if ((strcmp(req->url, DEPS_PATH) == 0 || strcmp(req->url, DEPS_REFRESH_PATH) == 0) &&
               get) {
        handle_deps(d, req, resp);
    } else {
        free(resp->body);
        resp->body = strdup("404 page not found");
        resp->content_type = "text/plain";
        resp->status = 404;
        ep = GW_EP_OTHER;
    }
    gw_metrics_request(d->s->metrics, ep, resp->status);
}

/* The dependencies ask an executor: a worker answers them. */
static bool get_on_worker(void *ctx, const struct sg_http_request *req)
{
    (void)ctx;
    return strncmp(req->url, DEPS_PATH, sizeof(DEPS_PATH) - 1) == 0;
}

int gw_dify_start(struct gw_dify *d, const struct gw_services *s, struct sg_error *err)
{
    const struct gw_config *c = s->cfg;
    d->s = s;
    atomic_store(&d->running, 0);
    struct sg_httpsrv_config hc;
    gw_config_http(c, (uint16_t)c->dify_port,
                   c->max_body_bytes < GW_DIFY_BODY_MAX ? c->max_body_bytes : GW_DIFY_BODY_MAX,
                   s->budget, &hc);
    static const struct sg_http_handlers h = {gw_dify_handle, NULL, NULL, get_on_worker};
    return sg_httpsrv_start(&hc, &h, d, &d->http, err);
}

uint16_t gw_dify_port(const struct gw_dify *d)
{
    return d->http ? sg_httpsrv_port(d->http) : 0;
}

void gw_dify_quiesce(struct gw_dify *d)
{
    sg_httpsrv_quiesce(d->http);
}

void gw_dify_stop(struct gw_dify *d)
{
    sg_httpsrv_stop(d->http);
    d->http = NULL;
}
