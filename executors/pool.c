#include "pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "exec_config.h"
#include "log.h"
#include "sg_cond.h"

struct teardown {
    struct teardown *next;
    struct sandbox sb;
    int attempts;
};

struct pool {
    struct docker_client *dc;
    char *body;
    char instance[64];
    char label[128]; /* EXEC_LABEL_POOL value; empty: all of instance */
    char name[32];
    char network[128]; /* sandbox.ip is looked up on it; empty: offline pool */
    int (*prepare)(const void *ctx, struct docker_client *dc, const char *id, struct sg_error *err);
    const void *prepare_ctx;
    struct metrics *metrics;
    unsigned mem_mb; /* last measurement of one warm sandbox */
    double mem_at, create_ms;
    unsigned long creates;
    bool wait_ready, warned_ready;
    unsigned target, parallel;

    pthread_mutex_t mu;
    pthread_cond_t avail;   /* an idle sandbox appeared, or dockerd state changed */
    pthread_cond_t work;    /* refill threads: something to do */
    pthread_cond_t tq_cond; /* teardown threads */
    struct sandbox idle[EXEC_POOL_SIZE_MAX];
    unsigned n_idle, busy, creating;
    char (*busy_ids)[DOCKER_ID_LEN + 1]; /* EXEC_MAX_JOBS_MAX entries */
    unsigned long launches;              /* launches begun, for the sweep's snapshot */
    bool docker_up, launch_ok, stopping, tq_stopping, need_sweep;
    unsigned fail_streak;
    double backoff_until;
    char last_error[256];
    struct teardown *tq_head, *tq_tail;
    unsigned tq_len, tq_active; /* queued, and being removed right now */

    pthread_t refill[EXEC_CREATE_PARALLEL_MAX];
    pthread_t teardown[POOL_TEARDOWN_THREADS];
    unsigned n_refill, n_teardown;
    bool shut;
};

/* The pool's conditions wait on the monotonic clock (init_sync), in the
 * milliseconds of attach_now_ms(). */
static void abs_deadline(double mono_ms, struct timespec *ts)
{
    sg_cond_deadline((uint64_t)(mono_ms * 1e6), ts);
}

/* Locked. */
static void enqueue_teardown(struct pool *p, const struct sandbox *sb)
{
    struct teardown *t = calloc(1, sizeof(*t));
    if (!t) {
        /* Out of memory: close the stream now; the container is reaped at
         * the next sweep or start (it carries our label). */
        if (sb->fd >= 0)
            close(sb->fd);
        return;
    }
    t->sb = *sb;
    if (p->tq_tail)
        p->tq_tail->next = t;
    else
        p->tq_head = t;
    p->tq_tail = t;
    p->tq_len++;
    pthread_cond_signal(&p->tq_cond);
}

static struct teardown *dequeue_teardown(struct pool *p)
{
    struct teardown *t = p->tq_head;
    if (t) {
        p->tq_head = t->next;
        if (!p->tq_head)
            p->tq_tail = NULL;
        p->tq_len--;
        t->next = NULL;
    }
    return t;
}

static void *teardown_main(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct teardown *t = dequeue_teardown(p);
        if (!t) {
            if (p->tq_stopping)
                break;
            pthread_cond_wait(&p->tq_cond, &p->mu);
            continue;
        }
        p->tq_active++;
        pthread_mutex_unlock(&p->mu);
        struct sg_error e = {0};
        int r = sandbox_destroy(p->dc, &t->sb, &e);
        pthread_mutex_lock(&p->mu);
        p->tq_active--;
        if (r < 0 && ++t->attempts < POOL_TEARDOWN_ATTEMPTS && !p->tq_stopping) {
            sg_log(SG_LOG_WARN, "teardown_retry", "container=%.12s error=\"%s\"", t->sb.id, e.msg);
            struct timespec ts;
            abs_deadline(attach_now_ms() + 500.0 * t->attempts, &ts);
            pthread_cond_timedwait(&p->tq_cond, &p->mu, &ts);
            enqueue_teardown(p, &t->sb);
        } else if (r < 0) {
            p->need_sweep = true; /* the next sweep (or start) removes it */
            sg_log(SG_LOG_WARN, "teardown_failed", "container=%.12s error=\"%s\"", t->sb.id, e.msg);
        }
        free(t);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Locked. Mark dockerd state and wake anyone who should re-check it. */
static void set_docker_state(struct pool *p, bool up, bool launch_ok, const char *msg)
{
    if (up && !p->docker_up) {
        sg_log(SG_LOG_INFO, "docker_reachable", "instance=%s", p->instance);
        p->need_sweep = true;
    } else if (!up && p->docker_up) {
        sg_log(SG_LOG_ERROR, "docker_unreachable", "instance=%s error=\"%s\"", p->instance,
               msg ? msg : "");
    }
    p->docker_up = up;
    p->launch_ok = launch_ok;
    if (msg)
        snprintf(p->last_error, sizeof(p->last_error), "%s", msg);
    pthread_cond_broadcast(&p->avail);
}

/* Unlocked: wait until the runner reports its pre-import done (any byte on
 * the stream: the ready line, or the EOF of a runner that died, which the
 * stale check then catches). Returns false after POOL_READY_TIMEOUT_MS. */
static bool wait_ready(struct pool *p, const struct sandbox *sb)
{
    double deadline = attach_now_ms() + POOL_READY_TIMEOUT_MS;
    while (attach_now_ms() < deadline) {
        struct pollfd pfd = {.fd = sb->fd, .events = POLLIN};
        int n = poll(&pfd, 1, POOL_READY_SLICE_MS);
        if (n > 0)
            return true;
        pthread_mutex_lock(&p->mu);
        bool stop = p->stopping;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return false;
    }
    return false;
}

/* Unlocked: one launch, then its bookkeeping under the lock. */
static void launch_one(struct pool *p)
{
    struct sandbox sb;
    struct sg_error e = {0};
    double t0 = attach_now_ms();
    int r = sandbox_launch(p->dc, p->body, &sb, &e);
    if (r == 0 &&
        ((p->network[0] && (r = docker_container_ip(p->dc, sb.id, p->network, sb.ip, &e)) < 0) ||
         (p->prepare && (r = p->prepare(p->prepare_ctx, p->dc, sb.id, &e)) < 0)))
        sandbox_destroy(p->dc, &sb, NULL);
    double ms = attach_now_ms() - t0;
    if (p->metrics)
        metrics_create(p->metrics, ms, r == 0);
    double t_up = attach_now_ms();
    /* A restored runner said it was ready before its checkpoint: it is warm
     * once the restore returned, and says nothing until its job. */
    bool waits = r == 0 && p->wait_ready && !sb.restored;
    bool ready = waits ? wait_ready(p, &sb) : true;
    double phases[METRICS_PHASES] = {sb.create_ms, sb.attach_ms, sb.start_ms,
                                     attach_now_ms() - t_up};
    if (r == 0) {
        ms = attach_now_ms() - t0; /* the refill time: until it is warm */
        if (p->metrics && ready && waits)
            metrics_create_phases(p->metrics, phases);
    }
    pthread_mutex_lock(&p->mu);
    if (!ready && !p->warned_ready && !p->stopping) {
        p->warned_ready = true; /* an image whose runner sends no ready line */
        sg_log(SG_LOG_WARN, "sandbox_not_ready",
               "flavour=%s container=%.12s waited_ms=%d "
               "msg=\"no ready line from the runner; serving it anyway\"",
               p->name, sb.id, POOL_READY_TIMEOUT_MS);
    }
    p->creating--;
    if (r == 0) {
        p->fail_streak = 0;
        p->create_ms = p->creates ? 0.8 * p->create_ms + 0.2 * ms : ms;
        p->creates++;
        set_docker_state(p, true, true, NULL);
        if (p->stopping || p->n_idle >= p->target) /* the target may have been lowered */
            enqueue_teardown(p, &sb);
        else
            p->idle[p->n_idle++] = sb;
        sg_log(SG_LOG_DEBUG, "sandbox_ready",
               "container=%.12s flavour=%s launch_ms=%.1f create_ms=%.1f attach_ms=%.1f "
               "start_ms=%.1f ready_ms=%.1f",
               sb.id, p->name, ms, phases[0], phases[1], phases[2], phases[3]);
    } else {
        unsigned shift = p->fail_streak < 5 ? p->fail_streak : 5;
        double backoff = (double)POOL_BACKOFF_MIN_MS * (double)(1u << shift);
        p->fail_streak++;
        p->backoff_until =
            attach_now_ms() + (backoff < POOL_BACKOFF_MAX_MS ? backoff : POOL_BACKOFF_MAX_MS);
        bool down = r == -EHOSTDOWN || r == -ETIMEDOUT;
        set_docker_state(p, !down, false, e.msg);
        if (p->fail_streak == 1 || p->fail_streak % 20 == 0)
            sg_log(SG_LOG_ERROR, "sandbox_launch_failed", "streak=%u error=\"%s\"", p->fail_streak,
                   e.msg);
    }
    pthread_mutex_unlock(&p->mu);
}

/* Locked: drop idle sandboxes whose runner is gone. */
static void drop_stale(struct pool *p)
{
    unsigned k = 0;
    for (unsigned i = 0; i < p->n_idle; i++) {
        if (sandbox_stale(&p->idle[i])) {
            sg_log(SG_LOG_WARN, "sandbox_stale", "container=%.12s", p->idle[i].id);
            enqueue_teardown(p, &p->idle[i]);
        } else {
            p->idle[k++] = p->idle[i];
        }
    }
    p->n_idle = k;
}

/* Locked: whether id is one we hold (idle, in use or queued for teardown). */
static bool known(struct pool *p, const char *id)
{
    for (unsigned i = 0; i < p->n_idle; i++)
        if (strcmp(p->idle[i].id, id) == 0)
            return true;
    for (unsigned i = 0; i < p->busy; i++)
        if (strcmp(p->busy_ids[i], id) == 0)
            return true;
    for (struct teardown *t = p->tq_head; t; t = t->next)
        if (strcmp(t->sb.id, id) == 0)
            return true;
    return false;
}

/* Unlocked: remove our containers that nobody holds (left by an outage).
 * Skipped while a launch may be between create and the idle list. */
static void sweep(struct pool *p)
{
    char(*ids)[DOCKER_ID_LEN + 1] = NULL;
    size_t n = 0, k = 0;
    struct sg_error e = {0};
    pthread_mutex_lock(&p->mu);
    unsigned long before = p->launches;
    bool quiet = p->creating == 0;
    pthread_mutex_unlock(&p->mu);
    const char *key = p->label[0] ? EXEC_LABEL_POOL : EXEC_LABEL_KEY;
    const char *val = p->label[0] ? p->label : p->instance;
    int r = quiet ? docker_list_by_label(p->dc, key, val, &ids, &n, &e) : -1;
    pthread_mutex_lock(&p->mu);
    if (r < 0 || p->launches != before || p->creating) {
        p->need_sweep = true;
        n = 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!known(p, ids[i]))
            memcpy(ids[k++], ids[i], sizeof(ids[0]));
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < k; i++)
        docker_remove(p->dc, ids[i], SANDBOX_REMOVE_TIMEOUT_MS, NULL);
    if (k)
        sg_log(SG_LOG_INFO, "swept_containers", "instance=%s count=%zu", p->instance, k);
    free(ids);
}

/* Unlocked: read the memory of one settled idle sandbox, now and then. */
static void measure_memory(struct pool *p)
{
    char id[DOCKER_ID_LEN + 1] = "";
    double now = attach_now_ms();
    pthread_mutex_lock(&p->mu);
    if (!p->mem_at || now - p->mem_at >= POOL_MEM_PERIOD_MS)
        for (unsigned i = 0; i < p->n_idle && !id[0]; i++)
            if (now - p->idle[i].ready_ms >= POOL_SETTLE_MS)
                memcpy(id, p->idle[i].id, sizeof(id));
    pthread_mutex_unlock(&p->mu);
    unsigned long long bytes = 0;
    if (!id[0] || docker_memory_usage(p->dc, id, &bytes, NULL) < 0)
        return; /* gone meanwhile (taken by a job): try again at the next round */
    pthread_mutex_lock(&p->mu);
    p->mem_mb = (unsigned)((bytes + (1u << 20) - 1) >> 20);
    p->mem_at = now;
    pthread_mutex_unlock(&p->mu);
    sg_log(SG_LOG_DEBUG, "pool_memory", "flavour=%s container=%.12s memory_mb=%u", p->name, id,
           p->mem_mb);
}

/* Unlocked housekeeping by the first refill thread: a ping tells whether
 * dockerd is (still) there even while the pool is full and quiet. */
static void housekeep(struct pool *p, bool do_sweep)
{
    struct sg_error e = {0};
    int r = docker_ping(p->dc, 2000, &e);
    pthread_mutex_lock(&p->mu);
    if (r == 0 && !p->docker_up)
        set_docker_state(p, true, p->launch_ok, NULL);
    else if (r < 0 && p->docker_up)
        set_docker_state(p, false, p->launch_ok, e.msg);
    pthread_mutex_unlock(&p->mu);
    if (r == 0 && do_sweep)
        sweep(p);
    if (r == 0)
        measure_memory(p);
}

/* Locked: whether a launch should start now. While idle sandboxes remain,
 * a running job keeps its refill until it ends: a launch costs more CPU than
 * a short job, and on a small machine it would slow the job down. With no
 * idle sandbox left, every slot refills at once. */
static bool refill_wanted(const struct pool *p)
{
    unsigned have = p->n_idle + p->creating + (p->n_idle > 0 ? p->busy : 0);
    return have < p->target;
}

static void *refill_main(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu); /* pool_new holds it until refill[] is filled */
    bool keeper = pthread_equal(pthread_self(), p->refill[0]);
    while (!p->stopping) {
        double now = attach_now_ms();
        if (refill_wanted(p) && now >= p->backoff_until) {
            p->creating++;
            p->launches++;
            pthread_mutex_unlock(&p->mu);
            launch_one(p);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        double until = now + POOL_HOUSEKEEP_MS;
        if (p->backoff_until > now && p->backoff_until < until)
            until = p->backoff_until;
        struct timespec ts;
        abs_deadline(until, &ts);
        int w = pthread_cond_timedwait(&p->work, &p->mu, &ts);
        if (w == ETIMEDOUT && keeper && !p->stopping) {
            drop_stale(p);
            bool do_sweep = p->need_sweep && p->docker_up;
            if (do_sweep)
                p->need_sweep = false;
            pthread_mutex_unlock(&p->mu);
            housekeep(p, do_sweep);
            pthread_mutex_lock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int init_sync(struct pool *p)
{
    int r = pthread_mutex_init(&p->mu, NULL) || sg_cond_init_mono(&p->avail) ||
            sg_cond_init_mono(&p->work) || sg_cond_init_mono(&p->tq_cond);
    return r ? -ENOMEM : 0;
}

int pool_new(const struct pool_config *cfg, struct pool **ret, struct sg_error *err)
{
    struct pool *p = calloc(1, sizeof(*p));
    if (!p || !(p->body = strdup(cfg->create_body)) ||
        !(p->busy_ids = calloc(EXEC_MAX_JOBS_MAX, sizeof(p->busy_ids[0]))) || init_sync(p) < 0) {
        if (p) {
            free(p->body);
            free(p->busy_ids);
        }
        free(p);
        return sg_error_set(err, -ENOMEM, "out of memory");
    }
    p->dc = cfg->dc;
    snprintf(p->instance, sizeof(p->instance), "%s", cfg->instance);
    snprintf(p->label, sizeof(p->label), "%s", cfg->label ? cfg->label : "");
    snprintf(p->name, sizeof(p->name), "%s", cfg->name ? cfg->name : "plain");
    p->metrics = cfg->metrics;
    p->wait_ready = cfg->wait_ready;
    snprintf(p->network, sizeof(p->network), "%s", cfg->network ? cfg->network : "");
    p->prepare = cfg->prepare;
    p->prepare_ctx = cfg->prepare_ctx;
    p->target = cfg->target < EXEC_POOL_SIZE_MAX ? cfg->target : EXEC_POOL_SIZE_MAX;
    p->parallel = cfg->parallel ? cfg->parallel : 1;
    if (p->parallel > EXEC_CREATE_PARALLEL_MAX)
        p->parallel = EXEC_CREATE_PARALLEL_MAX;
    p->docker_up = true;
    p->launch_ok = true;
    pthread_mutex_lock(&p->mu); /* refill[0] must be set before threads compare */
    for (unsigned i = 0; i < POOL_TEARDOWN_THREADS; i++)
        if (pthread_create(&p->teardown[i], NULL, teardown_main, p) == 0)
            p->n_teardown++;
    for (unsigned i = 0; i < p->parallel; i++)
        if (pthread_create(&p->refill[i], NULL, refill_main, p) == 0)
            p->n_refill++;
    pthread_mutex_unlock(&p->mu);
    if (p->n_refill == 0 || p->n_teardown == 0) {
        pool_free(p);
        return sg_error_set(err, -EAGAIN, "cannot start pool threads");
    }
    *ret = p;
    return 0;
}

/* Locked: can an idle sandbox appear while a job waits? Sandboxes are single
 * use, so only a launch makes one: one under way, or one the refill thread
 * is about to start. Not when the pool keeps none (its target is 0: the
 * memory budget) or when launches are failing (the next try waits out its
 * backoff and most likely fails too): then waiting only delays the 503. */
static bool may_arrive(const struct pool *p)
{
    if (p->creating > 0)
        return true;
    return p->target > 0 && p->fail_streak == 0;
}

static int no_arrival_error(const struct pool *p, struct sg_error *err)
{
    if (p->target == 0)
        return sg_error_set(err, -EBUSY,
                            "pool_busy: flavour %s keeps no warm sandbox now (memory budget)",
                            p->name[0] ? p->name : "default");
    return sg_error_set(err, -EBUSY,
                        "pool_busy: no sandbox idle or being created; the last launch failed: %s",
                        p->last_error);
}

bool pool_may_arrive(struct pool *p)
{
    pthread_mutex_lock(&p->mu);
    bool r = p->n_idle > 0 || may_arrive(p);
    pthread_mutex_unlock(&p->mu);
    return r;
}

int pool_acquire(struct pool *p, unsigned wait_ms, struct sandbox *ret, struct sg_error *err)
{
    double deadline = attach_now_ms() + wait_ms;
    struct timespec ts;
    abs_deadline(deadline, &ts);
    int r = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->stopping) {
            r = sg_error_set(err, -ESHUTDOWN, "executor is shutting down");
            break;
        }
        drop_stale(p);
        if (p->n_idle > 0) {
            *ret = p->idle[0]; /* oldest first: its runner is surely warm */
            memmove(&p->idle[0], &p->idle[1], (p->n_idle - 1) * sizeof(p->idle[0]));
            p->n_idle--;
            if (p->busy < EXEC_MAX_JOBS_MAX)
                memcpy(p->busy_ids[p->busy++], ret->id, sizeof(ret->id));
            pthread_cond_signal(&p->work);
            break;
        }
        if (!p->docker_up) {
            r = sg_error_set(err, -EHOSTDOWN, "docker_unreachable: %s", p->last_error);
            break;
        }
        if (!may_arrive(p)) {
            r = no_arrival_error(p, err);
            break;
        }
        if (attach_now_ms() >= deadline ||
            pthread_cond_timedwait(&p->avail, &p->mu, &ts) == ETIMEDOUT) {
            if (p->n_idle > 0)
                continue;
            r = sg_error_set(
                err, -EBUSY, "pool_busy: no sandbox became free within %u ms%s%s", wait_ms,
                p->launch_ok ? "" : "; last launch failed: ", p->launch_ok ? "" : p->last_error);
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return r;
}

void pool_release(struct pool *p, struct sandbox *sb)
{
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < p->busy; i++) {
        if (strcmp(p->busy_ids[i], sb->id) == 0) {
            memcpy(p->busy_ids[i], p->busy_ids[--p->busy], sizeof(p->busy_ids[0]));
            break;
        }
    }
    enqueue_teardown(p, sb);
    pthread_cond_signal(&p->work); /* its deferred refill may start now */
    pthread_mutex_unlock(&p->mu);
    sb->fd = -1;
}

void pool_get_stats(struct pool *p, struct pool_stats *ret)
{
    pthread_mutex_lock(&p->mu);
    ret->target = p->target;
    ret->idle = p->n_idle;
    ret->busy = p->busy;
    ret->creating = p->creating;
    ret->tearing_down = p->tq_len + p->tq_active;
    ret->docker_up = p->docker_up;
    ret->launch_ok = p->launch_ok;
    ret->mem_mb = p->mem_mb;
    ret->create_ms = p->create_ms;
    ret->creates = p->creates;
    snprintf(ret->last_error, sizeof(ret->last_error), "%s", p->last_error);
    pthread_mutex_unlock(&p->mu);
}

void pool_set_target(struct pool *p, unsigned target)
{
    pthread_mutex_lock(&p->mu);
    p->target = target < EXEC_POOL_SIZE_MAX ? target : EXEC_POOL_SIZE_MAX;
    while (p->n_idle > p->target) /* the newest go: the oldest are surely warm */
        enqueue_teardown(p, &p->idle[--p->n_idle]);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void pool_shutdown(struct pool *p)
{
    if (!p || p->shut)
        return;
    p->shut = true;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->avail);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_refill; i++)
        pthread_join(p->refill[i], NULL);
    pthread_mutex_lock(&p->mu);
    for (unsigned i = 0; i < p->n_idle; i++)
        enqueue_teardown(p, &p->idle[i]);
    p->n_idle = 0;
    p->tq_stopping = true; /* drain what is queued, no more retries */
    pthread_cond_broadcast(&p->tq_cond);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n_teardown; i++)
        pthread_join(p->teardown[i], NULL);
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    pool_shutdown(p);
    struct teardown *t;
    while ((t = dequeue_teardown(p))) {
        if (t->sb.fd >= 0)
            close(t->sb.fd);
        free(t);
    }
    pthread_cond_destroy(&p->avail);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->tq_cond);
    pthread_mutex_destroy(&p->mu);
    free(p->body);
    free(p->busy_ids);
    free(p);
}

int pool_adopt(struct pool *p, const struct sandbox *sb)
{
    pthread_mutex_lock(&p->mu);
    int r = -ENOSPC;
    if (p->busy < EXEC_MAX_JOBS_MAX) {
        memcpy(p->busy_ids[p->busy++], sb->id, sizeof(sb->id));
        r = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return r;
}

static bool kept(const char *id, const char (*keep)[DOCKER_ID_LEN + 1], size_t n_keep)
{
    for (size_t i = 0; i < n_keep; i++)
        if (strcmp(keep[i], id) == 0)
            return true;
    return false;
}

int pool_reap(struct docker_client *dc, const char *instance, const char (*keep)[DOCKER_ID_LEN + 1],
              size_t n_keep, unsigned *ret_n, struct sg_error *err)
{
    char(*ids)[DOCKER_ID_LEN + 1] = NULL;
    size_t n = 0;
    *ret_n = 0;
    int r = docker_list_by_label(dc, EXEC_LABEL_KEY, instance, &ids, &n, err);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        struct sg_error e = {0};
        if (kept(ids[i], keep, n_keep))
            continue;
        if (docker_remove(dc, ids[i], SANDBOX_REMOVE_TIMEOUT_MS, &e) == 0)
            (*ret_n)++;
        else
            r = sg_error_set(err, e.code, "%s", e.msg);
    }
    free(ids);
    return r;
}
