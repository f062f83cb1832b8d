#include "sessions.h"
#include "sessions_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "attach.h"
#include "b64.h"
#include "buf.h"
#include "exec_api.h"
#include "job.h"
#include "log.h"
#include "sg_cond.h"
#include "sg_file_name.h"
#include "sg_random.h"
#include "sg_time.h"
#include "sessions_store.h"

double sess_now_ms(void)
{
    return attach_now_ms();
}

void sess_free(struct session *x)
{
    if (!x)
        return;
    sg_buf_free(&x->history);
    pthread_mutex_destroy(&x->wlock);
    free(x);
}

/* Give the sandbox back for teardown (outside the table lock). */
static void release_sandbox(struct sessions *s, struct session *x)
{
    if (!x->has_sb)
        return;
    x->has_sb = false;
    sess_release_sandbox(s, x->flavour, &x->sb);
}

void sess_release_sandbox(struct sessions *s, unsigned flavour, struct sandbox *sb)
{
    pool_set_hold(s->c.pools, flavour, false);
    pool_set_release(s->c.pools, flavour, sb);
}

/* Under s->lock: end x for why. Returns x when the caller must release and
 * free it (after unlocking); NULL when a busy thread will. */
struct session *sess_end_locked(struct sessions *s, unsigned i, const char *why)
{
    struct session *x = s->slot[i];
    sg_log(SG_LOG_INFO, "session_end", "session_id=%s reason=%s cells=%lu", x->id, why, x->cells);
    if (x->busy) {
        x->doomed = true;
        shutdown(x->sb.fd, SHUT_RDWR); /* wakes the busy thread's read */
        return NULL;
    }
    s->slot[i] = NULL;
    return x;
}

void sess_persist(struct sessions *s, const struct session *x, bool busy)
{
    if (s->c.cfg->session_dir[0] && x->has_sb)
        sstore_save(s->c.cfg->session_dir, x, pool_set_flavour_name(s->c.pools, x->flavour), busy);
}

void sess_unpersist(struct sessions *s, const struct session *x)
{
    if (s->c.cfg->session_dir[0])
        sstore_remove(s->c.cfg->session_dir, x->id);
}

void sess_end_now(struct sessions *s, struct session *x)
{
    if (!x)
        return;
    sess_unpersist(s, x);
    release_sandbox(s, x);
    sess_free(x);
}

static bool expired(const struct session *x, double now)
{
    if (now - x->used_ms > (double)x->idle_s * 1000.0)
        return true;
    return !x->lost && now - x->created_ms > (double)x->life_s * 1000.0;
}

static void *reaper_main(void *arg)
{
    struct sessions *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec ts;
        sg_cond_deadline(sg_time_mono_ns() + (uint64_t)SESSIONS_REAP_MS * 1000000u, &ts);
        pthread_cond_timedwait(&s->wake, &s->lock, &ts);
        double now = sess_now_ms();
        for (unsigned i = 0; i < s->n_slots && !s->stop; i++) {
            struct session *x = s->slot[i];
            if (!x || x->doomed || !expired(x, now))
                continue;
            struct session *gone = sess_end_locked(s, i, x->lost ? "lost_expired" : "expired");
            pthread_mutex_unlock(&s->lock);
            sess_end_now(s, gone);
            pthread_mutex_lock(&s->lock);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int sessions_new(const struct sessions_config *c, struct sessions **ret, struct sg_error *err)
{
    struct sessions *s = calloc(1, sizeof(*s));
    if (!s)
        return sg_error_set(err, -ENOMEM, "out of memory");
    s->c = *c;
    /* Tombstones of lost sessions share the table: room for as many again. */
    s->n_slots = c->max_sessions * 2 + 1;
    s->slot = calloc(s->n_slots, sizeof(struct session *));
    bool kept = false;
    int r = !s->slot                 ? sg_error_set(err, -ENOMEM, "cannot set up the session table")
            : c->cfg->session_dir[0] ? sstore_boot_id(c->cfg->session_dir, s->boot, &kept, err)
            : sg_random_hex(s->boot, SESSIONS_BOOT_HEX / 2) < 0
                ? sg_error_set(err, -EIO, "no random bytes for the boot id")
                : 0;
    if (r < 0) {
        free(s->slot);
        free(s);
        return r;
    }
    sg_log(SG_LOG_INFO, "sessions_boot", "boot_id=%s kept=%d", s->boot, kept);
    pthread_mutex_init(&s->lock, NULL);
    sg_cond_init_mono(&s->wake);
    if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
        free(s->slot);
        free(s);
        return sg_error_set(err, -EAGAIN, "cannot start the session reaper");
    }
    *ret = s;
    return 0;
}

void sessions_free(struct sessions *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->reaper, NULL);
    for (unsigned i = 0; i < s->n_slots; i++) {
        if (s->slot[i])
            sess_end_now(s, s->slot[i]); /* no handler runs any more */
    }
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s->slot);
    free(s);
}

const char *sessions_boot_id(const struct sessions *s)
{
    return s->boot;
}

unsigned sess_count_open_locked(const struct sessions *s, const char *tenant)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->n_slots; i++)
        if (s->slot[i] && !s->slot[i]->lost && !s->slot[i]->doomed &&
            (!tenant || strcmp(s->slot[i]->tenant, tenant) == 0))
            n++;
    return n;
}

unsigned sessions_count(struct sessions *s)
{
    pthread_mutex_lock(&s->lock);
    unsigned n = sess_count_open_locked(s, NULL);
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ------------------------------------------------------------------ JSON */

static json_t *time_json(time_t t)
{
    return json_integer((json_int_t)t);
}

json_t *sess_info_json(const struct session *x, bool history)
{
    time_t expires = x->used_wall + x->idle_s;
    if (x->created_wall + (time_t)x->life_s < expires)
        expires = x->created_wall + (time_t)x->life_s;
    const char *state = x->lost ? "lost" : x->busy ? "busy" : "idle";
    json_t *j =
        json_pack("{s:s,s:s,s:o,s:o,s:o,s:I,s:I,s:I,s:I}", "session_id", x->id, "state", state,
                  "created_at", time_json(x->created_wall), "last_used_at", time_json(x->used_wall),
                  "expires_at", time_json(expires), "cells_run", (json_int_t)x->cells,
                  "idle_timeout_s", (json_int_t)x->idle_s, "max_lifetime_s", (json_int_t)x->life_s,
                  "history_bytes", (json_int_t)x->history.len);
    if (j)
        json_object_set_new(j, "memory_used_kb",
                            x->memory_kb >= 0 ? json_integer(x->memory_kb) : json_null());
    if (j && x->has_sb) /* internal: operators and tests find the container by it */
        json_object_set_new(j, "container", json_stringn(x->sb.id, 12));
    if (j && x->label[0])
        json_object_set_new(j, "label", json_string(x->label));
    if (j && x->lost)
        json_object_set_new(j, "lost_reason", json_string(x->lost_reason));
    if (j && history)
        json_object_set_new(j, "history",
                            json_stringn(x->history.data ? x->history.data : "", x->history.len));
    return j;
}

void sess_answer(struct sg_http_response *resp, int status, json_t *j)
{
    resp->status = status;
    resp->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    resp->body_len = 0;
    json_decref(j);
    if (!resp->body)
        sg_http_error(resp, 500, "internal", "out of memory");
}

/* ------------------------------------------------------------ the lookup */

bool sess_tenant_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;
    if (n == 0 || n > SESSIONS_LABEL_MAX)
        return false;
    return strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* Under s->lock: the tenant's session id, or -1. */
int sess_find_locked(const struct sessions *s, const char *id, size_t id_len, const char *tenant)
{
    if (id_len != SESSIONS_ID_LEN)
        return -1;
    for (unsigned i = 0; i < s->n_slots; i++) {
        const struct session *x = s->slot[i];
        if (x && !x->doomed && memcmp(x->id, id, id_len) == 0 && strcmp(x->tenant, tenant) == 0)
            return (int)i;
    }
    return -1;
}

void sess_not_found(struct sg_http_response *resp)
{
    sg_http_error(resp, 404, "session_not_found", "no such session");
}

void sess_lost(struct sg_http_response *resp, const struct session *x)
{
    sg_http_error(resp, 410, "session_lost", "the session's interpreter is gone (%s)",
                  x->lost_reason);
}

/* Take the session for one operation: 0 with *ret set and busy marked, or
 * an answer in resp. */
int sess_take(struct sessions *s, const char *id, size_t id_len, const char *tenant,
              struct sg_http_response *resp, struct session **ret)
{
    pthread_mutex_lock(&s->lock);
    int i = sess_find_locked(s, id, id_len, tenant);
    struct session *x = i >= 0 ? s->slot[i] : NULL;
    int r = -1;
    if (!x)
        sess_not_found(resp);
    else if (x->lost)
        sess_lost(resp, x);
    else if (x->busy)
        sg_http_error(resp, 409, "session_busy", "a cell or file operation is running");
    else {
        x->busy = true;
        *ret = x;
        r = 0;
    }
    pthread_mutex_unlock(&s->lock);
    if (r == 0) /* busy in the record: a restart meanwhile cannot trust the runner's state */
        sess_persist(s, x, true);
    return r;
}

/* The operation on x is over: mark it lost (why != NULL) and end it when it
 * was doomed or lost. */
void sess_give_back(struct sessions *s, struct session *x, const char *why)
{
    double used_ms = sess_now_ms();
    time_t used_wall = time(NULL);
    if (!why) { /* still busy: nobody else writes the record now */
        x->used_wall = used_wall;
        sess_persist(s, x, false);
    }
    pthread_mutex_lock(&s->lock);
    x->busy = false;
    x->cell_nonce[0] = '\0';
    x->used_ms = used_ms;
    x->used_wall = used_wall;
    if (why && !x->lost) {
        x->lost = true;
        snprintf(x->lost_reason, sizeof(x->lost_reason), "%s", why);
        sg_log(SG_LOG_WARN, "session_lost", "session_id=%s reason=\"%s\"", x->id, why);
    }
    struct sandbox sb = x->sb;
    bool release = x->has_sb && (x->lost || x->doomed);
    if (release)
        x->has_sb = false;
    bool gone = x->doomed;
    for (unsigned i = 0; gone && i < s->n_slots; i++)
        if (s->slot[i] == x)
            s->slot[i] = NULL;
    pthread_mutex_unlock(&s->lock);
    if (release || gone)
        sess_unpersist(s, x);
    if (release)
        sess_release_sandbox(s, x->flavour, &sb);
    if (gone)
        sess_free(x);
}

void sess_discard(struct sessions *s, struct session *x)
{
    pthread_mutex_lock(&s->lock);
    x->doomed = true;
    pthread_mutex_unlock(&s->lock);
    sess_give_back(s, x, NULL);
}

/* ------------------------------------------------------- runner exchanges */

/* Write one keyed request line (fields in o, which is consumed) and read its
 * answer into io (job_io_init'ed with the nonce). */
void sess_exchange(struct session *x, json_t *o, const char *nonce, unsigned deadline_ms,
                   struct job_io *io)
{
    json_object_set_new(o, "key", json_string(x->key));
    json_object_set_new(o, "nonce", json_string(nonce));
    char *line = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!line) {
        io->end = JOB_END_IO;
        io->io_errno = ENOMEM;
        return;
    }
    size_t len = strlen(line);
    line[len] = '\n'; /* json_dumps' NUL becomes the line's end */
    pthread_mutex_lock(&x->wlock);
    int r = attach_write_all(x->sb.fd, line, len + 1, (int64_t)sess_now_ms() + deadline_ms);
    pthread_mutex_unlock(&x->wlock);
    free(line);
    if (r < 0) {
        io->end = r == -ETIMEDOUT ? JOB_END_TIMEOUT : JOB_END_IO;
        io->io_errno = -r;
        return;
    }
    job_read_result(x->sb.fd, deadline_ms, io);
}

int sess_new_nonce(char out[JOB_NONCE_LEN + 1])
{
    return sg_random_hex(out, JOB_NONCE_LEN / 2);
}
