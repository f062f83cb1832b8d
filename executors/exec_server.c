#include "exec_server.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "egress.h"
#include "exec_api.h"
#include "exec_sse.h"
#include "membudget.h"
#include "job.h"
#include "json_out.h"
#include "log.h"
#include "outcome.h"
#include "sandbox_runsc.h"
#include "sg_random.h"
#include "sha256.h"

#define EXEC_METRICS_RENDER_MAX (128u * 1024u)
#define EXEC_CANCEL_PREFIX "/v1/exec/"
#define EXEC_CANCEL_SUFFIX "/cancel"

bool exec_server_token_ok(const char *header, const char *token)
{
    static const char prefix[] = "Bearer ";
    if (!header || strncmp(header, prefix, sizeof(prefix) - 1) != 0)
        return false;
    const char *got = header + sizeof(prefix) - 1;
    size_t gl = strlen(got), tl = strlen(token);
    /* Compare every byte of the expected token whatever the input. */
    unsigned char diff = (unsigned char)(gl != tl);
    for (size_t i = 0; i < tl; i++)
        diff |= (unsigned char)(token[i] ^ (i < gl ? got[i] : 0));
    return diff == 0;
}

static void set_json(struct sg_http_response *resp, int status, json_t *j)
{
    resp->status = status;
    /* one buffer of the answer's exact size (json_dumps's growing buffer
     * holds its old and its doubled copy at each growth) */
    resp->body_len = 0;
    resp->body = j ? json_out_exact(j, JSON_COMPACT, &resp->body_len) : NULL;
    json_decref(j);
}

/* A job the executor could not start: 503 with an error object and a
 * program_runner_error result (PROTOCOL.md), so either reading works. */
static void refuse_job(struct exec_server *s, struct sg_http_response *resp,
                       const struct exec_request *req, const char *code, const char *msg,
                       double wait_ms)
{
    struct exec_outcome o;
    outcome_init(&o);
    outcome_runner_error(&o, "%s", strcmp(code, "pool_busy") == 0 ? "pool_busy" : msg);
    json_t *j = exec_response_json(req->job_id, req, &o, wait_ms, 0);
    if (j)
        json_object_set_new(j, "error", json_pack("{s:s,s:s}", "code", code, "message", msg));
    /* No package set installs all of the job's modules: no wait and no
     * other executor of the language changes that, so it is not "busy". */
    set_json(resp, strcmp(code, "no_package_set") == 0 ? 422 : 503, j);
    metrics_rejected(s->metrics, code);
    sg_log(SG_LOG_WARN, "job_refused", "job_id=%s reason=%s wait_ms=%.1f", req->job_id, code,
           wait_ms);
}

static void log_start(const struct exec_server *s, const struct exec_request *req)
{
    char sha[SG_SHA256_HEX_LEN + 1];
    sg_sha256_hex(req->code, req->code_len, sha);
    sg_log(SG_LOG_INFO, "job_start", "job_id=%s code_len=%zu code_sha256=%s timeout_ms=%u",
           req->job_id, req->code_len, sha, req->limits.timeout_ms);
    if (s->cfg->insecure_runtime)
        sg_log(SG_LOG_WARN, "insecure_runtime",
               "job_id=%s runtime=%s msg=\"job runs WITHOUT the gVisor sandbox\"", req->job_id,
               s->cfg->runtime);
}

/* What the runner said on its way out goes to this log only (never to the
 * client: its traceback and paths are sandgate's internals). */
static void log_runner_diag(const char *job_id, const struct exec_outcome *o)
{
    char quoted[OUTCOME_LOG_DETAIL_MAX];
    if (!o->log_detail[0])
        return;
    sg_log_quote(o->log_detail, quoted, sizeof(quoted));
    sg_log(SG_LOG_WARN, "runner_diag", "job_id=%s diag=\"%s\"", job_id, quoted);
}

/* A networked job: a sandbox of the networked pool (its address looked up
 * when it was launched, pool.h) and the job's allow-list handed to the egress
 * proxy under that address (egress.h). */
static int net_acquire(struct exec_server *s, struct exec_request *req, struct sandbox *sb,
                       struct sg_error *err)
{
    if (!s->net_pool)
        return sg_error_set(err, -ENETUNREACH,
                            "this executor runs no networked jobs (no --egress-network)");
    int r = pool_acquire(s->net_pool, s->cfg->pool_wait_ms, sb, err);
    if (r < 0)
        return r;
    if ((r = egress_grant(s->cfg, sb->ip, req->job_id, req->network_allow, err)) < 0) {
        pool_release(s->net_pool, sb);
        return r == -EHOSTDOWN ? r : -ENETUNREACH;
    }
    return 0;
}

/* Withdraw the grant, count and return what the proxy decided. */
static json_t *net_finish(struct exec_server *s, const struct exec_request *req, const char *ip)
{
    json_t *net = NULL;
    struct sg_error e = {0};
    if (egress_withdraw(s->cfg, ip, req->job_id, &net, &e) < 0)
        sg_log(SG_LOG_ERROR, "egress_withdraw_failed", "job_id=%s error=\"%s\"", req->job_id,
               e.msg);
    metrics_egress(s->metrics, json_array_size(json_object_get(net, "allowed")),
                   json_array_size(json_object_get(net, "denied")));
    return net;
}

/* The job's answer: the JSON body, or (streamed) its final result event. */
static void job_answer(struct sg_http_stream *st, struct sg_http_response *resp, json_t *j)
{
    if (!st)
        return set_json(resp, 200, j);
    exec_sse_result(st, j);
}

/* Where a job's sandbox comes from and goes back to: a flavour's pool, or
 * the networked pool (the sandbox then carries its address, for the proxy). */
struct lease {
    struct sandbox sb;
    unsigned flavour;
    bool fallback;
};

static int lease_take(struct exec_server *s, struct exec_request *req, struct lease *l,
                      struct sg_error *err)
{
    if (req->network_allow) {
        req->pool = EXEC_EGRESS_POOL_NAME;
        return net_acquire(s, req, &l->sb, err);
    }
    int r = pool_set_acquire_named(s->pools, req->flavour, req->imports, req->n_imports,
                                   s->cfg->pool_wait_ms, &l->sb, &l->flavour, &l->fallback, err);
    req->pool = r == 0 ? pool_set_flavour_name(s->pools, l->flavour) : NULL;
    req->pool_fallback = l->fallback;
    return r;
}

/* Give the sandbox back (a networked job's grant withdrawn first); the
 * proxy's decisions for a networked job, else NULL. */
static json_t *lease_return(struct exec_server *s, const struct exec_request *req, struct lease *l)
{
    if (!req->network_allow) {
        pool_set_release(s->pools, l->flavour, &l->sb);
        return NULL;
    }
    json_t *net = net_finish(s, req, l->sb.ip);
    pool_release(s->net_pool, &l->sb);
    return net;
}

static const char *refusal_code(int r)
{
    return r == -EBUSY         ? "pool_busy"
           : r == -EHOSTDOWN   ? "docker_unreachable"
           : r == -ENETUNREACH ? "network_unavailable"
           : r == -ENOENT      ? "no_package_set"
                               : "shutting_down";
}

/* What a job holds in the budget, and what it lets go once it is written. */
struct job_hold {
    struct exec_server *s;
    struct exec_request *req;
    size_t body_len;
    size_t reserved; /* exec_job_memory(), less the input once it is sent */
};

static void input_sent(void *ud)
{
    struct job_hold *h = ud;
    size_t input = exec_job_input_memory(h->body_len, h->req->tree_bytes);
    exec_request_drop_input(h->req);
    sg_membudget_release(h->s->budget, input);
    h->reserved -= input;
}

/* The answer waits in the server until a (maybe slow) client has it: that
 * much of the result's reservation stays held, and the server releases it
 * once the answer is sent or the client is gone; the rest goes now. */
static void hand_over_reservation(struct exec_server *s, const struct sg_http_stream *st,
                                  struct sg_http_response *resp, size_t reserved)
{
    size_t keep = !st && resp->body ? (resp->body_len < reserved ? resp->body_len : reserved) : 0;
    resp->held += keep;
    sg_membudget_release(s->budget, reserved - keep);
}

/* The gVisor the job ran on; with the direct backend also how its sandbox
 * started: "restored" from a checkpoint or "booted". */
static json_t *sandbox_facts(const struct exec_server *s, const struct sandbox *sb)
{
    json_t *j = runsc_info_json(s->runsc, s->cfg->runtime);
    if (j && s->cfg->backend_runsc)
        json_object_set_new(j, "start", json_string(sb->restored ? "restored" : "booted"));
    return j;
}

static void run_job(struct exec_server *s, const struct sg_http_request *hreq,
                    struct exec_request *req, struct exec_job_slot *slot,
                    struct sg_http_response *resp, struct job_hold *hold)
{
    double t0 = attach_now_ms();
    struct lease l = {0};
    struct sg_error e = {0};
    struct exec_outcome o;
    outcome_init(&o);
    if (exec_job_cancelled(slot)) { /* cancelled before it arrived: nothing runs */
        outcome_cancelled(&o, "cancelled");
        set_json(resp, 200, exec_response_json(req->job_id, req, &o, 0, 0));
        metrics_job(s->metrics, o.status, NULL, 0);
        sg_log(SG_LOG_INFO, "job_end", "job_id=%s status=cancelled before=start", req->job_id);
        return outcome_clear(&o);
    }
    int r = lease_take(s, req, &l, &e);
    double wait_ms = attach_now_ms() - t0;
    if (r < 0)
        return refuse_job(s, resp, req, refusal_code(r), e.msg, wait_ms);
    char nonce[JOB_NONCE_LEN + 1];
    /* shares the request's strings; encoded into the sandbox's stream */
    json_t *job = sg_random_hex(nonce, JOB_NONCE_LEN / 2) == 0 ? exec_job_json(req, nonce) : NULL;
    /* From here on the job runs: a streamed answer starts now (200). */
    struct sg_http_response head = {.status = 200, .content_type = "text/event-stream"};
    struct sg_http_stream *st = req->stream ? sg_http_stream_begin(hreq, &head) : NULL;
    struct job_hooks hooks = {.cancel_fd = exec_job_cancel_fd(slot),
                              .client_fd = st ? sg_http_stream_fd(st) : -1,
                              .heartbeat_ms = st ? EXEC_STREAM_HEARTBEAT_MS : 0,
                              .frame = st ? exec_sse_frame : NULL,
                              .heartbeat = exec_sse_heartbeat,
                              .ud = st,
                              .budget = s->budget,
                              .sent = input_sent,
                              .sent_ud = hold};
    double run_ms = 0;
    size_t reserved = 0; /* the result line's; the answer's part released once sent */
    bool ran = job != NULL;
    if (job) /* job_run consumes the job, then lets the input go (input_sent) */
        job_run(s->dc, &l.sb, nonce, job, req->limits.timeout_ms, req->limits.max_output_bytes,
                &hooks, &o, &run_ms, &reserved);
    if (ran && o.memory_used_kb >= (long long)s->cfg->memory_mb * 1024 * 8 / 10)
        job_confirm_oom_exit(s->dc, &l.sb, run_ms, &o); /* near the limit: ask the engine */
    else if (!ran)
        outcome_runner_error(&o, "cannot encode the job");
    json_t *net = lease_return(s, req, &l);
    json_t *body = exec_response_json(req->job_id, req, &o, wait_ms, run_ms);
    if (body && net)
        json_object_set(body, "network", net);
    if (body && s->runsc)
        json_object_set_new(body, "sandbox", sandbox_facts(s, &l.sb));
    json_decref(net);
    job_answer(st, resp, body);
    metrics_job(s->metrics, o.status, o.resource_limit_type, run_ms);
    sg_log(SG_LOG_INFO, "job_end",
           "job_id=%s status=%s exit_code=%d limit=%s container=%.12s flavour=%s fallback=%d "
           "wait_ms=%.1f run_ms=%.1f",
           req->job_id, outcome_status_name(o.status), o.exit_code,
           o.resource_limit_type ? o.resource_limit_type : "-", l.sb.id, req->pool, l.fallback,
           wait_ms, run_ms);
    log_runner_diag(req->job_id, &o);
    outcome_clear(&o);
    hand_over_reservation(s, st, resp, reserved);
}

static void handle_exec(struct exec_server *s, const struct sg_http_request *req,
                        struct sg_http_response *resp)
{
    if (s->token[0] && !exec_server_token_ok(sg_http_header(req, "Authorization"), s->token)) {
        metrics_rejected(s->metrics, "unauthorized");
        sg_http_error(resp, 401, "unauthorized", "missing or wrong bearer token");
        return;
    }
    struct exec_request er;
    struct sg_error e = {0};
    int r = exec_request_parse(req->body, req->body_len, s->cfg, &er, &e);
    if (r < 0) {
        metrics_rejected(s->metrics, "bad_request");
        sg_http_error(resp, r == -E2BIG ? 413 : 400, "bad_request", "%s", e.msg);
        return;
    }
    atomic_fetch_add(&s->in_flight, 1);
    log_start(s, &er);
    struct exec_job_slot *slot = s->jobs ? exec_jobs_add(s->jobs, er.job_id) : NULL;
    /* the job's memory is reserved before it takes a sandbox */
    struct job_hold hold = {
        .s = s,
        .req = &er,
        .body_len = req->body_len,
        .reserved = exec_job_memory(req->body_len, er.tree_bytes, er.limits.max_output_bytes)};
    bool held = sg_membudget_reserve(s->budget, hold.reserved);
    if (atomic_load(&s->draining))
        refuse_job(s, resp, &er, "shutting_down", "executor is shutting down", 0);
    else if (!held)
        refuse_job(s, resp, &er, "memory_busy",
                   "the executor's memory budget is in use; retry shortly", 0);
    else
        run_job(s, req, &er, slot, resp, &hold);
    if (s->jobs)
        exec_jobs_remove(s->jobs, slot);
    atomic_fetch_sub(&s->in_flight, 1);
    exec_request_free(&er);
    if (held)
        sg_membudget_release(s->budget, hold.reserved);
}

/* The pools' figures, on the heap (one slot per flavour makes the struct
 * large); NULL after answering 500. Caller frees. */
static struct pool_set_stats *stats_snapshot(struct exec_server *s, struct sg_http_response *resp)
{
    struct pool_set_stats *st = malloc(sizeof(*st));
    if (!st) {
        sg_http_error(resp, 500, "internal", "out of memory");
        return NULL;
    }
    pool_set_get_stats(s->pools, st);
    return st;
}

static json_t *flavours_json(const struct pool_set_stats *st)
{
    json_t *a = json_array();
    for (unsigned f = 0; a && f < st->n; f++) {
        const struct pool_set_flavour *o = &st->f[f];
        json_array_append_new(
            a, json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:f,s:I,s:I,s:I}", "name", o->name,
                         "preimport", o->preimport, "size", o->size, "target", o->ps.target, "idle",
                         o->ps.idle, "busy", o->ps.busy, "creating", o->ps.creating, "memory_mb",
                         o->mem_mb, "memory_measured", o->measured, "create_ms", o->ps.create_ms,
                         "hits", (json_int_t)o->hits, "fallbacks", (json_int_t)o->fallbacks,
                         "arrivals", (json_int_t)o->arrivals));
    }
    return a;
}

/* The networked pool (null when this executor runs no networked jobs). */
static json_t *egress_json(struct exec_server *s)
{
    if (!s->net_pool)
        return json_null();
    struct pool_stats ps;
    pool_get_stats(s->net_pool, &ps);
    return json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:i}", "network", s->cfg->egress_network,
                     "proxy", s->cfg->egress_proxy, "runtime", s->cfg->egress_runtime, "target",
                     ps.target, "idle", ps.idle, "busy", ps.busy, "creating", ps.creating,
                     "tearing_down", ps.tearing_down);
}

/* The gVisor facts; an accepted old runsc is a warning in every answer. */
static void add_runsc(const struct exec_server *s, json_t *j)
{
    if (!s->runsc)
        return;
    json_object_set_new(j, "sandbox", runsc_info_json(s->runsc, s->cfg->runtime));
    if (s->runsc->warning[0])
        json_object_set_new(j, "warnings", json_pack("[s]", s->runsc->warning));
}

/* The direct backend's starts: restore on/off, counts, each pool's current
 * generation (--sandbox-restore). */
static json_t *restore_json(struct sandbox_runsc *rs)
{
    if (!rs)
        return json_null();
    struct sandbox_runsc_stats st;
    sandbox_runsc_get_stats(rs, &st);
    json_t *gens = json_array();
    for (unsigned i = 0; gens && i < st.n; i++)
        json_array_append_new(gens,
                              json_pack("{s:s,s:i,s:i,s:f}", "pool", st.g[i].pool, "generation",
                                        st.g[i].seq, "uses", st.g[i].uses, "age_s", st.g[i].age_s));
    return json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:o}", "enabled", st.restore, "boots",
                     (json_int_t)st.boots, "restores", (json_int_t)st.restores, "fallbacks",
                     (json_int_t)st.fallbacks, "checkpoints", (json_int_t)st.checkpoints,
                     "checkpoint_failures", (json_int_t)st.checkpoint_failures, "generations",
                     gens);
}

static void render_restore(struct sg_buf *b)
{
    struct sandbox_runsc *rs = sandbox_runsc_in_use();
    if (!rs)
        return;
    struct sandbox_runsc_stats st;
    sandbox_runsc_get_stats(rs, &st);
    sg_buf_printf(b,
                  "# HELP sandgate_executor_sandbox_restore Whether pool sandboxes are restored "
                  "from checkpoints (--sandbox-restore).\n"
                  "# TYPE sandgate_executor_sandbox_restore gauge\n"
                  "sandgate_executor_sandbox_restore %d\n"
                  "# HELP sandgate_executor_sandbox_starts_total Sandboxes started, by how.\n"
                  "# TYPE sandgate_executor_sandbox_starts_total counter\n"
                  "sandgate_executor_sandbox_starts_total{how=\"booted\"} %lu\n"
                  "sandgate_executor_sandbox_starts_total{how=\"restored\"} %lu\n"
                  "# HELP sandgate_executor_restore_fallbacks_total Restores that failed and "
                  "fell back to a boot.\n"
                  "# TYPE sandgate_executor_restore_fallbacks_total counter\n"
                  "sandgate_executor_restore_fallbacks_total %lu\n"
                  "# HELP sandgate_executor_checkpoints_total Checkpoints taken, by result.\n"
                  "# TYPE sandgate_executor_checkpoints_total counter\n"
                  "sandgate_executor_checkpoints_total{result=\"ok\"} %lu\n"
                  "sandgate_executor_checkpoints_total{result=\"failed\"} %lu\n",
                  st.restore ? 1 : 0, st.boots, st.restores, st.fallbacks, st.checkpoints,
                  st.checkpoint_failures);
    if (st.n)
        sg_buf_printf(b, "# HELP sandgate_executor_restore_generation_uses Restores from the "
                         "pool's current checkpoint.\n"
                         "# TYPE sandgate_executor_restore_generation_uses gauge\n"
                         "# HELP sandgate_executor_restore_generation_age_seconds Age of the "
                         "pool's current checkpoint.\n"
                         "# TYPE sandgate_executor_restore_generation_age_seconds gauge\n");
    for (unsigned i = 0; i < st.n; i++)
        sg_buf_printf(b,
                      "sandgate_executor_restore_generation_uses{pool=\"%s\"} %u\n"
                      "sandgate_executor_restore_generation_age_seconds{pool=\"%s\"} %.1f\n",
                      st.g[i].pool, st.g[i].uses, st.g[i].pool, st.g[i].age_s);
}

/* sandgate_executor_runsc_info: an info gauge (value 1) labelled with the facts. */
static void render_runsc(const struct exec_server *s, struct sg_buf *b)
{
    const struct runsc_info *ri = s->runsc;
    if (!ri)
        return;
    sg_buf_printf(b,
                  "# HELP sandgate_executor_runsc_info The sandboxes' runtime, runsc version "
                  "and gVisor platform (value 1).\n"
                  "# TYPE sandgate_executor_runsc_info gauge\n"
                  "sandgate_executor_runsc_info{runtime=\"%s\",version=\"%s\",platform=\"%s\","
                  "accepted_old=\"%s\"} 1\n",
                  s->cfg->runtime, ri->version[0] ? ri->version : "unknown",
                  ri->platform[0] ? ri->platform : "unknown", ri->warning[0] ? "true" : "false");
}

/* The daemon's own memory budget (not the sandboxes': pool.memory_*). */
static json_t *membudget_json(const struct sg_membudget *b)
{
    struct sg_membudget_stats st;
    sg_membudget_get_stats(b, &st);
    return json_pack("{s:I,s:I,s:I,s:I}", "budget_bytes", (json_int_t)st.limit, "used_bytes",
                     (json_int_t)st.used, "peak_bytes", (json_int_t)st.peak, "refused",
                     (json_int_t)st.refused);
}

static void handle_health(struct exec_server *s, struct sg_http_response *resp)
{
    struct pool_set_stats *st = stats_snapshot(s, resp);
    if (!st)
        return;
    struct pool_stats ps = st->total;
    bool ok = ps.docker_up && (ps.idle > 0 || ps.launch_ok) && !atomic_load(&s->draining);
    json_t *j = json_pack(
        "{s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i},s:s,s:s,s:b,s:s?,s:I}", "status", ok ? "ok" : "degraded",
        "language", sg_lang_name(s->cfg->language), "pool", "target", ps.target, "idle", ps.idle,
        "busy", ps.busy, "creating", ps.creating, "tearing_down", ps.tearing_down, "docker",
        ps.docker_up ? "reachable" : "unreachable", "runtime", s->cfg->runtime, "insecure_runtime",
        s->cfg->insecure_runtime, "last_error", ok || !ps.last_error[0] ? NULL : ps.last_error,
        "max_jobs", (json_int_t)s->cfg->max_jobs); /* the gateway sends no more */
    if (j) {
        json_object_set_new(j, "flavours", flavours_json(st));
        if (s->sessions) {
            /* the gateway routes session calls by this id (a restart changes it) */
            json_object_set_new(j, "boot_id", json_string(sessions_boot_id(s->sessions)));
            json_object_set_new(j, "sessions",
                                json_pack("{s:i,s:i}", "open", sessions_count(s->sessions), "max",
                                          s->cfg->max_sessions));
        }
        json_object_set_new(json_object_get(j, "pool"), "memory_budget_mb",
                            json_integer(st->budget_mb));
        json_object_set_new(json_object_get(j, "pool"), "memory_planned_mb",
                            json_integer(st->planned_mb));
        json_object_set_new(json_object_get(j, "pool"), "memory_sessions_mb",
                            json_integer(st->held_mb));
        json_object_set_new(j, "egress", egress_json(s));
        json_object_set_new(j, "daemon_memory", membudget_json(s->budget));
        add_runsc(s, j);
        if (s->cfg->backend_runsc)
            json_object_set_new(j, "restore", restore_json(sandbox_runsc_in_use()));
    }
    free(st);
    set_json(resp, ok ? 200 : 503, j);
}

static void handle_metrics(struct exec_server *s, struct sg_http_response *resp)
{
    struct pool_set_stats *st = stats_snapshot(s, resp);
    if (!st)
        return;
    const struct pool_stats *ps = &st->total;
    struct metrics_gauges g = {ps->target, ps->idle, ps->busy, ps->creating, ps->docker_up};
    char *base = metrics_render(s->metrics, &g);
    struct sg_buf b;
    sg_buf_init(&b, EXEC_METRICS_RENDER_MAX);
    if (base)
        sg_buf_printf(&b, "%s", base);
    pool_set_render_metrics(st, &b);
    render_runsc(s, &b);
    render_restore(&b);
    sg_membudget_render(s->budget, "sandgate_executor_daemon", &b);
    free(base);
    free(st);
    resp->status = 200;
    resp->body = sg_buf_steal(&b, NULL);
    resp->content_type = "text/plain; version=0.0.4";
}

/* The image's runtime listing (runtime_info.h); behind the token like jobs. */
static void handle_runtime(struct exec_server *s, const struct sg_http_request *req,
                           struct sg_http_response *resp)
{
    if (s->token[0] && !exec_server_token_ok(sg_http_header(req, "Authorization"), s->token))
        return sg_http_error(resp, 401, "unauthorized", "missing or wrong bearer token");
    if (!s->runtime_json)
        return sg_http_error(resp, 404, "runtime_unknown",
                             "the sandbox image has no "
                             "runtime listing (images built by sandgate have one)");
    free(resp->body);
    resp->body = strdup(s->runtime_json);
    resp->body_len = 0;
    if (!resp->body)
        return sg_http_error(resp, 500, "internal", "out of memory");
    resp->status = 200;
}

bool exec_server_get_on_worker(void *ctx, const struct sg_http_request *req)
{
    (void)ctx;
    return strncmp(req->url, "/v1/sessions", 12) == 0;
}

/* The job id in /v1/exec/{job_id}/cancel, or NULL when url is not that. */
static const char *cancel_id(const char *url, char out[EXEC_JOB_ID_MAX + 1])
{
    size_t pl = strlen(EXEC_CANCEL_PREFIX), sl = strlen(EXEC_CANCEL_SUFFIX), n = strlen(url);
    if (n <= pl + sl || strncmp(url, EXEC_CANCEL_PREFIX, pl) != 0 ||
        strcmp(url + n - sl, EXEC_CANCEL_SUFFIX) != 0 || n - pl - sl > EXEC_JOB_ID_MAX)
        return NULL;
    memcpy(out, url + pl, n - pl - sl);
    out[n - pl - sl] = '\0';
    return out;
}

enum sg_http_head exec_server_head(void *ctx, const struct sg_http_request *req,
                                   struct sg_http_response *resp)
{
    struct exec_server *s = ctx;
    char id[EXEC_JOB_ID_MAX + 1];
    if (!cancel_id(req->url, id))
        return SG_HTTP_GO_ON;
    if (strcmp(req->method, "POST") != 0)
        sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed on %s", req->method,
                      "/v1/exec/{job_id}/cancel");
    else if (s->token[0] && !exec_server_token_ok(sg_http_header(req, "Authorization"), s->token))
        sg_http_error(resp, 401, "unauthorized", "missing or wrong bearer token");
    else if (!exec_job_id_valid(id))
        sg_http_error(resp, 400, "bad_request", "job_id must match [A-Za-z0-9._-]{1,64}");
    else {
        int found = s->jobs ? exec_jobs_cancel(s->jobs, id) : 0;
        sg_log(SG_LOG_INFO, "job_cancel", "job_id=%s running=%d", id, found);
        set_json(resp, 202, json_pack("{s:s,s:b}", "job_id", id, "running", found));
    }
    return SG_HTTP_ANSWER_NOW;
}

/* A session call holds its parsed body, a cell's line or an upload's encoded
 * copy, and its result line, reserved first, whole: stdout and stderr at the
 * output cap, in the line, parsed and in the answer (dumped through a
 * growing buffer). */
#define EXEC_SESSION_BODY_COPIES 3u
#define EXEC_SESSION_LINE_COPIES 3u
static void session_call(struct exec_server *s, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    size_t out = s->cfg->max_output_bytes;
    size_t mem = EXEC_JOB_MEMORY_FIXED + EXEC_SESSION_BODY_COPIES * req->body_len + out +
                 EXEC_SESSION_LINE_COPIES * 2 * out;
    if (!sg_membudget_reserve(s->budget, mem)) {
        metrics_rejected(s->metrics, "memory_busy");
        sg_http_error(resp, 503, "memory_busy",
                      "the executor's memory budget is in use; retry shortly");
        sg_http_add_header(resp, "Retry-After", "1");
        return;
    }
    sessions_handle(s->sessions, req, resp);
    sg_membudget_release(s->budget, mem);
}

void exec_server_handle(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct exec_server *s = ctx;
    const char *m = req->method;
    const char *u = req->url;
    if (strncmp(u, "/v1/sessions", 12) == 0 && (u[12] == '\0' || u[12] == '/')) {
        if (s->token[0] && !exec_server_token_ok(sg_http_header(req, "Authorization"), s->token))
            sg_http_error(resp, 401, "unauthorized", "missing or wrong bearer token");
        else if (!s->sessions || atomic_load(&s->draining))
            sg_http_error(resp, 503, "shutting_down", "executor is shutting down");
        else
            session_call(s, req, resp);
    } else if (strcmp(u, "/v1/exec") == 0 && strcmp(m, "POST") == 0)
        handle_exec(s, req, resp);
    else if (strcmp(u, "/healthz") == 0 && strcmp(m, "GET") == 0)
        handle_health(s, resp);
    else if (strcmp(u, "/metrics") == 0 && strcmp(m, "GET") == 0)
        handle_metrics(s, resp);
    else if (strcmp(u, "/v1/runtime") == 0 && strcmp(m, "GET") == 0)
        handle_runtime(s, req, resp);
    else if (!strcmp(u, "/v1/exec") || !strcmp(u, "/healthz") || !strcmp(u, "/metrics") ||
             !strcmp(u, "/v1/runtime"))
        sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed on %s", m, u);
    else
        sg_http_error(resp, 404, "not_found", "no such endpoint");
}
