#include "pools.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach.h"
#include "log.h"
#include "sg_cond.h"
#include "sg_time.h"

struct pool_set {
    struct flavour_set fs;
    struct pool *pools[FLAVOUR_MAX];
    unsigned budget_mb;
    bool adaptive;

    pthread_mutex_t mu; /* the counters and the sizing state below */
    pthread_cond_t cond;
    unsigned long long hits[FLAVOUR_MAX], fallbacks[FLAVOUR_MAX], arrivals[FLAVOUR_MAX];
    /* arrivals per second over the last POOLS_WINDOW_S seconds, by ideal flavour */
    unsigned window[FLAVOUR_MAX][POOLS_WINDOW_S];
    unsigned long long window_sec; /* the second window[..][sec % W] counts */
    unsigned want[FLAVOUR_MAX], target[FLAVOUR_MAX];
    unsigned held[FLAVOUR_MAX]; /* sandboxes sessions hold, by flavour (pool_set_hold) */
    bool stopping, shut, sizer_started;
    pthread_t sizer;
};

static unsigned long long now_sec(void)
{
    return (unsigned long long)(attach_now_ms() / 1000.0);
}

/* Locked: move the window to the current second, clearing skipped seconds. */
static void window_advance(struct pool_set *s)
{
    unsigned long long now = now_sec();
    if (now - s->window_sec >= POOLS_WINDOW_S)
        memset(s->window, 0, sizeof(s->window));
    else
        for (unsigned long long t = s->window_sec + 1; t <= now; t++)
            for (unsigned f = 0; f < s->fs.n; f++)
                s->window[f][t % POOLS_WINDOW_S] = 0;
    s->window_sec = now;
}

static unsigned window_sum(const struct pool_set *s, unsigned f)
{
    unsigned n = 0;
    for (unsigned i = 0; i < POOLS_WINDOW_S; i++)
        n += s->window[f][i];
    return n;
}

/* Locked: the targets for the memory each flavour now costs. */
static void plan(struct pool_set *s, const struct pool_stats *ps, unsigned *ret)
{
    unsigned mem[FLAVOUR_MAX];
    window_advance(s);
    for (unsigned f = 0; f < s->fs.n; f++) {
        const struct flavour *fl = &s->fs.f[f];
        mem[f] = ps && ps[f].mem_mb ? ps[f].mem_mb : flavour_mem_estimate(fl);
        unsigned refill = ps && ps[f].creates ? (unsigned)ps[f].create_ms : POOLS_REFILL_GUESS_MS;
        s->want[f] = s->adaptive
                         ? flavour_want(fl->size, window_sum(s, f), POOLS_WINDOW_S * 1000u, refill)
                         : fl->size;
    }
    unsigned held_mb = 0;
    for (unsigned f = 0; f < s->fs.n; f++)
        held_mb += s->held[f] * mem[f];
    flavour_targets(&s->fs, s->want, mem, pools_budget_left(s->budget_mb, held_mb), ret);
}

unsigned pools_launch_parallel(const struct flavour *fl, unsigned parallel, bool restoring)
{
    unsigned n = fl->n_modules && !restoring ? 1 : parallel;
    return n > fl->size && fl->size > 0 ? fl->size : n;
}

unsigned pools_budget_left(unsigned budget_mb, unsigned held_mb)
{
    if (budget_mb == 0)
        return 0; /* no budget */
    /* 1, not 0: 0 would mean "no budget"; 1 MiB fits no sandbox */
    return budget_mb > held_mb ? budget_mb - held_mb : 1;
}

void pool_set_hold(struct pool_set *s, unsigned flavour, bool hold)
{
    pthread_mutex_lock(&s->mu);
    if (flavour < s->fs.n) {
        if (hold)
            s->held[flavour]++;
        else if (s->held[flavour] > 0)
            s->held[flavour]--;
    }
    pthread_mutex_unlock(&s->mu);
}

static void *sizer_main(void *arg)
{
    struct pool_set *s = arg;
    struct pool_stats ps[FLAVOUR_MAX];
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        struct timespec ts;
        sg_cond_deadline(sg_time_mono_ns() + POOLS_SIZING_MS * 1000000ull, &ts);
        pthread_cond_timedwait(&s->cond, &s->mu, &ts);
        if (s->stopping)
            break;
        pthread_mutex_unlock(&s->mu);
        for (unsigned f = 0; f < s->fs.n; f++)
            pool_get_stats(s->pools[f], &ps[f]);
        pthread_mutex_lock(&s->mu);
        unsigned t[FLAVOUR_MAX];
        plan(s, ps, t);
        for (unsigned f = 0; f < s->fs.n; f++) {
            if (t[f] == s->target[f])
                continue;
            sg_log(SG_LOG_INFO, "pool_resized", "flavour=%s target=%u was=%u want=%u memory_mb=%u",
                   s->fs.f[f].name, t[f], s->target[f], s->want[f], ps[f].mem_mb);
            s->target[f] = t[f];
            pool_set_target(s->pools[f], t[f]);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static int start_pool(struct pool_set *s, const struct pool_set_config *cfg, unsigned f,
                      struct sg_error *err)
{
    const struct flavour *fl = &s->fs.f[f];
    char label[128], pre[sizeof(((struct pool_set_flavour *)0)->preimport)];
    snprintf(label, sizeof(label), "%s.%s", cfg->instance, fl->name);
    flavour_preimport(fl, pre, sizeof(pre));
    char *body = NULL;
    int r = sandbox_flavour_body(cfg->base_body, label, pre, fl->image, &body, err);
    if (r < 0)
        return r;
    /* A heavy flavour's booted launch is followed by seconds of importing
     * inside the sandbox: one at a time, so they do not starve the plain
     * pool's refill; a restored one has its imports in the checkpoint and
     * launches as many at once as a plain one (restoring). Every flavour
     * waits for the runner's ready line: a plain sandbox's runner still sets
     * up (identity, view, native preload: ~0.3 s of CPU) after its start, and
     * a job given it then waited for that on its own clock. More launches at
     * once than the flavour's size (the most its target reaches: the budget
     * and adaptive sizing move it below) would only wait. */
    unsigned parallel = pools_launch_parallel(fl, cfg->parallel, cfg->restoring);
    struct pool_config pc = {.dc = cfg->dc,
                             .create_body = body,
                             .instance = cfg->instance,
                             .label = label,
                             .name = fl->name,
                             .target = s->target[f],
                             .parallel = parallel,
                             .metrics = cfg->metrics,
                             .wait_ready = cfg->runner_ready};
    r = pool_new(&pc, &s->pools[f], err);
    free(body);
    if (r == 0)
        sg_log(SG_LOG_INFO, "pool_flavour",
               "flavour=%s preimport=\"%s\" size=%u target=%u image=%s", fl->name, pre, fl->size,
               s->target[f], fl->image[0] ? fl->image : "default");
    return r;
}

int pool_set_new(const struct pool_set_config *cfg, struct pool_set **ret, struct sg_error *err)
{
    struct pool_set *s = calloc(1, sizeof(*s));
    if (!s)
        return sg_error_set(err, -ENOMEM, "out of memory");
    s->fs = *cfg->flavours;
    s->budget_mb = cfg->budget_mb;
    s->adaptive = cfg->adaptive;
    s->window_sec = now_sec();
    pthread_mutex_init(&s->mu, NULL);
    sg_cond_init_mono(&s->cond);
    plan(s, NULL, s->target);
    int r = 0;
    for (unsigned f = 0; f < s->fs.n && r == 0; f++)
        r = start_pool(s, cfg, f, err);
    if (r == 0 && pthread_create(&s->sizer, NULL, sizer_main, s) != 0)
        r = sg_error_set(err, -EAGAIN, "cannot start the pool sizing thread");
    s->sizer_started = r == 0;
    if (r < 0) {
        pool_set_free(s);
        return r;
    }
    *ret = s;
    return 0;
}

/* Wait in the first pool of the order where a sandbox can appear; -1: none can. */
static int wait_pool(struct pool_set *s, const struct flavour_choice *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (pool_may_arrive(s->pools[c->order[i]]))
            return (int)c->order[i];
    return -1;
}

static int take(struct pool_set *s, const struct flavour_choice *c, unsigned wait_ms,
                struct sandbox *ret, unsigned *ret_flavour, struct sg_error *err)
{
    if (c->n == 1) {
        *ret_flavour = c->order[0];
        return pool_acquire(s->pools[c->order[0]], wait_ms, ret, err);
    }
    double deadline = attach_now_ms() + wait_ms;
    for (;;) {
        for (unsigned i = 0; i < c->n; i++) {
            int r = pool_acquire(s->pools[c->order[i]], 0, ret, err);
            if (r != -EBUSY) {
                *ret_flavour = c->order[i];
                return r;
            }
        }
        double left = deadline - attach_now_ms();
        int w = wait_pool(s, c);
        if (w < 0)
            return sg_error_set(err, -EBUSY,
                                "pool_busy: no sandbox of flavour %s or a lighter one is idle or "
                                "being created (launches failing or memory budget)",
                                s->fs.f[c->order[0]].name);
        if (left <= 0)
            return sg_error_set(err, -EBUSY,
                                "pool_busy: no sandbox of flavour %s or a lighter "
                                "one became free within %u ms",
                                s->fs.f[c->order[0]].name, wait_ms);
        unsigned slice = left < POOLS_SLICE_MS ? (unsigned)left + 1 : POOLS_SLICE_MS;
        int r = pool_acquire(s->pools[w], slice, ret, err);
        if (r != -EBUSY) {
            *ret_flavour = (unsigned)w;
            return r;
        }
    }
}

int pool_set_acquire(struct pool_set *s, const char *const *imports, size_t n, unsigned wait_ms,
                     struct sandbox *ret, unsigned *ret_flavour, bool *ret_fallback,
                     struct sg_error *err)
{
    return pool_set_acquire_named(s, NULL, imports, n, wait_ms, ret, ret_flavour, ret_fallback,
                                  err);
}

int pool_set_acquire_named(struct pool_set *s, const char *flavour, const char *const *imports,
                           size_t n, unsigned wait_ms, struct sandbox *ret, unsigned *ret_flavour,
                           bool *ret_fallback, struct sg_error *err)
{
    struct flavour_choice c;
    flavour_choose(&s->fs, imports, n, &c);
    flavour_prefer(&s->fs, flavour, &c);
    if (c.n == 0)
        return sg_error_set(err, -ENOENT,
                            "no_package_set: no package set of this executor installs '%s' "
                            "together with the job's other imports",
                            c.missing ? c.missing : "?");
    pthread_mutex_lock(&s->mu);
    window_advance(s);
    s->arrivals[c.order[0]]++;
    s->window[c.order[0]][s->window_sec % POOLS_WINDOW_S]++;
    pthread_mutex_unlock(&s->mu);
    unsigned f = c.order[0];
    int r = take(s, &c, wait_ms, ret, &f, err);
    *ret_flavour = f;
    *ret_fallback = f != c.order[0];
    if (r == 0) {
        pthread_mutex_lock(&s->mu);
        if (*ret_fallback)
            s->fallbacks[f]++;
        else
            s->hits[f]++;
        pthread_mutex_unlock(&s->mu);
    }
    return r;
}

void pool_set_release(struct pool_set *s, unsigned flavour, struct sandbox *sb)
{
    pool_release(s->pools[flavour < s->fs.n ? flavour : 0], sb);
}

int pool_set_adopt(struct pool_set *s, const char *name, const struct sandbox *sb,
                   unsigned *ret_flavour)
{
    for (unsigned f = 0; f < s->fs.n; f++) {
        if (strcmp(s->fs.f[f].name, name) != 0)
            continue;
        int r = pool_adopt(s->pools[f], sb);
        if (r == 0) {
            pool_set_hold(s, f, true);
            *ret_flavour = f;
        }
        return r;
    }
    return -ENOENT;
}

const char *pool_set_flavour_name(const struct pool_set *s, unsigned flavour)
{
    return flavour < s->fs.n ? s->fs.f[flavour].name : "?";
}

static void add_total(struct pool_stats *t, const struct pool_stats *p, bool first)
{
    t->target += p->target;
    t->idle += p->idle;
    t->busy += p->busy;
    t->creating += p->creating;
    t->tearing_down += p->tearing_down;
    t->creates += p->creates;
    t->docker_up = first ? p->docker_up : t->docker_up && p->docker_up;
    t->launch_ok = first ? p->launch_ok : t->launch_ok && p->launch_ok;
    if (!p->launch_ok && !t->last_error[0])
        snprintf(t->last_error, sizeof(t->last_error), "%s", p->last_error);
}

void pool_set_get_stats(struct pool_set *s, struct pool_set_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->n = s->fs.n;
    ret->budget_mb = s->budget_mb;
    for (unsigned f = 0; f < s->fs.n; f++) {
        struct pool_set_flavour *o = &ret->f[f];
        pool_get_stats(s->pools[f], &o->ps);
        add_total(&ret->total, &o->ps, f == 0);
        o->name = s->fs.f[f].name;
        flavour_preimport(&s->fs.f[f], o->preimport, sizeof(o->preimport));
        o->size = s->fs.f[f].size;
        o->measured = o->ps.mem_mb > 0;
        o->mem_mb = o->measured ? o->ps.mem_mb : flavour_mem_estimate(&s->fs.f[f]);
        ret->planned_mb += o->ps.target * o->mem_mb;
    }
    if (ret->total.launch_ok)
        ret->total.last_error[0] = '\0';
    pthread_mutex_lock(&s->mu);
    for (unsigned f = 0; f < s->fs.n; f++)
        ret->held_mb += s->held[f] * ret->f[f].mem_mb;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&s->mu);
    for (unsigned f = 0; f < s->fs.n; f++) {
        ret->f[f].want = s->want[f];
        ret->f[f].hits = s->hits[f];
        ret->f[f].fallbacks = s->fallbacks[f];
        ret->f[f].arrivals = s->arrivals[f];
    }
    pthread_mutex_unlock(&s->mu);
}

static void gauge(struct sg_buf *b, const struct pool_set_stats *st, const char *name,
                  const char *type, const char *help, int field)
{
    sg_buf_printf(
        b, "# HELP sandgate_executor_flavour_%s %s\n# TYPE sandgate_executor_flavour_%s %s\n", name,
        help, name, type);
    for (unsigned f = 0; f < st->n; f++) {
        const struct pool_set_flavour *o = &st->f[f];
        double v[] = {o->size,
                      o->ps.target,
                      o->ps.idle,
                      o->ps.busy,
                      o->ps.creating,
                      (double)o->mem_mb * 1048576.0,
                      o->ps.create_ms / 1000.0,
                      (double)o->hits,
                      (double)o->fallbacks,
                      (double)o->arrivals,
                      o->measured};
        sg_buf_printf(b, "sandgate_executor_flavour_%s{flavour=\"%s\"} %.15g\n", name, o->name,
                      v[field]);
    }
}

void pool_set_render_metrics(const struct pool_set_stats *st, struct sg_buf *b)
{
    static const struct {
        const char *name, *type, *help;
    } m[] = {
        {"size", "gauge", "Most warm sandboxes the flavour may keep."},
        {"target", "gauge", "Warm sandboxes the flavour keeps now (budget, adaptive sizing)."},
        {"idle", "gauge", "Warm sandboxes ready."},
        {"busy", "gauge", "Sandboxes running a job."},
        {"creating", "gauge", "Sandboxes being launched."},
        {"memory_bytes", "gauge", "Memory of one warm sandbox (measured, else estimated)."},
        {"create_seconds", "gauge", "Moving average of one launch (create+attach+start)."},
        {"hits_total", "counter", "Jobs served by their ideal flavour."},
        {"fallbacks_total", "counter", "Jobs served by a lighter flavour (ideal pool empty)."},
        {"arrivals_total", "counter", "Jobs whose ideal flavour this is."},
        {"memory_measured", "gauge", "1 when memory_bytes was measured, 0 when estimated."},
    };
    for (int i = 0; i < (int)(sizeof(m) / sizeof(m[0])); i++)
        gauge(b, st, m[i].name, m[i].type, m[i].help, i);
    sg_buf_printf(b,
                  "# TYPE sandgate_executor_pool_memory_budget_bytes gauge\n"
                  "sandgate_executor_pool_memory_budget_bytes %.6g\n"
                  "# TYPE sandgate_executor_pool_memory_planned_bytes gauge\n"
                  "sandgate_executor_pool_memory_planned_bytes %.6g\n",
                  (double)st->budget_mb * 1048576.0, (double)st->planned_mb * 1048576.0);
}

void pool_set_shutdown(struct pool_set *s)
{
    if (!s || s->shut)
        return;
    s->shut = true;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
    if (s->sizer_started)
        pthread_join(s->sizer, NULL);
    for (unsigned f = 0; f < s->fs.n; f++)
        if (s->pools[f])
            pool_shutdown(s->pools[f]);
}

void pool_set_free(struct pool_set *s)
{
    if (!s)
        return;
    pool_set_shutdown(s);
    for (unsigned f = 0; f < s->fs.n; f++)
        pool_free(s->pools[f]);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
