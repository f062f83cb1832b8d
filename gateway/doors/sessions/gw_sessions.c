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
#define EXEC_ID_LEN (16 + 1 + 32)

/* One request: who asks, which session, and what the audit line says. */
struct sreq {
    struct gw_adm a; /* the admission: caller, policy, analysis, audit */
    struct gw_sessions *g;
    char tenant_hdr[80]; /* X-Sandgate-Tenant for the executors */
    enum sg_lang lang;
    char boot[17];
    char exec_id[EXEC_ID_LEN + 1];
    char public_id[GW_SESSION_PUBLIC_ID_LEN + 1];
    const struct sg_http_request *hreq; /* the request, to begin a stream on */
    bool may_stream;                    /* the caller takes an event stream */
    bool stream;                        /* a streamed cell: answered as events */
    struct gw_sse_out out;              /* its stream, once begun */
    const struct gw_exec_hooks *hooks;  /* for the next call(): the relay's */
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

void gw_sessions_init(struct gw_sessions *g, const struct gw_services *jobs)
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
 * with its status; a session on an executor that is gone is session_lost,
 * and one whose executor is there but cannot be reached now (restarting:
 * it may take its sessions back) is 503 with Retry-After, the call not sent.
 * An answer too large for the gateway's memory budget now is 503
 * server_busy with Retry-After (the call itself was made). */
static void pass_error(struct sreq *q, const struct gw_exec_result *x,
                       struct sg_http_response *resp)
{
    if (x->over_budget) { /* the gateway's own memory, not the session's */
        q->a.outcome = "server_busy";
        sg_http_error(resp, 503, "server_busy", "%s", x->message);
        sg_http_add_header(resp, "Retry-After", "1");
        return;
    }
    if (x->outcome == GW_EXEC_UNREACHABLE && x->attempts > 0) {
        q->a.outcome = "executor_unreachable";
        sg_http_error(resp, 503, "executor_unreachable",
                      "the executor holding this session cannot be reached now (it may be "
                      "restarting): the call was not sent, retry");
        sg_http_add_header(resp, "Retry-After", "1");
        return;
    }
    if (x->outcome != GW_EXEC_OK) {
        q->a.outcome = "session_lost";
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
        "session_start_failed", "docker_unreachable", "shutting_down", "no_package_set",
        "workspace_full",       "memory_busy"};
    const char *c = "executor_failed";
    for (size_t i = 0; code && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(code, known[i]) == 0)
            c = known[i];
    long st = x->http_status >= 400 && x->http_status < 600 ? x->http_status : 502;
    q->a.outcome = c;
    sg_http_error(resp, (int)st, c, "%.400s", msg ? msg : "the executor refused the call");
    if (st == 503) /* busy: pool_busy, sessions_full, memory_busy */
        sg_http_add_header(resp, "Retry-After", "1");
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

/* The executor's create body: the policy's run-time half, limits, timeouts,
 * and the policy's name as the session's label. */
static json_t *create_body(struct sreq *q, json_t *in, const struct sg_policy *p)
{
    const struct gw_config *c = q->g->jobs->cfg;
    int js = q->lang == SG_LANG_JAVASCRIPT;
    json_t *limits = json_object_get(in, "limits");
    json_t *t = json_object_get(limits, "timeout_ms");
    uint64_t max_t = q->a.caps.max_timeout_ms;
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
    json_t *lang = json_object_get(in, "language");
    json_t *net = json_object_get(in, "network");
    struct gw_req_error e;
    if (!json_is_object(in))
        sg_http_error(resp, 400, "bad_request", "body must be a JSON object");
    else if (!lang)
        sg_http_error(resp, 400, "bad_request", "language: missing");
    else if (gw_request_language(lang, &q->lang, &e) < 0)
        sg_http_error(resp, e.status, e.code, "%s", e.message);
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
    uint64_t max = q->a.tenant && q->a.tenant->max_sessions >= 0
                       ? (uint64_t)q->a.tenant->max_sessions
                       : c->max_sessions;
    unsigned open = 0;
    json_decref(
        gw_router_sessions_list(q->g->jobs->router, q->tenant_hdr, GW_SESSION_CALL_MS, &open));
    if (open < max)
        return 0;
    q->a.outcome = "too_many_sessions";
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
    if (create_checks(q, in, resp) < 0 || gw_admit_policy(&q->a, policy_name(in), resp) < 0) {
        json_decref(in);
        return;
    }
    p = q->a.policy;
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
    if (q->a.outcome) /* the cap refused it */
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
        q->a.outcome = "created";
        gw_respond_json(resp, 201, json_incref(ans));
    }
    json_decref(ans);
    gw_exec_result_free(&x);
}

/* ----------------------------------------------------------------- cells */

/* The cell's body (gw_request.h, GW_REQ_CELL: the same checks and error
 * codes as the code of /v1/run); a streamed cell when the caller takes one. */
static int parse_cell(struct sreq *q, const struct sg_http_request *req, struct gw_request *c,
                      struct sg_http_response *resp)
{
    struct gw_req_error e;
    if (gw_request_parse(GW_REQ_CELL, req->body, req->body_len, &q->a.caps, c, &e) < 0) {
        sg_http_error(resp, e.status, e.code, "%s", e.message);
        return -1;
    }
    c->lang = q->lang;
    gw_admit_code(&q->a, q->lang, c->code, c->code_len);
    const char *accept = sg_http_header(req, "Accept");
    q->stream = q->may_stream && (c->stream || (accept && strstr(accept, "text/event-stream")));
    return 0;
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
 * policy: the cell is held to the policy's max_source_bytes as a job is, the
 * earlier cells to the session's own history limit. 1: accepted; 0:
 * rejected (answered); -1: failed (answered). */
static int analyse(struct sreq *q, const char *history, size_t hlen, const struct gw_request *c,
                   struct sg_http_response *resp)
{
    if (hlen > GW_SESSIONS_HISTORY_MAX) {
        sg_http_error(resp, 413, "session_history_full",
                      "the session's cells exceed %u bytes in total: start a new session",
                      GW_SESSIONS_HISTORY_MAX);
        return -1;
    }
    if (c->code_len > gw_admit_source_limit(&q->a)) {
        hlen = 0; /* the cell alone, refused by its size as a job would be */
        history = "";
    }
    char *all = malloc(hlen + c->code_len + 1);
    if (!all) {
        sg_http_error(resp, 500, "internal", "out of memory");
        return -1;
    }
    memcpy(all, history, hlen);
    memcpy(all + hlen, c->code, c->code_len);
    all[hlen + c->code_len] = '\0';
    uint32_t offset = 0;
    for (size_t i = 0; i < hlen; i++)
        offset += history[i] == '\n';
    int r = hlen ? gw_admit_analyze_long(&q->a, all, hlen + c->code_len, resp)
                 : gw_admit_analyze(&q->a, all, c->code_len, resp);
    free(all);
    if (r < 0)
        return -1;
    if (q->a.an.accepted)
        return 1;
    struct sg_violations *vs = &q->a.an.violations;
    map_lines(vs, offset);
    json_t *o = gw_result_rejected(vs);
    json_object_set_new(o, "session_id", json_string(q->public_id));
    json_object_set_new(o, "job_id", json_string(q->a.id));
    json_object_set_new(o, "policy", gw_admit_policy_json(&q->a));
    json_object_set_new(o, "violations", sg_violations_to_json(vs));
    q->a.outcome = "rejected";
    gw_respond_json(resp, 200, o);
    return 0;
}

/* The cell's answer in the /v1/run shape plus the session's fields. */
static void answer_cell(struct sreq *q, const struct gw_exec_result *x,
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
    gw_admit_runtime(&q->a, rtv);
    gw_admit_outcome(&q->a, json_string_value(json_object_get(o, "status")));
    json_object_set_new(o, "job_id", json_string(q->a.id));
    json_object_set_new(o, "session_id", json_string(q->public_id));
    json_object_set(o, "session_lost", json_object_get(ans, "session_lost"));
    json_object_set_new(o, "policy", gw_admit_policy_json(&q->a));
    json_object_set_new(o, "violations", rtv ? rtv : json_array());
    json_object_set(o, "limits", json_object_get(ans, "limits"));
    gw_respond_json(resp, 200, o);
    json_decref(ans);
}

/* The session's policy (its label on the executor), still loaded. */
static int session_policy(struct sreq *q, json_t *info, struct sg_http_response *resp)
{
    const char *name = json_string_value(json_object_get(info, "label"));
    const struct sg_policy *p = name ? gw_ruleset_policy(q->a.rs, q->a.tenant, name) : NULL;
    if (!p || strcmp(p->name, name) != 0) {
        sg_http_error(resp, 409, "policy_unavailable",
                      "the session's policy '%.64s' is no longer loaded: start a new session",
                      name ? name : "?");
        return -1;
    }
    q->a.policy = p;
    return 0;
}

/* A streamed cell's hooks (gw_relay.h): its events go to the client as
 * they come; the client's hang-up aborts the call (the executor then
 * interrupts the cell as a cancel does). */
static int cell_start(void *ud)
{
    struct sreq *q = ud;
    struct sg_http_response head = {0};
    sg_http_add_header(&head, "X-Request-Id", q->a.id);
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

/* Send an accepted cell; the answer goes to resp. */
static void send_cell(struct sreq *q, const struct gw_request *c, size_t history_bytes,
                      struct sg_http_response *resp)
{
    const struct gw_config *cfg = q->g->jobs->cfg;
    /* the executor runs the cell only if no other cell ran since the
     * history this analysis saw (concurrent cells could not otherwise
     * have been analysed together) */
    json_t *body = json_pack("{s:s%,s:I}", "code", c->code, c->code_len, "history_bytes",
                             (json_int_t)history_bytes);
    if (body && q->stream)
        json_object_set_new(body, "stream", json_true());
    if (body && c->timeout_ms)
        json_object_set_new(body, "limits",
                            json_pack("{s:I}", "timeout_ms", (json_int_t)c->timeout_ms));
    char *text = body ? json_dumps(body, GW_JSON_FLAGS) : NULL;
    json_decref(body);
    if (!text)
        return sg_http_error(resp, 500, "internal", "cannot encode the cell");
    char path[128];
    snprintf(path, sizeof(path), PREFIX "/%s/exec", q->exec_id);
    uint64_t budget =
        (c->timeout_ms ? c->timeout_ms : cfg->max_timeout_ms) + cfg->exec_grace_ms + 5000;
    const struct gw_exec_hooks hooks = {.start = cell_start,
                                        .event = cell_event,
                                        .idle = cell_idle,
                                        .client_fd = cell_client_fd,
                                        .ud = q};
    q->hooks = q->stream ? &hooks : NULL;
    struct gw_exec_result x = {0};
    uint64_t t0 = gw_now_ns();
    call(q, "POST", path, text, strlen(text), budget, &x);
    q->a.exec_us = (gw_now_ns() - t0) / 1000;
    gw_metrics_observe(q->g->jobs->metrics, GW_HIST_EXEC, q->a.exec_us);
    snprintf(q->a.executor, sizeof(q->a.executor), "%s", x.executor);
    q->hooks = NULL;
    free(text);
    if (x.client_gone)
        sg_http_error(resp, 499, "client_gone", "the client went away; cell interrupted");
    else
        answer_cell(q, &x, resp);
    gw_exec_result_free(&x);
}

static void handle_exec(struct sreq *q, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    struct gw_request c;
    if (parse_cell(q, req, &c, resp) < 0)
        return;
    char path[128];
    snprintf(path, sizeof(path), PREFIX "/%s?history=1", q->exec_id);
    struct gw_exec_result x = {0};
    call(q, "GET", path, NULL, 0, GW_SESSION_CALL_MS, &x);
    json_t *info = x.outcome == GW_EXEC_OK && x.http_status == 200
                       ? json_loadb(x.body, x.body_len, 0, NULL)
                       : NULL;
    json_t *h = json_object_get(info, "history");
    if (!json_is_string(h))
        pass_error(q, &x, resp);
    else if (session_policy(q, info, resp) == 0 &&
             analyse(q, json_string_value(h), json_string_length(h), &c, resp) == 1)
        send_cell(q, &c, json_string_length(h), resp);
    json_decref(info);
    gw_exec_result_free(&x);
    gw_request_free(&c);
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
        q->a.outcome = "ok";
    } else if (strncmp(rest, "/files/", 7) == 0) { /* a file's bytes, as they are */
        free(resp->body);
        resp->status = 200;
        resp->body = x.body;
        resp->body_len = x.body_len;
        resp->content_type = "application/octet-stream";
        x.body = NULL;
        if (q->a.ep == GW_EP_SESSIONS) { /* the server's answer: held until it is sent */
            resp->held += x.mem;
            x.mem = 0;
        }
        if (!resp->body)
            resp->body = strdup("");
        q->a.outcome = "ok";
    } else {
        json_t *j = x.body ? json_loadb(x.body, x.body_len, 0, NULL) : NULL;
        if (json_is_object(j) && *rest == '\0')
            public_info(j, q->lang);
        else if (json_is_object(j) && json_object_get(j, "session_id"))
            json_object_set_new(j, "session_id", json_string(q->public_id));
        q->a.outcome = "ok";
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
    q->a.outcome = "ok";
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

static void dispatch(struct sreq *q, const struct sg_http_request *req,
                     struct sg_http_response *resp)
{
    if (gw_admit_caller(&q->a, req, resp) < 0 || gw_admit_rate(&q->a, resp) < 0)
        return;
    if (q->a.tenant)
        snprintf(q->tenant_hdr, sizeof(q->tenant_hdr), "t.%s", q->a.tenant->name);
    else
        snprintf(q->tenant_hdr, sizeof(q->tenant_hdr), GW_ADMIT_ANONYMOUS);
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
    struct sreq q = {.g = g, .hreq = req, .may_stream = may_stream};
    gw_admit_begin(&q.a, g->jobs, tool ? GW_EP_MCP : GW_EP_SESSIONS, tool, req, NULL);
    dispatch(&q, req, resp);
    snprintf(q.a.session_id, sizeof(q.a.session_id), "%s", q.public_id);
    gw_admit_finish(&q.a, resp);
    if (q.stream) { /* the answer (or the rejection) as the final result event */
        struct sg_http_response head = {0};
        sg_http_add_header(&head, "X-Request-Id", q.a.id);
        gw_sse_out_finish(&q.out, req, &head, resp);
    }
    gw_admit_end(&q.a);
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
