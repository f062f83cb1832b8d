#include "gw_sessions.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "analyze.h"
#include "b64.h"
#include "gw_relay.h"
#include "gw_respond.h"
#include "gw_sse_out.h"
#include "gw_util.h"
#include "log.h"
#include "sg_file_name.h"
#include "sha256.h"

#define PREFIX "/v1/sessions"
#define ANONYMOUS "anonymous"
#define EXEC_ID_LEN (16 + 1 + 32)

/* One request: who asks, which session, and what the audit line says. */
struct sreq {
    struct gw_sessions *g;
    struct gw_ruleset *rs;
    const struct gw_tenant *t;
    char tenant_hdr[80]; /* X-Sandgate-Tenant for the executors */
    char id[17];         /* request id */
    enum sg_lang lang;
    char boot[17];
    char exec_id[EXEC_ID_LEN + 1];
    char public_id[GW_SESSION_PUBLIC_ID_LEN + 1];
    const char *outcome;
    char code_sha[SG_SHA256_HEX_LEN + 1];
    size_t code_len;
    const char *policy; /* borrowed from rs */
    const char *verdict;
    const struct sg_http_request *hreq; /* the request, to begin a stream on */
    bool may_stream;                    /* the caller takes an event stream */
    bool stream;                        /* a streamed cell: answered as events */
    struct gw_sse_out out;              /* its stream, once begun */
    const struct gw_exec_hooks *hooks;  /* for the next call(): the relay's */
    const char *tool; /* the MCP tool making the call; NULL: /v1/sessions itself */
};

static bool hex_only(const char *s, size_t n)
{
    return strspn(s, "0123456789abcdef") >= n;
}

bool gw_sessions_path(const char *url)
{
    size_t n = sizeof(PREFIX) - 1;
    return strncmp(url, PREFIX, n) == 0 && (url[n] == '\0' || url[n] == '/');
}

void gw_sessions_init(struct gw_sessions *g, const struct gw_jobs *jobs)
{
    g->jobs = jobs;
    pthread_mutex_init(&g->create_lock, NULL);
}

void gw_sessions_destroy(struct gw_sessions *g)
{
    pthread_mutex_destroy(&g->create_lock);
}

static const char *lang_tag(enum sg_lang l)
{
    return l == SG_LANG_PYTHON ? "py" : "js";
}

/* "<py|js>-<16 hex>-<32 hex>" into lang, boot and the executor's id. */
static int parse_public_id(struct sreq *q, const char *s, size_t n)
{
    if (n != GW_SESSION_PUBLIC_ID_LEN || s[2] != '-' || s[19] != '-' || !hex_only(s + 3, 16) ||
        !hex_only(s + 20, 32))
        return -1;
    if (strncmp(s, "py", 2) == 0)
        q->lang = SG_LANG_PYTHON;
    else if (strncmp(s, "js", 2) == 0)
        q->lang = SG_LANG_JAVASCRIPT;
    else
        return -1;
    memcpy(q->boot, s + 3, 16);
    q->boot[16] = '\0';
    memcpy(q->exec_id, s + 3, EXEC_ID_LEN);
    q->exec_id[EXEC_ID_LEN] = '\0';
    memcpy(q->public_id, s, n);
    q->public_id[n] = '\0';
    return 0;
}

static void public_id_of(enum sg_lang l, const char *exec_id,
                         char out[GW_SESSION_PUBLIC_ID_LEN + 1])
{
    snprintf(out, GW_SESSION_PUBLIC_ID_LEN + 1, "%s-%.*s", lang_tag(l), EXEC_ID_LEN, exec_id);
}

/* An executor answer that is an error of the session API passes through
 * with its status; a session on an executor that is gone is session_lost. */
static void pass_error(struct sreq *q, const struct gw_exec_result *x,
                       struct sg_http_response *resp)
{
    if (x->outcome != GW_EXEC_OK) {
        q->outcome = "session_lost";
        sg_http_error(resp, x->outcome == GW_EXEC_FAILED ? 502 : 410,
                      x->outcome == GW_EXEC_FAILED ? "executor_failed" : "session_lost", "%s",
                      x->message[0] ? x->message : "the session's executor is gone");
        return;
    }
    json_t *j = x->body ? json_loadb(x->body, x->body_len, 0, NULL) : NULL;
    json_t *e = json_object_get(j, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    static const char *const known[] = {
        "session_not_found",    "session_lost",       "session_busy",  "no_cell_running",
        "session_history_full", "bad_request",        "bad_file_name", "bad_file",
        "file_not_found",       "file_too_large",     "pool_busy",     "sessions_full",
        "session_start_failed", "docker_unreachable", "shutting_down"};
    const char *c = "executor_failed";
    for (size_t i = 0; code && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(code, known[i]) == 0)
            c = known[i];
    long st = x->http_status >= 400 && x->http_status < 600 ? x->http_status : 502;
    q->outcome = c;
    sg_http_error(resp, (int)st, c, "%.400s", msg ? msg : "the executor refused the call");
    json_decref(j);
}

static void call(struct sreq *q, const char *method, const char *path, const char *body, size_t len,
                 uint64_t timeout_ms, struct gw_exec_result *ret)
{
    struct gw_session_call c = {.boot = q->boot[0] ? q->boot : NULL,
                                .method = method,
                                .path = path,
                                .tenant = q->tenant_hdr,
                                .body = body,
                                .len = len,
                                .timeout_ms = timeout_ms,
                                .hooks = q->hooks};
    gw_router_session(q->g->jobs->router, q->lang, &c, ret);
}

/* The executor's session record as the public one: public id, language. */
static json_t *public_info(json_t *info, enum sg_lang l)
{
    const char *eid = json_string_value(json_object_get(info, "session_id"));
    char pid[GW_SESSION_PUBLIC_ID_LEN + 1];
    if (eid && strlen(eid) == EXEC_ID_LEN) {
        public_id_of(l, eid, pid);
        json_object_set_new(info, "session_id", json_string(pid));
    }
    json_object_set_new(info, "language", json_string(sg_lang_name(l)));
    json_t *label = json_object_get(info, "label");
    if (label) {
        json_object_set(info, "policy", label);
        json_object_del(info, "label");
    }
    json_object_del(info, "history");
    json_object_del(info, "container");
    return info;
}

/* ---------------------------------------------------------------- create */

static const struct sg_policy *choose_policy(struct sreq *q, const char *want,
                                             struct sg_http_response *resp)
{
    if (*want && q->t) {
        const struct sg_policy *def = gw_ruleset_policy(q->rs, q->t, NULL);
        if (!gw_tenant_may_use(q->t, want) && !(def && strcmp(def->name, want) == 0)) {
            sg_http_error(resp, 403, "policy_not_allowed", "policy: tenant %s may not select '%s'",
                          q->t->name, want);
            return NULL;
        }
    }
    const struct sg_policy *p = gw_ruleset_policy(q->rs, q->t, want);
    if (!p)
        sg_http_error(resp, 400, "unknown_policy", "policy: '%s' is not loaded", want);
    return p;
}

static uint64_t tenant_cap(uint64_t cfg_max, uint64_t tenant_max)
{
    return tenant_max && tenant_max < cfg_max ? tenant_max : cfg_max;
}

/* The executor's create body: the policy's run-time half, limits, timeouts,
 * and the policy's name as the session's label. */
static json_t *create_body(struct sreq *q, json_t *in, const struct sg_policy *p)
{
    const struct gw_config *c = q->g->jobs->cfg;
    int js = q->lang == SG_LANG_JAVASCRIPT;
    json_t *limits = json_object_get(in, "limits");
    json_t *t = json_object_get(limits, "timeout_ms");
    uint64_t max_t = tenant_cap(c->max_timeout_ms, q->t ? q->t->max_timeout_ms : 0);
    uint64_t tmo = json_is_integer(t) && json_integer_value(t) > 0 ? (uint64_t)json_integer_value(t)
                                                                   : c->default_timeout_ms;
    json_t *o =
        json_pack("{s:s,s:s,s:o,s:{s:I}}", "language", sg_lang_name(q->lang), "label", p->name,
                  "runtime", sg_policy_runtime_json(js ? &p->javascript : &p->python, js), "limits",
                  "timeout_ms", (json_int_t)(tmo < max_t ? tmo : max_t));
    const char *keys[] = {"idle_timeout_s", "max_lifetime_s"};
    for (size_t i = 0; o && i < 2; i++)
        if (json_object_get(in, keys[i]))
            json_object_set(o, keys[i], json_object_get(in, keys[i]));
    return o;
}

static int create_checks(struct sreq *q, json_t *in, struct sg_http_response *resp)
{
    const char *lang = json_string_value(json_object_get(in, "language"));
    json_t *net = json_object_get(in, "network");
    if (!json_is_object(in))
        sg_http_error(resp, 400, "bad_request", "body must be a JSON object");
    else if (!lang || sg_lang_parse(lang, SG_LANG_NAMES_RAGFLOW, &q->lang) < 0)
        sg_http_error(resp, 400, "bad_request", "language must be \"python\" or \"nodejs\"");
    else if (net && !json_is_null(net) && !json_is_false(net))
        sg_http_error(resp, 400, "bad_request", "network: sessions run offline");
    else if (json_object_get(in, "policy") && !json_is_string(json_object_get(in, "policy")))
        sg_http_error(resp, 400, "bad_request", "policy must be a string");
    else
        return 0;
    return -1;
}

/* The tenant's open sessions, counted on the executors themselves. */
static int check_cap(struct sreq *q, struct sg_http_response *resp)
{
    const struct gw_config *c = q->g->jobs->cfg;
    uint64_t max = q->t && q->t->max_sessions >= 0 ? (uint64_t)q->t->max_sessions : c->max_sessions;
    unsigned open = 0;
    json_decref(
        gw_router_sessions_list(q->g->jobs->router, q->tenant_hdr, GW_SESSION_CALL_MS, &open));
    if (open < max)
        return 0;
    q->outcome = "too_many_sessions";
    sg_http_error(resp, 429, "too_many_sessions",
                  "this tenant has %u open sessions, its maximum is %llu: close one first", open,
                  (unsigned long long)max);
    return -1;
}

static const char *policy_or_empty(json_t *s)
{
    return json_is_string(s) ? json_string_value(s) : "";
}

static const char *policy_name(json_t *in)
{
    return policy_or_empty(json_object_get(in, "policy"));
}

static void handle_create(struct sreq *q, const struct sg_http_request *req,
                          struct sg_http_response *resp)
{
    json_t *in = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
    const struct sg_policy *p = NULL;
    if (create_checks(q, in, resp) < 0 || !(p = choose_policy(q, policy_name(in), resp))) {
        json_decref(in);
        return;
    }
    q->policy = p->name;
    json_t *body = create_body(q, in, p);
    char *text = body ? json_dumps(body, GW_JSON_FLAGS) : NULL;
    json_decref(body);
    json_decref(in);
    if (!text)
        return sg_http_error(resp, 500, "internal", "cannot encode the session");
    pthread_mutex_lock(&q->g->create_lock);
    struct gw_exec_result x = {0};
    if (check_cap(q, resp) == 0)
        call(q, "POST", PREFIX, text, strlen(text), GW_SESSION_CREATE_MS, &x);
    pthread_mutex_unlock(&q->g->create_lock);
    free(text);
    if (q->outcome) /* the cap refused it */
        return;
    json_t *ans = x.outcome == GW_EXEC_OK && x.http_status == 201
                      ? json_loadb(x.body, x.body_len, 0, NULL)
                      : NULL;
    if (!json_is_object(ans)) {
        pass_error(q, &x, resp);
    } else {
        public_info(ans, q->lang);
        json_object_set_new(ans, "policy",
                            json_pack("{s:s,s:s}", "name", p->name, "sha256", p->sha256));
        snprintf(q->public_id, sizeof(q->public_id), "%s",
                 policy_or_empty(json_object_get(ans, "session_id")));
        q->outcome = "created";
        gw_respond_json(resp, 201, json_incref(ans));
    }
    json_decref(ans);
    gw_exec_result_free(&x);
}

/* ----------------------------------------------------------------- cells */

struct cell {
    char *code; /* owned, NUL-terminated */
    size_t len;
    uint64_t timeout_ms; /* 0: the session's default */
};

static int parse_cell(struct sreq *q, const struct sg_http_request *req, struct cell *c,
                      struct sg_http_response *resp)
{
    const struct gw_config *cfg = q->g->jobs->cfg;
    json_t *in = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
    json_t *code = json_object_get(in, "code"), *b64 = json_object_get(in, "code_b64");
    json_t *t = json_object_get(in, "timeout_ms"), *st = json_object_get(in, "stream");
    int r = -1;
    memset(c, 0, sizeof(*c));
    if (!json_is_object(in))
        sg_http_error(resp, 400, "bad_request", "body must be a JSON object");
    else if (!!code == !!b64 || (code && !json_is_string(code)) || (b64 && !json_is_string(b64)))
        sg_http_error(resp, 400, "bad_request", "give exactly one of code and code_b64 (strings)");
    else if (t && (!json_is_integer(t) || json_integer_value(t) < 1))
        sg_http_error(resp, 400, "bad_request", "timeout_ms must be a positive integer");
    else if (st && !json_is_boolean(st))
        sg_http_error(resp, 400, "bad_type", "stream: expected a boolean");
    else if (code && json_string_length(code) > cfg->max_code_bytes)
        sg_http_error(resp, 413, "code_too_large", "code exceeds %llu bytes",
                      (unsigned long long)cfg->max_code_bytes);
    else if (code) {
        c->len = json_string_length(code);
        c->code = malloc(c->len + 1);
        if (c->code)
            memcpy(c->code, json_string_value(code), c->len + 1);
        r = c->code ? 0 : -1;
    } else {
        unsigned char *out = NULL;
        struct sg_error e = {0};
        if (sg_b64_decode(json_string_value(b64), json_string_length(b64), cfg->max_code_bytes,
                          &out, &c->len, &e) < 0)
            sg_http_error(resp, 400, "bad_request", "code_b64: %s", e.msg);
        else {
            c->code = (char *)out;
            r = 0;
        }
    }
    const char *accept = sg_http_header(req, "Accept");
    q->stream = r == 0 && q->may_stream &&
                (json_is_true(st) || (accept && strstr(accept, "text/event-stream")));
    if (r == 0 && t) {
        uint64_t max_t = tenant_cap(cfg->max_timeout_ms, q->t ? q->t->max_timeout_ms : 0);
        c->timeout_ms = (uint64_t)json_integer_value(t);
        if (c->timeout_ms > max_t)
            c->timeout_ms = max_t;
    }
    json_decref(in);
    return r;
}

/* Violations of the concatenation, moved to the new cell's lines: one that
 * lies in the earlier cells (the new cell made it one) points at line 1. */
static void map_lines(struct sg_violations *vs, uint32_t offset)
{
    for (size_t i = 0; i < vs->count; i++) {
        struct sg_violation *v = &vs->items[i];
        if (v->line > offset) {
            v->line -= offset;
            v->end_line = v->end_line > offset ? v->end_line - offset : v->line;
        } else {
            v->line = v->end_line = 1;
            v->column = 1;
            v->end_column = 1;
        }
    }
}

/* Analyse the session's earlier cells plus this one under the session's
 * policy. 1: accepted; 0: rejected (answered); -1: failed (answered). */
static int analyse(struct sreq *q, const struct sg_policy *p, const char *history, size_t hlen,
                   const struct cell *c, struct sg_http_response *resp)
{
    char *all = malloc(hlen + c->len + 1);
    if (!all) {
        sg_http_error(resp, 500, "internal", "out of memory");
        return -1;
    }
    memcpy(all, history, hlen);
    memcpy(all + hlen, c->code, c->len);
    all[hlen + c->len] = '\0';
    uint32_t offset = 0;
    for (size_t i = 0; i < hlen; i++)
        offset += history[i] == '\n';
    struct sg_analysis an;
    struct sg_error e = {0};
    uint64_t t0 = gw_now_ns();
    int r = sg_analyze(p, q->lang, all, hlen + c->len, &an, &e);
    free(all);
    gw_metrics_observe(q->g->jobs->metrics, GW_HIST_ANALYSIS, (gw_now_ns() - t0) / 1000);
    if (r < 0) {
        sg_http_error(resp, 500, "internal", "analysis failed: %s", e.msg);
        return -1;
    }
    gw_metrics_verdict(q->g->jobs->metrics, an.accepted);
    q->verdict = an.accepted ? "accept" : "reject";
    if (!an.accepted) {
        map_lines(&an.violations, offset);
        json_t *o = gw_result_rejected(&an.violations);
        json_object_set_new(o, "session_id", json_string(q->public_id));
        json_object_set_new(o, "job_id", json_string(q->id));
        json_object_set_new(o, "policy",
                            json_pack("{s:s,s:s}", "name", p->name, "sha256", p->sha256));
        json_object_set_new(o, "violations", sg_violations_to_json(&an.violations));
        q->outcome = "rejected";
        gw_respond_json(resp, 200, o);
    }
    sg_analysis_free(&an);
    return an.accepted ? 1 : 0;
}

/* The cell's answer in the /v1/run shape plus the session's fields. */
static void answer_cell(struct sreq *q, const struct sg_policy *p, const struct gw_exec_result *x,
                        struct sg_http_response *resp)
{
    json_t *ans = x->outcome == GW_EXEC_OK && x->http_status == 200
                      ? json_loadb(x->body, x->body_len, JSON_ALLOW_NUL, NULL)
                      : NULL;
    if (!json_is_object(ans)) {
        json_decref(ans);
        return pass_error(q, x, resp);
    }
    json_t *o = gw_result_from_executor(ans);
    json_t *rtv = gw_runtime_violations(ans);
    const char *st = json_string_value(json_object_get(o, "status"));
    q->outcome = st && strcmp(st, "success") == 0 ? "success" : "program_outcome";
    json_object_set_new(o, "job_id", json_string(q->id));
    json_object_set_new(o, "session_id", json_string(q->public_id));
    json_object_set(o, "session_lost", json_object_get(ans, "session_lost"));
    json_object_set_new(o, "policy", json_pack("{s:s,s:s}", "name", p->name, "sha256", p->sha256));
    json_object_set_new(o, "violations", rtv ? rtv : json_array());
    json_object_set(o, "limits", json_object_get(ans, "limits"));
    gw_respond_json(resp, 200, o);
    json_decref(ans);
}

static const struct sg_policy *session_policy(struct sreq *q, json_t *info,
                                              struct sg_http_response *resp)
{
    const char *name = json_string_value(json_object_get(info, "label"));
    const struct sg_policy *p = name ? gw_ruleset_policy(q->rs, q->t, name) : NULL;
    if (!p || strcmp(p->name, name) != 0)
        sg_http_error(resp, 409, "policy_unavailable",
                      "the session's policy '%.64s' is no longer loaded: start a new session",
                      name ? name : "?");
    else
        q->policy = p->name;
    return p && strcmp(p->name, name) == 0 ? p : NULL;
}

/* A streamed cell's hooks (gw_relay.h): its events go to the client as
 * they come; the client's hang-up aborts the call (the executor then
 * interrupts the cell as a cancel does). */
static int cell_start(void *ud)
{
    struct sreq *q = ud;
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", q->id);
    return gw_sse_out_begin(&q->out, q->hreq, &head);
}

static int cell_event(void *ud, const char *name, const char *data, size_t len)
{
    return gw_sse_out_event(&((struct sreq *)ud)->out, name, data, len);
}

static int cell_idle(void *ud)
{
    return gw_sse_out_idle(&((struct sreq *)ud)->out);
}

static int cell_client_fd(void *ud)
{
    return gw_sse_out_fd(&((struct sreq *)ud)->out);
}

static void handle_exec(struct sreq *q, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    struct cell c;
    if (parse_cell(q, req, &c, resp) < 0)
        return;
    sg_sha256_hex(c.code, c.len, q->code_sha);
    q->code_len = c.len;
    char path[128];
    snprintf(path, sizeof(path), PREFIX "/%s?history=1", q->exec_id);
    struct gw_exec_result x = {0};
    call(q, "GET", path, NULL, 0, GW_SESSION_CALL_MS, &x);
    json_t *info = x.outcome == GW_EXEC_OK && x.http_status == 200
                       ? json_loadb(x.body, x.body_len, 0, NULL)
                       : NULL;
    json_t *h = json_object_get(info, "history");
    const struct sg_policy *p = NULL;
    if (!json_is_string(h))
        pass_error(q, &x, resp);
    else if ((p = session_policy(q, info, resp)) &&
             analyse(q, p, json_string_value(h), json_string_length(h), &c, resp) == 1) {
        /* the executor runs the cell only if no other cell ran since the
         * history this analysis saw (concurrent cells could not otherwise
         * have been analysed together) */
        json_t *body = json_pack("{s:s%,s:I}", "code", c.code, c.len, "history_bytes",
                                 (json_int_t)json_string_length(h));
        if (body && q->stream)
            json_object_set_new(body, "stream", json_true());
        if (body && c.timeout_ms)
            json_object_set_new(body, "limits",
                                json_pack("{s:I}", "timeout_ms", (json_int_t)c.timeout_ms));
        char *text = body ? json_dumps(body, GW_JSON_FLAGS) : NULL;
        json_decref(body);
        gw_exec_result_free(&x);
        snprintf(path, sizeof(path), PREFIX "/%s/exec", q->exec_id);
        uint64_t budget = (c.timeout_ms ? c.timeout_ms : q->g->jobs->cfg->max_timeout_ms) +
                          q->g->jobs->cfg->exec_grace_ms + 5000;
        const struct gw_exec_hooks hooks = {.start = cell_start,
                                            .event = cell_event,
                                            .idle = cell_idle,
                                            .client_fd = cell_client_fd,
                                            .ud = q};
        q->hooks = q->stream ? &hooks : NULL;
        if (text)
            call(q, "POST", path, text, strlen(text), budget, &x);
        q->hooks = NULL;
        if (!text)
            sg_http_error(resp, 500, "internal", "cannot encode the cell");
        else if (x.client_gone)
            sg_http_error(resp, 499, "client_gone", "the client went away; cell interrupted");
        else
            answer_cell(q, p, &x, resp);
        free(text);
    }
    json_decref(info);
    gw_exec_result_free(&x);
    free(c.code);
}

/* ---------------------------------------------- the other calls, passed on */

static void handle_simple(struct sreq *q, const struct sg_http_request *req, const char *rest,
                          struct sg_http_response *resp)
{
    char path[256];
    snprintf(path, sizeof(path), PREFIX "/%s%s", q->exec_id, rest);
    bool put = strcmp(req->method, "PUT") == 0;
    struct gw_exec_result x = {0};
    call(q, req->method, path, put ? req->body : NULL, put ? req->body_len : 0, GW_SESSION_CALL_MS,
         &x);
    long st = x.outcome == GW_EXEC_OK ? x.http_status : 0;
    if (st < 200 || st >= 300) {
        pass_error(q, &x, resp);
    } else if (st == 204) {
        resp->status = 204;
        free(resp->body);
        resp->body = strdup("");
        q->outcome = "ok";
    } else if (strncmp(rest, "/files/", 7) == 0) { /* a file's bytes, as they are */
        free(resp->body);
        resp->status = 200;
        resp->body = x.body;
        resp->body_len = x.body_len;
        resp->content_type = "application/octet-stream";
        x.body = NULL;
        if (!resp->body)
            resp->body = strdup("");
        q->outcome = "ok";
    } else {
        json_t *j = x.body ? json_loadb(x.body, x.body_len, 0, NULL) : NULL;
        if (json_is_object(j) && *rest == '\0')
            public_info(j, q->lang);
        else if (json_is_object(j) && json_object_get(j, "session_id"))
            json_object_set_new(j, "session_id", json_string(q->public_id));
        q->outcome = "ok";
        gw_respond_json(resp, (int)st, j);
    }
    gw_exec_result_free(&x);
}

static void handle_list(struct sreq *q, struct sg_http_response *resp)
{
    unsigned open = 0;
    json_t *all =
        gw_router_sessions_list(q->g->jobs->router, q->tenant_hdr, GW_SESSION_CALL_MS, &open);
    size_t i;
    json_t *v;
    json_array_foreach(all, i, v)
    {
        enum sg_lang l = SG_LANG_PYTHON;
        sg_lang_parse(json_string_value(json_object_get(v, "language")), SG_LANG_NAMES_RAGFLOW, &l);
        public_info(v, l);
    }
    q->outcome = "ok";
    gw_respond_json(resp, 200, json_pack("{s:o,s:i}", "sessions", all, "open", open));
}

/* ------------------------------------------------------------ dispatching */

static void route_one(struct sreq *q, const struct sg_http_request *req, const char *rest,
                      struct sg_http_response *resp)
{
    const char *m = req->method;
    bool get = strcmp(m, "GET") == 0, post = strcmp(m, "POST") == 0;
    if (*rest == '\0' && (get || strcmp(m, "DELETE") == 0))
        return handle_simple(q, req, rest, resp);
    if (strcmp(rest, "/exec") == 0 && post)
        return handle_exec(q, req, resp);
    if (strcmp(rest, "/cancel") == 0 && post)
        return handle_simple(q, req, rest, resp);
    if (strcmp(rest, "/files") == 0 && get)
        return handle_simple(q, req, rest, resp);
    if (strncmp(rest, "/files/", 7) == 0 && (get || strcmp(m, "PUT") == 0)) {
        /* the job files' rule, here too: the name goes into the executor's URL as it is */
        const char *name = rest + 7;
        if (!sg_file_name_ok(name, strlen(name)) || sg_file_name_reserved(name, strlen(name)))
            return sg_http_error(resp, 400, "bad_file_name",
                                 "file names are 1-128 bytes of [A-Za-z0-9._-], no leading dot, "
                                 "no '..', not main.py / main.js / artifacts");
        return handle_simple(q, req, rest, resp);
    }
    if (*rest == '\0' || !strcmp(rest, "/exec") || !strcmp(rest, "/cancel") ||
        !strncmp(rest, "/files", 6))
        return sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed here", m);
    sg_http_error(resp, 404, "not_found", "no such endpoint");
}

/* One audit line per session call: who, which session, the cell's size and
 * sha256 (never its text), the verdict and the outcome. */
static void audit(struct sreq *q, const struct sg_http_request *req, int status)
{
    char when[64];
    gw_iso_time(when);
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:I,s:s?,s:s?,s:s?,s:i,s:s?}", "time", when,
                  "request_id", q->id, "endpoint", "v1_sessions", "method", req->method, "tenant",
                  q->t ? q->t->name : ANONYMOUS, "peer", req->peer, "session_id",
                  q->public_id[0] ? q->public_id : NULL, "code_bytes", (json_int_t)q->code_len,
                  "code_sha256", q->code_sha[0] ? q->code_sha : NULL, "policy", q->policy,
                  "verdict", q->verdict, "status", status, "outcome", q->outcome);
    if (o && q->tool) { /* an MCP tool's call: audited as the MCP endpoint's */
        json_object_set_new(o, "endpoint", json_string("mcp"));
        json_object_set_new(o, "tool", json_string(q->tool));
    }
    char *line = o ? json_dumps(o, GW_JSON_FLAGS) : NULL;
    if (line)
        gw_audit_write(q->g->jobs->audit, line, strlen(line));
    free(line);
    json_decref(o);
}

static void dispatch(struct sreq *q, const struct sg_http_request *req,
                     struct sg_http_response *resp)
{
    const struct gw_jobs *j = q->g->jobs;
    if (gw_tenants_authenticate(q->rs->tenants, req, resp, &q->t) < 0)
        return;
    uint64_t rate = q->t ? q->t->rate : j->cfg->anonymous_rate;
    uint64_t burst = q->t ? q->t->burst : j->cfg->anonymous_burst;
    uint64_t retry_ms = 0;
    if (!gw_ratelimit_take(j->ratelimit, q->t ? q->t->name : ANONYMOUS, rate, burst, gw_now_ns(),
                           &retry_ms))
        return sg_http_error(resp, 429, "rate_limited", "rate limit exceeded; retry later");
    if (q->t)
        snprintf(q->tenant_hdr, sizeof(q->tenant_hdr), "t.%s", q->t->name);
    else
        snprintf(q->tenant_hdr, sizeof(q->tenant_hdr), ANONYMOUS);
    const char *u = req->url + sizeof(PREFIX) - 1;
    if (*u == '\0') {
        if (strcmp(req->method, "POST") == 0)
            return handle_create(q, req, resp);
        if (strcmp(req->method, "GET") == 0)
            return handle_list(q, resp);
        return sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed here",
                             req->method);
    }
    u++;
    size_t n = strcspn(u, "/");
    if (parse_public_id(q, u, n) < 0)
        return sg_http_error(resp, 404, "session_not_found", "no such session");
    route_one(q, req, u + n, resp);
}

static void handle(struct gw_sessions *g, const struct sg_http_request *req, bool may_stream,
                   const char *tool, struct sg_http_response *resp)
{
    struct sreq q = {.g = g, .hreq = req, .may_stream = may_stream, .tool = tool};
    gw_request_id(q.id);
    q.rs = gw_ruleset_slot_get(g->jobs->rules);
    uint64_t t0 = gw_now_ns();
    dispatch(&q, req, resp);
    if (resp->status >= 400 && !q.outcome)
        q.outcome = resp->error_code ? resp->error_code : "error";
    sg_http_add_header(resp, "X-Request-Id", q.id);
    audit(&q, req, resp->status);
    if (q.stream) { /* the answer (or the rejection) as the final result event */
        struct sg_http_response head = {0};
        sg_http_add_header(&head, "X-Request-Id", q.id);
        gw_sse_out_finish(&q.out, req, &head, resp);
    }
    gw_metrics_observe(g->jobs->metrics, GW_HIST_TOTAL, (gw_now_ns() - t0) / 1000);
    gw_ruleset_unref(q.rs);
}

void gw_sessions_handle(struct gw_sessions *g, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    handle(g, req, true, NULL, resp);
}

void gw_sessions_handle_tool(struct gw_sessions *g, const struct sg_http_request *req,
                             struct sg_http_response *resp, const char *tool)
{
    handle(g, req, false, tool, resp);
}
