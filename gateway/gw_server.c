#include "gw_server.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw_info.h"
#include "gw_jobs.h"
#include "gw_mcp.h"
#include "gw_respond.h"
#include "log.h"
#include "sg_token.h"

#define METRICS_MAX (4u * 1024u * 1024u)

struct route {
    const char *path;
    const char *method;
    enum gw_endpoint ep;
};

static const struct route routes[] = {
    {"/run", "POST", GW_EP_RUN},
    {"/v1/run", "POST", GW_EP_V1_RUN},
    {"/v1/analyze", "POST", GW_EP_V1_ANALYZE},
    {"/healthz", "GET", GW_EP_HEALTHZ},
    {"/readyz", "GET", GW_EP_READYZ},
    {"/metrics", "GET", GW_EP_METRICS},
    {"/v1/policies", "GET", GW_EP_POLICIES},
    {"/v1/whoami", "GET", GW_EP_WHOAMI},
    {"/v1/runtimes", "GET", GW_EP_RUNTIMES},
    {"/mcp", "POST", GW_EP_MCP},
};
/* /v1/sessions and everything under it; the handler checks the methods. */
static const struct route sessions_route = {"/v1/sessions", "*", GW_EP_SESSIONS};

/* /v1/audit and /v1/audit/{request_id}; the handler checks the method. */
static const struct route audit_route = {"/v1/audit", "*", GW_EP_AUDIT};
/* /console and the console's files (gw_console.h); the handler checks the method. */
static const struct route console_route = {"/console", "*", GW_EP_CONSOLE};

/* POST /v1/jobs/{job_id}/cancel: one route for every id (the id is checked
 * by gw_jobs_cancel). */
static const struct route cancel_route = {"/v1/jobs/{job_id}/cancel", "POST", GW_EP_V1_CANCEL};
#define CANCEL_PREFIX "/v1/jobs/"
#define CANCEL_SUFFIX "/cancel"

/* "*": the handler checks the method. /mcp also takes DELETE (end a session);
 * GET is 405: no server stream. */
static int method_ok(const struct route *rt, const char *method)
{
    return strcmp(rt->method, "*") == 0 || strcmp(method, rt->method) == 0 ||
           (rt->ep == GW_EP_MCP && strcmp(method, "DELETE") == 0);
}

static void handle_readyz(struct gw_server *s, struct sg_http_response *resp)
{
    struct gw_audit_stats as;
    gw_audit_get_stats(s->audit, &as);
    struct gw_ruleset *rs = gw_ruleset_slot_get(&s->rules);
    int ready = rs && as.writable && !atomic_load(&s->draining);
    for (int l = 0; l < SG_LANG_COUNT; l++)
        ready = ready && gw_router_healthy(s->router, l) > 0;
    json_t *o = json_pack("{s:s,s:b,s:{s:I,s:i},s:{s:b,s:I,s:I},s:o}", "status",
                          ready ? "ready" : "not_ready", "draining", atomic_load(&s->draining),
                          "policies", "loaded", (json_int_t)(rs ? rs->policies->count : 0),
                          "generation", rs ? (int)rs->generation : 0, "audit", "writable",
                          as.writable, "dropped", (json_int_t)as.dropped, "write_errors",
                          (json_int_t)as.write_errors, "executors", gw_router_status(s->router));
    gw_ruleset_unref(rs);
    gw_respond_json(resp, ready ? 200 : 503, o);
}

static int render_cache(struct gw_server *s, struct sg_buf *b)
{
    struct sg_vcache_stats vs;
    sg_vcache_get_stats(s->vcache, &vs);
    return sg_buf_printf(
        b,
        "# HELP sandgate_analysis_cache_lookups_total Verdict cache lookups by result.\n"
        "# TYPE sandgate_analysis_cache_lookups_total counter\n"
        "sandgate_analysis_cache_lookups_total{result=\"hit\"} %llu\n"
        "sandgate_analysis_cache_lookups_total{result=\"miss\"} %llu\n"
        "# HELP sandgate_analysis_cache_evictions_total Verdict cache entries evicted.\n"
        "# TYPE sandgate_analysis_cache_evictions_total counter\n"
        "sandgate_analysis_cache_evictions_total %llu\n"
        "# HELP sandgate_analysis_cache_entries Verdict cache entries held.\n"
        "# TYPE sandgate_analysis_cache_entries gauge\nsandgate_analysis_cache_entries %zu\n"
        "# HELP sandgate_analysis_cache_bytes Verdict cache memory held.\n"
        "# TYPE sandgate_analysis_cache_bytes gauge\nsandgate_analysis_cache_bytes %zu\n",
        (unsigned long long)vs.hits, (unsigned long long)vs.misses,
        (unsigned long long)vs.evictions, vs.entries, vs.bytes);
}

static int render_extra(struct gw_server *s, struct sg_buf *b)
{
    struct gw_audit_stats as;
    gw_audit_get_stats(s->audit, &as);
    if (render_cache(s, b) < 0)
        return -ENOSPC;
    return sg_buf_printf(
        b,
        "# HELP sandgate_audit_writable 1 when the audit log accepts writes.\n"
        "# TYPE sandgate_audit_writable gauge\nsandgate_audit_writable %d\n"
        "# HELP sandgate_audit_lines_total Audit lines by fate.\n"
        "# TYPE sandgate_audit_lines_total counter\n"
        "sandgate_audit_lines_total{result=\"written\"} %llu\n"
        "sandgate_audit_lines_total{result=\"dropped\"} %llu\n"
        "sandgate_audit_lines_total{result=\"write_error\"} %llu\n"
        "# HELP sandgate_reloads_total Policy/token reloads by result.\n"
        "# TYPE sandgate_reloads_total counter\n"
        "sandgate_reloads_total{result=\"ok\"} %llu\nsandgate_reloads_total{result=\"failed\"} "
        "%llu\n# HELP sandgate_inflight_requests Requests being handled.\n"
        "# TYPE sandgate_inflight_requests gauge\nsandgate_inflight_requests %u\n",
        as.writable, (unsigned long long)as.written, (unsigned long long)as.dropped,
        (unsigned long long)as.write_errors, (unsigned long long)atomic_load(&s->reloads_ok),
        (unsigned long long)atomic_load(&s->reloads_failed), atomic_load(&s->inflight));
}

static int render_connections(struct gw_server *s, struct sg_buf *b)
{
    struct sg_httpsrv_stats hs;
    sg_httpsrv_get_stats(s->http, &hs);
    return sg_buf_printf(
        b,
        "# HELP sandgate_connections_open Client connections open.\n"
        "# TYPE sandgate_connections_open gauge\nsandgate_connections_open %u\n"
        "# HELP sandgate_connections_closed_total Client connections the gateway closed "
        "without an answer, by reason.\n# TYPE sandgate_connections_closed_total counter\n"
        "sandgate_connections_closed_total{reason=\"max_connections\"} %llu\n"
        "sandgate_connections_closed_total{reason=\"per_address\"} %llu\n"
        "sandgate_connections_closed_total{reason=\"evicted\"} %llu\n"
        "sandgate_connections_closed_total{reason=\"header_timeout\"} %llu\n"
        "sandgate_connections_closed_total{reason=\"receive_timeout\"} %llu\n"
        "# HELP sandgate_requests_refused_per_tenant_total Requests answered 503 server_busy on "
        "their head: their tenant had max_connections_per_tenant requests arriving.\n"
        "# TYPE sandgate_requests_refused_per_tenant_total counter\n"
        "sandgate_requests_refused_per_tenant_total %llu\n"
        "# HELP sandgate_request_body_bytes Request bodies held in memory.\n"
        "# TYPE sandgate_request_body_bytes gauge\nsandgate_request_body_bytes %zu\n"
        "# HELP sandgate_http_library_answers_total Error pages libmicrohttpd sent itself "
        "(docs/troubleshooting.md), also those before the request line was parsed.\n"
        "# TYPE sandgate_http_library_answers_total counter\n"
        "sandgate_http_library_answers_total %llu\n",
        hs.open, (unsigned long long)hs.refused_at_accept,
        (unsigned long long)hs.refused_per_address, (unsigned long long)hs.evicted,
        (unsigned long long)hs.cut_header_timeout, (unsigned long long)hs.cut_receive_timeout,
        (unsigned long long)hs.refused_per_owner, hs.body_bytes,
        (unsigned long long)hs.library_answers);
}

static void handle_metrics(struct gw_server *s, struct sg_http_response *resp)
{
    struct sg_buf b;
    sg_buf_init(&b, METRICS_MAX);
    if (gw_metrics_render(s->metrics, &b) < 0 || gw_router_render_metrics(s->router, &b) < 0 ||
        render_extra(s, &b) < 0 || render_connections(s, &b) < 0 ||
        sg_membudget_render(&s->budget, "sandgate_gateway", &b) < 0) {
        sg_buf_free(&b);
        return sg_http_error(resp, 500, "internal", "metrics too large");
    }
    free(resp->body);
    resp->body = sg_buf_steal(&b, &resp->body_len);
    resp->status = 200;
    resp->content_type = "text/plain; version=0.0.4";
}

static void handle_policies(struct gw_server *s, const struct sg_http_request *req,
                            struct sg_http_response *resp)
{
    struct gw_ruleset *rs = gw_ruleset_slot_get(&s->rules);
    const struct gw_tenant *t = NULL;
    if (gw_tenants_authenticate(rs->tenants, req, resp, &t) == 0) {
        const struct sg_policy *def = gw_ruleset_policy(rs, t, NULL);
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < rs->policies->count; i++) {
            const struct sg_policy *p = rs->policies->items[i];
            int allowed = !t || gw_tenant_may_use(t, p->name) || p == def;
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:b,s:b}", "name", p->name, "sha256",
                                                 p->sha256, "description",
                                                 p->description ? p->description : "", "default",
                                                 p == def, "allowed", allowed));
        }
        gw_respond_json(resp, 200,
                        json_pack("{s:o,s:s,s:o}", "policies", arr, "default", def->name, "tenant",
                                  gw_info_identity(rs, t, req)));
    }
    gw_ruleset_unref(rs);
}

static const struct route *find_route(const char *url)
{
    if (gw_sessions_path(url))
        return &sessions_route;
    if (gw_audit_api_path(url))
        return &audit_route;
    if (gw_console_path(url))
        return &console_route;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (strcmp(routes[i].path, url) == 0)
            return &routes[i];
    size_t n = strlen(url), pl = strlen(CANCEL_PREFIX), sl = strlen(CANCEL_SUFFIX);
    if (n > pl + sl && strncmp(url, CANCEL_PREFIX, pl) == 0 &&
        strcmp(url + n - sl, CANCEL_SUFFIX) == 0)
        return &cancel_route;
    return NULL;
}

/* 404 / 405: filled into resp, returns -ENOENT; 0 when the route exists. */
static int route(const struct sg_http_request *req, struct sg_http_response *resp,
                 const struct route **ret)
{
    const struct route *rt = *ret = find_route(req->url);
    if (!rt) {
        sg_http_error(resp, 404, "not_found", "no endpoint %.100s", req->url);
        return -ENOENT;
    }
    if (!method_ok(rt, req->method)) {
        const char *allow = rt->ep == GW_EP_MCP ? "POST, DELETE" : rt->method;
        sg_http_error(resp, 405, "method_not_allowed", "%s takes %s", rt->path, allow);
        sg_http_add_header(resp, "Allow", allow);
        return -ENOENT;
    }
    return 0;
}

static void dispatch(struct gw_server *s, const struct sg_http_request *req,
                     struct sg_http_response *resp, enum gw_endpoint *ret_ep)
{
    const struct route *rt = NULL;
    int r = route(req, resp, &rt);
    *ret_ep = rt ? rt->ep : GW_EP_OTHER;
    if (r < 0)
        return;
    switch (rt->ep) {
    case GW_EP_HEALTHZ:
        return gw_respond_json(resp, 200, json_pack("{s:s}", "status", "ok"));
    case GW_EP_READYZ:
        return handle_readyz(s, resp);
    case GW_EP_METRICS:
        return handle_metrics(s, resp);
    case GW_EP_POLICIES:
        return handle_policies(s, req, resp);
    case GW_EP_WHOAMI:
        return gw_info_whoami(s, req, resp);
    case GW_EP_RUNTIMES:
        return gw_info_runtimes(s, req, resp);
    case GW_EP_MCP:
        return gw_mcp_handle(s->mcp, req, resp);
    case GW_EP_V1_CANCEL:
        return gw_jobs_cancel(&s->jobs, req, resp);
    case GW_EP_SESSIONS:
        return gw_sessions_handle(&s->sessions, req, resp);
    case GW_EP_AUDIT:
        return gw_audit_api_handle(&s->audit_api, req, resp);
    case GW_EP_CONSOLE:
        return gw_console_handle(s->console, req, resp);
    default:
        return gw_jobs_handle(&s->jobs, rt->ep, req, resp);
    }
}

void gw_server_handle(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct gw_server *s = ctx;
    atomic_fetch_add(&s->inflight, 1);
    enum gw_endpoint ep;
    dispatch(s, req, resp, &ep);
    if (atomic_load(&s->draining))
        sg_http_add_header(resp, "Connection", "close"); /* let keep-alive clients go */
    gw_metrics_request(s->metrics, ep, resp->status);
    atomic_fetch_sub(&s->inflight, 1);
}

/* An answer made before a handler ran: id, audit line, metric, and keep-alive
 * clients let go while draining. */
static void refused(struct gw_server *s, enum gw_endpoint ep, const struct gw_tenant *t,
                    const struct sg_http_request *req, struct sg_http_response *resp)
{
    gw_jobs_refused(&s->jobs, ep, t, req, resp);
    if (ep == GW_EP_MCP)
        gw_mcp_refusal(resp);
    if (atomic_load(&s->draining))
        sg_http_add_header(resp, "Connection", "close");
    gw_metrics_request(s->metrics, ep, resp->status);
}

/* On the headers, before any body byte is read: unknown endpoints and wrong
 * methods, and job requests without a valid token, are answered at once. */
enum sg_http_head gw_server_head(void *ctx, const struct sg_http_request *req,
                                 struct sg_http_response *resp)
{
    struct gw_server *s = ctx;
    const struct route *rt = NULL;
    if (route(req, resp, &rt) < 0) {
        refused(s, rt ? rt->ep : GW_EP_OTHER, NULL, req, resp);
        return SG_HTTP_ANSWER_NOW;
    }
    if ((rt->ep == GW_EP_AUDIT || rt->ep == GW_EP_CONSOLE) && strcmp(req->method, "GET") != 0 &&
        strcmp(req->method, "HEAD") != 0) {
        gw_server_handle(s, req, resp); /* read-only: their 405 before any body byte */
        return SG_HTTP_ANSWER_NOW;
    }
    if (rt->ep != GW_EP_RUN && rt->ep != GW_EP_V1_RUN && rt->ep != GW_EP_V1_ANALYZE &&
        rt->ep != GW_EP_MCP && rt->ep != GW_EP_V1_CANCEL && rt->ep != GW_EP_SESSIONS)
        return SG_HTTP_GO_ON;
    struct gw_ruleset *rs = gw_ruleset_slot_get(&s->rules);
    const struct gw_tenant *t = NULL;
    int r = gw_tenants_authenticate(rs->tenants, req, resp, &t);
    if (r < 0)
        refused(s, rt->ep, t, req, resp);
    else if (t) /* its requests still arriving are counted (max_connections_per_tenant) */
        snprintf(resp->owner, sizeof(resp->owner), "%s", t->name);
    gw_ruleset_unref(rs);
    return r < 0 ? SG_HTTP_ANSWER_NOW : SG_HTTP_GO_ON;
}

/* GETs of /v1/sessions ask the executors: a worker answers them, so the
 * event threads never wait on an executor. */
bool gw_server_get_on_worker(void *ctx, const struct sg_http_request *req)
{
    (void)ctx;
    return gw_sessions_path(req->url) || gw_audit_api_path(req->url); /* SQLite reads */
}

void gw_server_refused(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct gw_server *s = ctx;
    const struct route *rt = find_route(req->url);
    refused(s, rt ? rt->ep : GW_EP_OTHER, NULL, req, resp);
}

/* The MCP list_runtimes tool asks what GET /v1/runtimes would answer. */
static void mcp_runtimes(void *ctx, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    gw_info_runtimes(ctx, req, resp);
}

/* The executor secret, read as the executors read it (sg_token.h). */
static int read_executor_token(const char *path, char **ret, struct sg_error *err)
{
    char token[SG_TOKEN_MAX];
    *ret = NULL;
    if (!path || !*path)
        return 0;
    int r = sg_token_file_read(path, token, err);
    if (r == 0 && !(*ret = strdup(token)))
        r = sg_error_set(err, -ENOMEM, "out of memory");
    explicit_bzero(token, sizeof(token));
    return r;
}

/* The audit index's tailing thread and the /v1/audit views (gw_audit_api.h). */
static int open_audit_index(struct gw_server *s, struct sg_error *err)
{
    const struct gw_config *c = &s->cfg;
    s->audit_api = (struct gw_audit_api){c, &s->rules, NULL, s->ratelimit, s->audit, s->router};
    if (!c->audit_index[0])
        return 0;
    struct gw_audit_index_config ic = {c->audit_index, c->audit_log, c->audit_index_retention_days,
                                       c->audit_index_max_rows, 0};
    int r = gw_audit_index_open(&ic, 1, &s->audit_index, err);
    s->audit_api.index = s->audit_index;
    return r;
}

/* The daemon's memory budget (membudget.h): memory_budget_bytes within what
 * the container's limit allows, else half that limit, else the default; it
 * must hold at least one request at the body cap with its job. */
static int choose_budget(struct gw_server *s, struct sg_error *err)
{
    uint64_t limit = 0, bytes = 0;
    const char *source = NULL;
    if (sg_membudget_cgroup_limit("/sys/fs/cgroup", NULL, &limit) < 0)
        limit = 0;
    int r = sg_membudget_choose(s->cfg.memory_budget_bytes, limit, GW_MEMORY_BUDGET_DEFAULT,
                                "memory_budget_bytes", &bytes, &source, err);
    if (r < 0)
        return r;
    uint64_t one = s->cfg.max_body_bytes + gw_job_memory(s->cfg.max_body_bytes);
    if (bytes < one)
        return sg_error_set(err, -EINVAL,
                            "memory_budget_bytes: %llu bytes (%s) cannot hold one request at "
                            "max_body_bytes with its job (%llu bytes)",
                            (unsigned long long)bytes, source, (unsigned long long)one);
    sg_membudget_init(&s->budget, (size_t)bytes);
    sg_log(SG_LOG_INFO, "memory_budget", "bytes=%llu source=%s container_limit=%llu",
           (unsigned long long)bytes, source, (unsigned long long)limit);
    return 0;
}

int gw_server_new(const struct gw_config *cfg, struct gw_server **ret, struct sg_error *err)
{
    struct gw_server *s = calloc(1, sizeof(*s));
    if (!s)
        return sg_error_set(err, -ENOMEM, "out of memory");
    s->cfg = *cfg;
    pthread_mutex_init(&s->reload_lock, NULL);
    struct gw_ruleset *rs = NULL;
    char *token = NULL;
    int r = gw_ruleset_load(cfg->policies_dir, cfg->default_policy, cfg->tokens_file, &rs, err);
    gw_ruleset_slot_init(&s->rules, rs);
    if (r < 0 || (r = choose_budget(s, err)) < 0 ||
        (r = read_executor_token(cfg->executor_token_file, &token, err)) < 0 ||
        (r = gw_audit_open(cfg->audit_log, cfg->audit_queue_max, &s->audit, err)) < 0 ||
        (r = gw_router_new(cfg, token, &s->router, err)) < 0)
        goto fail;
    gw_router_set_budget(s->router, &s->budget);
    s->metrics = gw_metrics_new();
    s->ratelimit = gw_ratelimit_new();
    /* every job runs on a worker (MCP tool calls too): one entry each */
    s->jobtab = gw_jobtab_new(cfg->max_inflight_requests);
    if (!s->metrics || !s->ratelimit || !s->jobtab) {
        r = sg_error_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    r = sg_vcache_new(cfg->analysis_cache_entries, cfg->analysis_cache_bytes, &s->vcache);
    if (r < 0) {
        sg_error_set(err, r, "analysis cache: cannot allocate %llu entries",
                     (unsigned long long)cfg->analysis_cache_entries);
        goto fail;
    }
    free(token);
    token = NULL;
    s->jobs = (struct gw_services){&s->cfg,      &s->rules, s->router, s->audit,  s->metrics,
                                   s->ratelimit, s->vcache, s->jobtab, &s->budget};
    gw_sessions_init(&s->sessions, &s->jobs);
    if ((r = gw_mcp_new(&s->jobs, mcp_runtimes, s, GW_MCP_SESSIONS_MAX, GW_MCP_SESSION_IDLE_MS,
                        &s->mcp, err)) < 0)
        goto fail;
    s->mcp->code_sessions = &s->sessions;
    if ((r = open_audit_index(s, err)) < 0 ||
        (r = gw_console_new(cfg->console_dir, &s->console, err)) < 0)
        goto fail;
    *ret = s;
    return 0;
fail:
    free(token);
    gw_server_free(s);
    return r;
}

int gw_server_listen(struct gw_server *s, struct sg_error *err)
{
    const struct gw_config *c = &s->cfg;
    struct sg_httpsrv_config hc;
    gw_config_http(c, (uint16_t)c->port, c->max_body_bytes, &s->budget, &hc);
    static const struct sg_http_handlers h = {gw_server_handle, gw_server_head, gw_server_refused,
                                              gw_server_get_on_worker};
    int r = sg_httpsrv_start(&hc, &h, s, &s->http, err);
    if (r == 0 && c->dify_port)
        r = gw_dify_start(&s->dify, &s->jobs, err);
    return r;
}

uint16_t gw_server_port(const struct gw_server *s)
{
    return sg_httpsrv_port(s->http);
}

int gw_server_reload(struct gw_server *s, struct sg_error *err)
{
    pthread_mutex_lock(&s->reload_lock);
    struct gw_ruleset *next = NULL;
    int r =
        gw_ruleset_load(s->cfg.policies_dir, s->cfg.default_policy, s->cfg.tokens_file, &next, err);
    if (r == 0) {
        gw_ruleset_slot_swap(&s->rules, next);
        atomic_fetch_add(&s->reloads_ok, 1);
    } else {
        atomic_fetch_add(&s->reloads_failed, 1);
    }
    gw_audit_reopen(s->audit);
    pthread_mutex_unlock(&s->reload_lock);
    return r;
}

unsigned gw_server_drain(struct gw_server *s)
{
    atomic_store(&s->draining, 1);
    sg_httpsrv_quiesce(s->http);
    gw_dify_quiesce(&s->dify);
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (uint64_t waited = 0; atomic_load(&s->inflight) && waited < s->cfg.drain_timeout_ms;
         waited += 10)
        nanosleep(&nap, NULL);
    unsigned left = atomic_load(&s->inflight) + atomic_load(&s->dify.running);
    sg_httpsrv_stop(s->http);
    s->http = NULL;
    gw_dify_stop(&s->dify);
    return left;
}

void gw_server_free(struct gw_server *s)
{
    if (!s)
        return;
    sg_httpsrv_stop(s->http);
    gw_dify_stop(&s->dify);
    gw_mcp_free(s->mcp);
    gw_sessions_destroy(&s->sessions);
    gw_router_free(s->router);
    gw_audit_index_close(s->audit_index);
    gw_console_free(s->console);
    gw_audit_close(s->audit);
    gw_metrics_free(s->metrics);
    gw_ratelimit_free(s->ratelimit);
    gw_jobtab_free(s->jobtab);
    sg_vcache_free(s->vcache);
    gw_ruleset_slot_destroy(&s->rules);
    pthread_mutex_destroy(&s->reload_lock);
    free(s);
}

int gw_server_check(const struct gw_config *cfg, struct sg_error *err)
{
    struct gw_ruleset *rs = NULL;
    char *token = NULL;
    int r = gw_ruleset_load(cfg->policies_dir, cfg->default_policy, cfg->tokens_file, &rs, err);
    gw_ruleset_unref(rs);
    if (r < 0 || (r = read_executor_token(cfg->executor_token_file, &token, err)) < 0)
        return r;
    free(token);
    struct gw_console *console = NULL;
    if ((r = gw_console_new(cfg->console_dir, &console, err)) < 0)
        return r;
    gw_console_free(console);
    if (cfg->audit_log[0] && strcmp(cfg->audit_log, "-") != 0) {
        int fd = open(cfg->audit_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
        if (fd < 0)
            return sg_error_set(err, -errno, "audit_log: %s: %s", cfg->audit_log, strerror(errno));
        close(fd);
    }
    return 0;
}
