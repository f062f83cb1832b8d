/* sessions_http.c - the executor's /v1/sessions endpoints (PROTOCOL.md,
 * "Sessions"): create, list, info, delete, exec, cancel and workspace files.
 * Every request names its tenant in X-Sandgate-Tenant (the gateway's); a
 * session of another tenant is answered 404 like an unknown id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "b64.h"
#include "exec_api.h"
#include "exec_sse.h"
#include "log.h"
#include "membudget.h"
#include "metrics.h"
#include "sessions_int.h"
#include "sessions_store.h"
#include "sg_file_name.h"
#include "sg_random.h"
#include "sha256.h"

#define PREFIX "/v1/sessions"
#define OP_ANSWER_MAX (16u * 1024u * 1024u) /* a file operation's answer line */

/* ------------------------------------------------------------- create */

static int seconds_field(json_t *root, const char *key, unsigned def, unsigned max, unsigned *ret,
                         struct sg_error *err)
{
    json_t *v = json_object_get(root, key);
    *ret = def;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
        return sg_error_set(err, -EINVAL, "%s must be an integer from 1 to %u", key, max);
    *ret = (unsigned)json_integer_value(v);
    return 0;
}

/* The session's own keys of a create body: its timeouts and label. */
static int create_fields(json_t *root, unsigned *idle_s, unsigned *life_s, struct sg_error *err)
{
    json_t *label = json_object_get(root, "label");
    if (seconds_field(root, "idle_timeout_s", SESSIONS_IDLE_DEFAULT_S, SESSIONS_IDLE_MAX_S, idle_s,
                      err) < 0 ||
        seconds_field(root, "max_lifetime_s", SESSIONS_LIFE_DEFAULT_S, SESSIONS_LIFE_MAX_S, life_s,
                      err) < 0)
        return -EINVAL;
    if (label && (!json_is_string(label) || json_string_length(label) > SESSIONS_LABEL_MAX ||
                  !sess_tenant_ok(json_string_value(label))))
        return sg_error_set(err, -EINVAL, "label must be 1-%d bytes of [A-Za-z0-9._-]",
                            SESSIONS_LABEL_MAX);
    return 0;
}

/* Launch the runner's session on a fresh sandbox: 0, or an answer in resp. */
static int start_runner(struct session *x, const struct exec_request *er,
                        struct sg_http_response *resp)
{
    json_t *o = json_pack("{s:b,s:{s:I}}", "session", 1, "limits", "max_output_bytes",
                          (json_int_t)er->limits.max_output_bytes);
    if (o && er->runtime)
        json_object_set(o, "runtime", er->runtime);
    char nonce[JOB_NONCE_LEN + 1];
    if (!o || sess_new_nonce(nonce) < 0) {
        json_decref(o);
        sg_http_error(resp, 500, "internal", "cannot encode the session start");
        return -1;
    }
    struct job_io io;
    job_io_init(&io, OP_ANSWER_MAX, nonce);
    sess_exchange(x, o, nonce, SESSIONS_START_MS, &io);
    const char *outcome =
        io.end == JOB_END_RESULT ? json_string_value(json_object_get(io.result, "outcome")) : NULL;
    int r = 0;
    if (!outcome || strcmp(outcome, "ok") != 0) {
        const char *msg = json_string_value(json_object_get(io.result, "message"));
        sg_log(SG_LOG_WARN, "session_start_failed", "container=%.12s end=%d outcome=%s", x->sb.id,
               (int)io.end, outcome ? outcome : "-");
        sg_http_error(resp, 502, "session_start_failed",
                      "the sandbox could not start a session: %.300s",
                      msg ? msg : "no answer from the runner (this image may lack sessions)");
        r = -1;
    }
    job_io_free(&io);
    return r;
}

static struct session *session_alloc(const char *tenant, const struct exec_request *er,
                                     unsigned idle_s, unsigned life_s)
{
    struct session *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    pthread_mutex_init(&x->wlock, NULL);
    sg_buf_init(&x->history, SESSIONS_HISTORY_MAX);
    snprintf(x->tenant, sizeof(x->tenant), "%s", tenant);
    x->idle_s = idle_s;
    x->life_s = life_s;
    x->max_output = er->limits.max_output_bytes;
    x->timeout_ms = er->limits.timeout_ms;
    x->memory_kb = -1;
    x->created_ms = x->used_ms = sess_now_ms();
    x->created_wall = x->used_wall = time(NULL);
    return x;
}

/* Put x in a free slot (a tombstone gives way when none is free); -1 when
 * the executor already holds max_sessions open sessions. */
static int insert(struct sessions *s, struct session *x, struct session **ret_evicted)
{
    int r = -1, tomb = -1;
    pthread_mutex_lock(&s->lock);
    if (sess_count_open_locked(s, NULL) < s->c.max_sessions) {
        for (unsigned i = 0; i < s->n_slots && r < 0; i++) {
            if (!s->slot[i])
                r = (int)i;
            else if (s->slot[i]->lost && !s->slot[i]->busy && tomb < 0)
                tomb = (int)i;
        }
        if (r < 0 && tomb >= 0) {
            *ret_evicted = s->slot[tomb];
            r = tomb;
        }
        if (r >= 0)
            s->slot[r] = x;
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

static int new_ids(struct sessions *s, struct session *x)
{
    char rnd[SESSIONS_RAND_HEX + 1];
    if (sg_random_hex(rnd, SESSIONS_RAND_HEX / 2) < 0 ||
        sg_random_hex(x->key, SESSIONS_KEY_HEX / 2) < 0)
        return -1;
    snprintf(x->id, sizeof(x->id), "%s-%s", sessions_boot_id(s), rnd);
    return 0;
}

static void acquire_failed(struct sg_http_response *resp, int r, const struct sg_error *e)
{
    const char *code = r == -EBUSY       ? "pool_busy"
                       : r == -EHOSTDOWN ? "docker_unreachable"
                       : r == -ENOENT    ? "no_package_set"
                                         : "shutting_down";
    sg_http_error(resp, r == -ENOENT ? 422 : 503, code, "no sandbox for the session: %s",
                  e->msg[0] ? e->msg : code);
}

static void handle_create(struct sessions *s, const char *tenant, const struct sg_http_request *req,
                          struct sg_http_response *resp)
{
    struct exec_request er;
    struct sg_error e = {0};
    unsigned idle_s, life_s;
    int r = exec_session_request_parse(req->body, req->body_len, s->c.cfg, &er, &e);
    if (r < 0)
        return sg_http_error(resp, r == -E2BIG ? 413 : 400, "bad_request", "%s", e.msg);
    struct session *x = NULL, *evicted = NULL;
    json_t *label = json_object_get(er.root, "label");
    if (create_fields(er.root, &idle_s, &life_s, &e) < 0) {
        sg_http_error(resp, 400, "bad_request", "%s", e.msg);
        goto out;
    }
    x = session_alloc(tenant, &er, idle_s, life_s);
    if (x && label)
        snprintf(x->label, sizeof(x->label), "%s", json_string_value(label));
    if (!x || new_ids(s, x) < 0) {
        sg_http_error(resp, 500, "internal", "cannot allocate a session");
        goto out;
    }
    x->busy = true; /* nobody may use it before the runner said ready */
    if (insert(s, x, &evicted) < 0) {
        sg_http_error(resp, 503, "sessions_full", "this executor holds %u sessions, its maximum",
                      s->c.max_sessions);
        sess_free(x);
        x = NULL;
        goto out;
    }
    sess_end_now(s, evicted);
    bool fallback = false;
    r = pool_set_acquire(s->c.pools, er.imports, er.n_imports, s->c.cfg->pool_wait_ms, &x->sb,
                         &x->flavour, &fallback, &e);
    if (r < 0) {
        acquire_failed(resp, r, &e);
        sess_discard(s, x);
        goto out;
    }
    x->has_sb = true;
    pool_set_hold(s->c.pools, x->flavour, true);
    if (start_runner(x, &er, resp) < 0) {
        sess_discard(s, x);
        goto out;
    }
    json_t *j = sess_info_json(x, false);
    json_object_set_new(j, "state", json_string("idle")); /* from now on */
    json_object_set_new(j, "limits",
                        json_pack("{s:I,s:I,s:I}", "timeout_ms", (json_int_t)er.limits.timeout_ms,
                                  "memory_mb", (json_int_t)er.limits.memory_mb, "max_output_bytes",
                                  (json_int_t)er.limits.max_output_bytes));
    sg_log(SG_LOG_INFO, "session_start",
           "session_id=%s container=%.12s flavour=%s idle_s=%u life_s=%u", x->id, x->sb.id,
           pool_set_flavour_name(s->c.pools, x->flavour), idle_s, life_s);
    sess_give_back(s, x, NULL);
    sess_answer(resp, 201, j);
out:
    exec_request_free(&er);
}

/* --------------------------------------------------------------- cells */

/* The runner's line for one cell (a streamed one asks for frames); the cell's text joins the
 * history only when it fits (413 otherwise, before anything ran). */
static json_t *cell_line(const struct exec_request *er)
{
    return json_pack("{s:s%,s:{s:I,s:I},s:b}", "cell", er->code, er->code_len, "limits",
                     "timeout_ms", (json_int_t)er->limits.timeout_ms, "max_output_bytes",
                     (json_int_t)er->limits.max_output_bytes, "stream", er->stream);
}

static void note_cell(struct sessions *s, struct session *x, const struct exec_request *er,
                      const struct exec_outcome *o)
{
    pthread_mutex_lock(&s->lock);
    x->cells++;
    if (o->memory_used_kb >= 0)
        x->memory_kb = o->memory_used_kb;
    sg_buf_append(&x->history, er->code, er->code_len);
    sg_buf_append(&x->history, "\n", 1);
    pthread_mutex_unlock(&s->lock);
    const char *dir = s->c.cfg->session_dir;
    if (dir[0] && sstore_append_history(dir, x->id, er->code, er->code_len) == 0)
        sstore_append_history(dir, x->id, "\n", 1);
}

/* The running cell's cancel line (the runner interrupts the cell); the
 * caller keeps x from ending (the table lock, or the cell it runs). */
static int send_cancel(struct session *x)
{
    char line[JOB_NONCE_LEN + SESSIONS_KEY_HEX + 64];
    int n =
        snprintf(line, sizeof(line), "{\"key\":\"%s\",\"cancel\":\"%s\"}\n", x->key, x->cell_nonce);
    pthread_mutex_lock(&x->wlock);
    int r = attach_write_all(x->sb.fd, line, (size_t)n, (int64_t)sess_now_ms() + 2000);
    pthread_mutex_unlock(&x->wlock);
    return r;
}

/* A streamed cell: its stream and its session, the hooks' ud. */
struct sess_stream {
    struct sg_http_stream *st;
    struct session *x;
};

static int sess_stream_frame(void *ud, const char *name, json_t *text)
{
    return exec_sse_frame(((struct sess_stream *)ud)->st, name, text);
}

static int sess_stream_heartbeat(void *ud)
{
    return exec_sse_heartbeat(((struct sess_stream *)ud)->st);
}

/* A streamed cell's client went: the cell is interrupted as by a cancel,
 * and its result still read (the session survives a handled interrupt). */
static void cell_client_gone(void *ud)
{
    struct session *x = ((struct sess_stream *)ud)->x;
    int r = send_cancel(x);
    sg_log(SG_LOG_INFO, "cell_client_gone", "session_id=%s cancel_sent=%d", x->id, r == 0);
}

static void run_cell(struct sessions *s, struct session *x, struct exec_request *er,
                     const struct sg_http_request *hreq, struct sg_http_response *resp)
{
    char nonce[JOB_NONCE_LEN + 1];
    struct exec_outcome o;
    outcome_init(&o);
    json_t *line = cell_line(er);
    if (!line || sess_new_nonce(nonce) < 0) {
        json_decref(line);
        sess_give_back(s, x, NULL);
        return sg_http_error(resp, 500, "internal", "cannot encode the cell");
    }
    pthread_mutex_lock(&s->lock);
    memcpy(x->cell_nonce, nonce, sizeof(nonce));
    pthread_mutex_unlock(&s->lock);
    /* A streamed cell's answer starts now (200); its frames, heartbeats and
     * its client's hang-up go through the hooks. */
    struct sg_http_response head = {.status = 200, .content_type = "text/event-stream"};
    struct sg_http_stream *st = er->stream ? sg_http_stream_begin(hreq, &head) : NULL;
    struct sess_stream ss = {.st = st, .x = x};
    struct job_hooks hooks = {.cancel_fd = -1,
                              .client_fd = st ? sg_http_stream_fd(st) : -1,
                              .heartbeat_ms = st ? EXEC_STREAM_HEARTBEAT_MS : 0,
                              .frame = sess_stream_frame,
                              .heartbeat = sess_stream_heartbeat,
                              .client_gone = cell_client_gone,
                              .ud = &ss};
    struct job_io io;
    /* a streamed cell's output also travels in its frames: room for both */
    size_t frames = st ? job_result_cap(er->limits.max_output_bytes, 0) : 0;
    job_io_init(&io, job_result_cap(er->limits.max_output_bytes, JOB_ARTIFACTS_MAX) + frames,
                nonce);
    io.hooks = st ? &hooks : NULL;
    sess_exchange(x, line, nonce, er->limits.timeout_ms + SESSIONS_CANCEL_GRACE_MS + JOB_GRACE_MS,
                  &io);
    job_classify(s->c.dc, &x->sb, &io, &o);
    if (io.end == JOB_END_RESULT && json_is_true(json_object_get(io.result, "session_lost")))
        job_confirm_oom_exit(s->c.dc, &x->sb, io.run_ms, &o); /* the interpreter died */
    const char *why = NULL;
    if (io.end != JOB_END_RESULT)
        why = x->doomed ? "the session was deleted or expired while the cell ran"
                        : "the sandbox ended while the cell ran";
    else if (json_is_true(json_object_get(io.result, "session_lost")))
        why = "the interpreter ended; its variables are gone";
    note_cell(s, x, er, &o);
    json_t *j = exec_response_json(er->job_id, er, &o, 0, io.run_ms);
    json_object_set_new(j, "session_id", json_string(x->id));
    json_object_set_new(j, "session_lost", json_boolean(why != NULL));
    sg_log(SG_LOG_INFO, "cell_end", "session_id=%s job_id=%s status=%s code_len=%zu run_ms=%.1f",
           x->id, er->job_id, outcome_status_name(o.status), er->code_len, io.run_ms);
    job_io_free(&io);
    outcome_clear(&o);
    sess_give_back(s, x, why);
    if (st)
        exec_sse_result(st, j);
    else
        sess_answer(resp, 200, j);
}

static void handle_exec(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                        const struct sg_http_request *req, struct sg_http_response *resp)
{
    struct exec_request er;
    struct sg_error e = {0};
    int r = exec_session_request_parse(req->body, req->body_len, s->c.cfg, &er, &e);
    if (r < 0)
        return sg_http_error(resp, r == -E2BIG ? 413 : 400, "bad_request", "%s", e.msg);
    struct session *x = NULL;
    json_t *lim = json_object_get(er.root, "limits");
    bool own_timeout = json_object_get(lim, "timeout_ms") != NULL;
    bool own_output = json_object_get(lim, "max_output_bytes") != NULL;
    json_t *expect = json_object_get(er.root, "history_bytes");
    if (expect && (!json_is_integer(expect) || json_integer_value(expect) < 0)) {
        exec_request_free(&er);
        return sg_http_error(resp, 400, "bad_request", "history_bytes must be an integer >= 0");
    }
    if (sess_take(s, id, id_len, tenant, resp, &x) == 0) {
        if (expect && (size_t)json_integer_value(expect) != x->history.len) {
            /* another cell ran after the gateway analysed this one with the
             * cells before it: that analysis no longer holds */
            sess_give_back(s, x, NULL);
            sg_http_error(resp, 409, "session_busy",
                          "another cell ran in this session meanwhile: send the cell again");
            exec_request_free(&er);
            return;
        }
        if (!own_timeout)
            er.limits.timeout_ms = x->timeout_ms;
        if (!own_output)
            er.limits.max_output_bytes = x->max_output;
        if (x->history.len + er.code_len + 1 > x->history.cap) {
            sess_give_back(s, x, NULL);
            sg_http_error(resp, 413, "session_history_full",
                          "the session's cells exceed %u bytes in total: start a new session",
                          SESSIONS_HISTORY_MAX);
        } else {
            run_cell(s, x, &er, req, resp);
        }
    }
    exec_request_free(&er);
}

/* The cancel line is written under the table lock: the session cannot end
 * under it, and the line is a few dozen bytes on an idle stream. */
static void handle_cancel(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                          struct sg_http_response *resp)
{
    int r = 0;
    pthread_mutex_lock(&s->lock);
    int i = sess_find_locked(s, id, id_len, tenant);
    struct session *x = i >= 0 ? s->slot[i] : NULL;
    bool running = x && x->busy && x->cell_nonce[0];
    if (running)
        r = send_cancel(x);
    pthread_mutex_unlock(&s->lock);
    if (!x)
        return sess_not_found(resp);
    if (!running)
        return sg_http_error(resp, 409, "no_cell_running", "no cell is running in this session");
    sg_log(SG_LOG_INFO, "cell_cancel", "session_id=%.*s ok=%d", (int)id_len, id, r == 0);
    if (r < 0)
        return sg_http_error(resp, 502, "cancel_failed", "could not reach the session's runner");
    sess_answer(resp, 202, json_pack("{s:s%,s:b}", "session_id", id, id_len, "cancel_sent", 1));
}

/* --------------------------------------------------------------- files */

/* One file operation on x (taken): the runner's answer, or NULL with the
 * answer in resp (the session is lost when the runner did not answer). */
static json_t *file_op(struct sessions *s, struct session *x, json_t *o, size_t line_max,
                       struct sg_http_response *resp)
{
    char nonce[JOB_NONCE_LEN + 1];
    if (!o || sess_new_nonce(nonce) < 0) {
        json_decref(o);
        sess_give_back(s, x, NULL);
        sg_http_error(resp, 500, "internal", "cannot encode the file operation");
        return NULL;
    }
    struct job_io io;
    job_io_init(&io, line_max, nonce);
    sess_exchange(x, o, nonce, SESSIONS_FILE_OP_MS, &io);
    json_t *ans = io.end == JOB_END_RESULT ? json_incref(io.result) : NULL;
    job_io_free(&io);
    sess_give_back(s, x, ans ? NULL : "the sandbox did not answer a file operation");
    const char *outcome = json_string_value(json_object_get(ans, "outcome"));
    if (!ans) {
        sg_http_error(resp, 410, "session_lost", "the session's sandbox did not answer");
    } else if (!outcome || strcmp(outcome, "ok") != 0) {
        const char *msg = json_string_value(json_object_get(ans, "message"));
        const char *err = json_string_value(json_object_get(ans, "error"));
        bool missing = msg && strcmp(msg, "no such file") == 0;
        bool full = err && strcmp(err, "workspace_full") == 0;
        bool large = err && strcmp(err, "file_too_large") == 0; /* a download over the cap */
        sg_http_error(resp,
                      missing ? 404
                      : full  ? 507
                      : large ? 413
                              : 400,
                      missing ? "file_not_found"
                      : full  ? "workspace_full"
                      : large ? "file_too_large"
                              : "bad_file",
                      "%.300s", msg ? msg : "the file operation failed");
        json_decref(ans);
        ans = NULL;
    }
    return ans;
}

static bool name_ok(const char *name, size_t len, struct sg_http_response *resp)
{
    if (sg_file_name_ok(name, len) && !sg_file_name_reserved(name, len))
        return true;
    sg_http_error(resp, 400, "bad_file_name",
                  "file names are 1-128 bytes of [A-Za-z0-9._-], no leading dot, no '..', "
                  "not main.py / main.js / artifacts");
    return false;
}

static void put_file(struct sessions *s, struct session *x, const char *name, size_t name_len,
                     const struct sg_http_request *req, struct sg_http_response *resp)
{
    char *b64 = NULL;
    size_t b64_len = 0;
    if (req->body_len > SESSIONS_FILE_MAX) {
        sess_give_back(s, x, NULL);
        return sg_http_error(resp, 413, "file_too_large", "files are at most %u bytes",
                             SESSIONS_FILE_MAX);
    }
    if (sg_b64_encode((const unsigned char *)req->body, req->body_len, &b64, &b64_len) < 0) {
        sess_give_back(s, x, NULL);
        return sg_http_error(resp, 500, "internal", "out of memory");
    }
    json_t *o = json_pack("{s:s,s:s%,s:s%}", "op", "put_file", "name", name, name_len,
                          "content_b64", b64, b64_len);
    free(b64);
    json_t *ans = file_op(s, x, o, OP_ANSWER_MAX, resp);
    if (ans) {
        resp->status = 204;
        free(resp->body);
        resp->body = strdup("");
    }
    json_decref(ans);
}

/* A download: at most SESSIONS_FILE_MAX bytes (the runner answers
 * file_too_large past it, 413), its memory reserved whole first (503
 * memory_busy when the budget has no room; the session untouched); the
 * decoded file stays reserved until it is sent (resp->held). */
static void get_file(struct sessions *s, struct session *x, const char *name, size_t name_len,
                     struct sg_http_response *resp)
{
    if (!sg_membudget_reserve(s->c.budget, SESSIONS_DOWNLOAD_MEMORY)) {
        sess_give_back(s, x, NULL);
        if (s->c.metrics)
            metrics_rejected(s->c.metrics, "memory_busy");
        sg_http_error(resp, 503, "memory_busy",
                      "the executor's memory budget has no room for a download now; retry shortly");
        sg_http_add_header(resp, "Retry-After", "1");
        return;
    }
    json_t *ans = file_op(s, x, json_pack("{s:s,s:s%}", "op", "get_file", "name", name, name_len),
                          SESSIONS_DOWNLOAD_LINE_MAX, resp);
    json_t *c = json_object_get(ans, "content_b64");
    unsigned char *data = NULL;
    size_t n = 0;
    if (!ans) {
        /* file_op answered */
    } else if (!json_is_string(c) || sg_b64_decode(json_string_value(c), json_string_length(c),
                                                   SESSIONS_FILE_MAX, &data, &n, NULL) < 0) {
        sg_http_error(resp, 502, "bad_runner_answer", "the runner's file is not valid");
    } else {
        free(resp->body);
        resp->status = 200;
        resp->body = (char *)data;
        resp->body_len = n;
        resp->content_type = "application/octet-stream";
        if (n == 0) { /* body_len 0 means strlen: an empty file is an empty string */
            resp->body[0] = '\0';
        }
        resp->held += n; /* the rest is freed here */
    }
    json_decref(ans);
    sg_membudget_release(s->c.budget, SESSIONS_DOWNLOAD_MEMORY - (ans && data ? n : 0));
}

static void list_files(struct sessions *s, struct session *x, struct sg_http_response *resp)
{
    json_t *ans = file_op(s, x, json_pack("{s:s}", "op", "list_files"), OP_ANSWER_MAX, resp);
    if (!ans)
        return;
    json_t *f = json_object_get(ans, "files");
    if (!json_is_array(f))
        sg_http_error(resp, 502, "bad_runner_answer", "the runner's listing is not valid");
    else
        sess_answer(resp, 200, json_pack("{s:O}", "files", f));
    json_decref(ans);
}

static void handle_files(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                         const char *rest, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    const char *m = req->method;
    bool list = *rest == '\0';
    const char *name = list ? NULL : rest + 1;
    size_t name_len = name ? strlen(name) : 0;
    if (!list && (*rest != '/' || !name_ok(name, name_len, resp)))
        return;
    if (list ? strcmp(m, "GET") != 0 : strcmp(m, "GET") != 0 && strcmp(m, "PUT") != 0)
        return sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed here", m);
    struct session *x = NULL;
    if (sess_take(s, id, id_len, tenant, resp, &x) < 0)
        return;
    if (list)
        list_files(s, x, resp);
    else if (strcmp(m, "PUT") == 0)
        put_file(s, x, name, name_len, req, resp);
    else
        get_file(s, x, name, name_len, resp);
}

/* ------------------------------------------------------ info and delete */

static void handle_info(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                        const struct sg_http_request *req, struct sg_http_response *resp)
{
    const char *h = sg_http_query(req, "history");
    pthread_mutex_lock(&s->lock);
    int i = sess_find_locked(s, id, id_len, tenant);
    json_t *j = i >= 0 ? sess_info_json(s->slot[i], h && strcmp(h, "1") == 0) : NULL;
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return sess_not_found(resp);
    sess_answer(resp, 200, j);
}

static void handle_delete(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                          struct sg_http_response *resp)
{
    pthread_mutex_lock(&s->lock);
    int i = sess_find_locked(s, id, id_len, tenant);
    struct session *gone = i >= 0 ? sess_end_locked(s, (unsigned)i, "deleted") : NULL;
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        return sess_not_found(resp);
    sess_end_now(s, gone);
    resp->status = 204;
    free(resp->body);
    resp->body = strdup("");
}

static void handle_list(struct sessions *s, const char *tenant, struct sg_http_response *resp)
{
    json_t *a = json_array();
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; a && i < s->n_slots; i++) {
        const struct session *x = s->slot[i];
        if (x && !x->doomed && strcmp(x->tenant, tenant) == 0)
            json_array_append_new(a, sess_info_json(x, false));
    }
    unsigned open = sess_count_open_locked(s, tenant);
    pthread_mutex_unlock(&s->lock);
    sess_answer(resp, 200,
                json_pack("{s:o,s:i,s:s}", "sessions", a, "open", open, "executor_boot_id",
                          sessions_boot_id(s)));
}

/* ---------------------------------------------------------- dispatching */

static void dispatch_one(struct sessions *s, const char *tenant, const char *id, size_t id_len,
                         const char *rest, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    const char *m = req->method;
    if (*rest == '\0') {
        if (strcmp(m, "GET") == 0)
            return handle_info(s, tenant, id, id_len, req, resp);
        if (strcmp(m, "DELETE") == 0)
            return handle_delete(s, tenant, id, id_len, resp);
    } else if (strcmp(rest, "/exec") == 0) {
        if (strcmp(m, "POST") == 0)
            return handle_exec(s, tenant, id, id_len, req, resp);
    } else if (strcmp(rest, "/cancel") == 0) {
        if (strcmp(m, "POST") == 0)
            return handle_cancel(s, tenant, id, id_len, resp);
    } else if (strncmp(rest, "/files", 6) == 0 && (rest[6] == '\0' || rest[6] == '/')) {
        return handle_files(s, tenant, id, id_len, rest + 6, req, resp);
    } else {
        return sg_http_error(resp, 404, "not_found", "no such endpoint");
    }
    sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed here", m);
}

bool sessions_handle(struct sessions *s, const struct sg_http_request *req,
                     struct sg_http_response *resp)
{
    const char *u = req->url;
    size_t pl = sizeof(PREFIX) - 1;
    if (strncmp(u, PREFIX, pl) != 0 || (u[pl] != '\0' && u[pl] != '/'))
        return false;
    const char *tenant = sg_http_header(req, SESSIONS_TENANT_HEADER);
    if (!sess_tenant_ok(tenant) || strlen(tenant) > SESSIONS_TENANT_MAX) {
        sg_http_error(resp, 400, "bad_request",
                      SESSIONS_TENANT_HEADER " must be 1-%d bytes of [A-Za-z0-9._-]",
                      SESSIONS_TENANT_MAX);
        return true;
    }
    if (u[pl] == '\0') {
        if (strcmp(req->method, "POST") == 0)
            handle_create(s, tenant, req, resp);
        else if (strcmp(req->method, "GET") == 0)
            handle_list(s, tenant, resp);
        else
            sg_http_error(resp, 405, "method_not_allowed", "%s is not allowed here", req->method);
        return true;
    }
    const char *id = u + pl + 1;
    size_t id_len = strcspn(id, "/");
    dispatch_one(s, tenant, id, id_len, id + id_len, req, resp);
    return true;
}
