/* sessions_recover.c - at start, take back the sessions an earlier life of
 * this executor left running (sessions.h: sessions_recover; the records are
 * sessions_store.h's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "job.h"
#include "log.h"
#include "metrics.h"
#include "sessions_int.h"
#include "sessions_store.h"

#define PROBE_MS 5000u               /* the runner's answer to the probe */
#define PROBE_ANSWER_MAX (1u << 20u) /* its listing of the workspace */
#define RESTARTED "the executor restarted"

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* A session built from its record; its sandbox is not attached yet. */
static struct session *from_record(const struct sstore_record *r, time_t now_wall, double now_ms)
{
    struct session *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    pthread_mutex_init(&x->wlock, NULL);
    sg_buf_init(&x->history, SESSIONS_HISTORY_MAX);
    if (r->history_len && sg_buf_append(&x->history, r->history, r->history_len) < 0) {
        sess_free(x);
        return NULL;
    }
    memcpy(x->id, r->id, sizeof(x->id));
    memcpy(x->tenant, r->tenant, sizeof(x->tenant));
    memcpy(x->key, r->key, sizeof(x->key));
    memcpy(x->label, r->label, sizeof(x->label));
    memcpy(x->sb.id, r->container, sizeof(x->sb.id));
    x->sb.fd = -1;
    x->idle_s = r->idle_s;
    x->life_s = r->life_s;
    x->timeout_ms = r->timeout_ms;
    x->max_output = r->max_output;
    x->cells = r->cells;
    x->memory_kb = r->memory_kb;
    x->created_wall = r->created;
    x->used_wall = r->used;
    /* the monotonic clock restarted with the process: the same ages */
    x->created_ms = now_ms - (double)(now_wall - r->created) * 1000.0;
    x->used_ms = now_ms - (double)(now_wall - r->used) * 1000.0;
    return x;
}

static bool record_expired(const struct sstore_record *r, time_t now)
{
    return now - r->used > (time_t)r->idle_s || now - r->created > (time_t)r->life_s;
}

/* The runner answers a keyed request: its workspace listing, as any file
 * operation would get it. */
static int probe(struct session *x)
{
    char nonce[JOB_NONCE_LEN + 1];
    json_t *o = json_pack("{s:s}", "op", "list_files");
    if (!o || sess_new_nonce(nonce) < 0) {
        json_decref(o);
        return -ENOMEM;
    }
    struct job_io io;
    job_io_init(&io, PROBE_ANSWER_MAX, nonce);
    sess_exchange(x, o, nonce, PROBE_MS, &io);
    const char *outcome =
        io.end == JOB_END_RESULT ? json_string_value(json_object_get(io.result, "outcome")) : NULL;
    int r = outcome && strcmp(outcome, "ok") == 0 &&
                    !json_is_true(json_object_get(io.result, "session_lost"))
                ? 0
                : -EPIPE;
    job_io_free(&io);
    return r;
}

/* The containers labelled as this executor's: a record may only name one
 * of them (never another's container, which must not be touched). */
struct ours {
    char (*ids)[DOCKER_ID_LEN + 1];
    size_t n;
};

static bool is_ours(const struct ours *o, const char *id)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->ids[i], id) == 0)
            return true;
    return false;
}

static const char *lost(const char **ret_code, const char *code, const char *why)
{
    *ret_code = code;
    return why;
}

/* Attach to x's container again and prove its runner answers: NULL, or why
 * not with its metric reason in *ret_code (x->sb.fd is closed on failure). */
static const char *reattach(struct sessions *s, struct session *x, const char **ret_code)
{
    struct docker_state st;
    struct sg_error e = {0};
    if (docker_inspect(s->c.dc, x->sb.id, &st, &e) < 0)
        return lost(ret_code, "sandbox_gone", RESTARTED " and the session's sandbox is gone");
    if (!st.running)
        return lost(ret_code, "sandbox_stopped",
                    RESTARTED " and the session's sandbox had stopped");
    if (attach_open(docker_client_socket(s->c.dc), x->sb.id, SANDBOX_ATTACH_TIMEOUT_MS, &x->sb.fd,
                    &e) < 0)
        return lost(ret_code, "attach_failed",
                    RESTARTED " and could not attach to the session's sandbox again");
    x->sb.ready_ms = sess_now_ms();
    if (probe(x) < 0) {
        close_fd(&x->sb.fd);
        return lost(ret_code, "runner_silent",
                    RESTARTED " and the session's runner did not answer");
    }
    return NULL;
}

/* Under s->lock: a free slot for x, or -1. */
static int put_locked(struct sessions *s, struct session *x)
{
    if (!x->lost && sess_count_open_locked(s, NULL) >= s->c.max_sessions)
        return -1;
    for (unsigned i = 0; i < s->n_slots; i++)
        if (!s->slot[i]) {
            s->slot[i] = x;
            return (int)i;
        }
    return -1;
}

/* x could not be taken back: its container (when ours) is removed, its
 * record too, and a tombstone answers session_lost with why until its idle
 * timeout. */
static void bury(struct sessions *s, struct session *x, const char *why, bool ours)
{
    if (ours)
        docker_remove(s->c.dc, x->sb.id, SANDBOX_REMOVE_TIMEOUT_MS, NULL);
    sstore_remove(s->c.cfg->session_dir, x->id);
    x->lost = true;
    x->used_ms = sess_now_ms(); /* the tombstone's idle timeout starts now */
    x->used_wall = time(NULL);
    snprintf(x->lost_reason, sizeof(x->lost_reason), "%s", why);
    sg_log(SG_LOG_WARN, "session_lost", "session_id=%s reason=\"%s\"", x->id, why);
    pthread_mutex_lock(&s->lock);
    int i = put_locked(s, x);
    pthread_mutex_unlock(&s->lock);
    if (i < 0)
        sess_free(x);
}

/* One record: taken back (1), lost (0, *ret_code the metric reason) or
 * expired (-1). */
static int recover_one(struct sessions *s, const struct sstore_record *r, const struct ours *o,
                       time_t now, const char **ret_code)
{
    bool mine = is_ours(o, r->container);
    struct session *x = from_record(r, now, sess_now_ms());
    if (!x || record_expired(r, now)) {
        sg_log(SG_LOG_INFO, "session_end", "session_id=%s reason=%s", r->id,
               x ? "expired" : "out_of_memory");
        if (mine)
            docker_remove(s->c.dc, r->container, SANDBOX_REMOVE_TIMEOUT_MS, NULL);
        sstore_remove(s->c.cfg->session_dir, r->id);
        int gone = x ? -1 : 0;
        if (!x)
            *ret_code = "out_of_memory";
        sess_free(x);
        return gone;
    }
    /* an id of another boot id can never be routed here again */
    bool routable = strncmp(r->id, sessions_boot_id(s), SESSIONS_BOOT_HEX) == 0;
    *ret_code = !routable ? "other_boot_id"
                : !mine   ? "sandbox_gone"
                : r->busy ? "operation_running"
                          : NULL;
    const char *why = !routable ? RESTARTED " with another boot id"
                      : !mine   ? RESTARTED " and the session's sandbox is gone"
                      : r->busy ? RESTARTED " while a cell or file operation ran in the session"
                                : reattach(s, x, ret_code);
    if (!why && pool_set_adopt(s->c.pools, r->flavour, &x->sb, &x->flavour) < 0) {
        why = RESTARTED " without the session's sandbox flavour";
        *ret_code = "flavour_gone";
    }
    if (!why) {
        x->has_sb = true;
        pthread_mutex_lock(&s->lock);
        int i = put_locked(s, x);
        pthread_mutex_unlock(&s->lock);
        if (i >= 0) {
            sg_log(SG_LOG_INFO, "session_recovered", "session_id=%s container=%.12s cells=%lu",
                   x->id, x->sb.id, x->cells);
            return 1;
        }
        x->has_sb = false;
        sess_release_sandbox(s, x->flavour, &x->sb); /* torn down by its pool */
        why = RESTARTED " with fewer session slots";
        *ret_code = "no_slot";
    }
    close_fd(&x->sb.fd);
    bury(s, x, why, mine);
    return 0;
}

void sessions_recover(struct sessions *s, const struct sstore_record *recs, size_t n,
                      struct sessions_recovery *ret)
{
    memset(ret, 0, sizeof(*ret));
    double t0 = sess_now_ms();
    time_t now = time(NULL);
    struct ours o = {0};
    struct sg_error e = {0};
    if (docker_list_by_label(s->c.dc, EXEC_LABEL_KEY, s->c.cfg->instance, &o.ids, &o.n, &e) < 0)
        sg_log(SG_LOG_WARN, "sessions_recover_list_failed", "error=\"%s\"", e.msg);
    for (size_t i = 0; i < n; i++) {
        const char *code = "other";
        int r = recover_one(s, &recs[i], &o, now, &code);
        if (r > 0)
            ret->recovered++;
        else if (r == 0)
            ret->lost++;
        else
            ret->expired++;
        if (s->c.metrics && r > 0)
            metrics_session_recovered(s->c.metrics);
        else if (s->c.metrics && r == 0)
            metrics_session_lost(s->c.metrics, code);
        else if (s->c.metrics)
            metrics_session_expired(s->c.metrics);
    }
    free(o.ids);
    ret->ms = sess_now_ms() - t0;
    sg_log(SG_LOG_INFO, "sessions_recovered", "recovered=%u lost=%u expired=%u ms=%.1f",
           ret->recovered, ret->lost, ret->expired, ret->ms);
}
