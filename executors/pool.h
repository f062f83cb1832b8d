/* pool.h - the warm pool of single-use sandboxes.
 *
 * Refill threads keep `target` sandboxes launched and idle (at most
 * `parallel` launches at once). A job takes one with pool_acquire() (bounded
 * wait, then -EBUSY: never an unbounded queue) and gives it back with
 * pool_release(), which only queues the teardown: kill + remove happen on a
 * background thread, off the request path. No sandbox serves two jobs.
 *
 * When dockerd is unreachable the pool says so (pool_stats().docker_up) and
 * acquire fails at once with -EHOSTDOWN; the refill keeps retrying with a
 * capped backoff and, when dockerd is back, sweeps the containers the outage
 * left behind (labelled ours, but neither idle, in use nor queued).
 */
#ifndef SG_EXEC_POOL_H
#define SG_EXEC_POOL_H

#include <stdbool.h>

#include "docker.h"
#include "metrics.h"
#include "sandbox.h"
#include "sg_error.h"

#define POOL_BACKOFF_MIN_MS 100
#define POOL_BACKOFF_MAX_MS 3000
#define POOL_HOUSEKEEP_MS 1000 /* idle check / dockerd ping period */
#define POOL_TEARDOWN_THREADS 2
#define POOL_TEARDOWN_ATTEMPTS 3
/* A warm sandbox's memory is read (Docker stats) once it has been idle this
 * long (its runner has then finished pre-importing), at most once a period. */
#define POOL_SETTLE_MS 5000
#define POOL_MEM_PERIOD_MS 30000
/* A sandbox that pre-imports modules joins the idle list once its runner
 * says it is warm (its ready line), or after this long whatever it says. */
#define POOL_READY_TIMEOUT_MS 30000
#define POOL_READY_SLICE_MS 200

struct pool;

struct pool_config {
    struct docker_client *dc; /* borrowed; outlives the pool */
    const char *create_body;  /* copied */
    const char *instance;     /* copied: the label value of our containers */
    const char *label;        /* copied: EXEC_LABEL_POOL value of this pool's containers
                                 (NULL: the pool owns every container of instance) */
    const char *name;         /* copied: the flavour's name, for logs (may be NULL) */
    unsigned target;
    unsigned parallel;
    struct metrics *metrics; /* borrowed, may be NULL */
    bool wait_ready;         /* hold new sandboxes back until the runner's ready line */
    const char *network;     /* copied: a networked pool's Docker network, whose address of
                                each sandbox is looked up at launch (sandbox.ip); NULL: none */
    /* Run on each new sandbox after its start, before it may serve a job; a
     * failure discards the sandbox (the launch failed). NULL: none. */
    int (*prepare)(const void *ctx, struct docker_client *dc, const char *id, struct sg_error *err);
    const void *prepare_ctx; /* borrowed; outlives the pool */
};

struct pool_stats {
    unsigned target, idle, busy, creating, tearing_down;
    unsigned mem_mb;       /* last measured memory of one warm sandbox; 0: not yet */
    double create_ms;      /* moving average of create+attach+start (+ until the runner's
                              ready line when the pool waits for it): the refill time */
    unsigned long creates; /* successful launches */
    bool docker_up;        /* last contact with dockerd worked */
    bool launch_ok;        /* last launch worked */
    char last_error[256];
};

/* Create the pool and start its threads. Caller frees with pool_free(). */
int pool_new(const struct pool_config *cfg, struct pool **ret, struct sg_error *err);

/* Take an idle sandbox, waiting at most wait_ms. Returns 0, -EBUSY (none
 * became free in time, or none can: see pool_may_arrive()), -EHOSTDOWN
 * (dockerd unreachable; err says why) or -ESHUTDOWN. */
int pool_acquire(struct pool *p, unsigned wait_ms, struct sandbox *ret, struct sg_error *err);

/* An idle sandbox is there, or one is being (or about to be) launched: a
 * wait in pool_acquire() can succeed. False when the pool keeps none (memory
 * budget) or its launches are failing: pool_acquire() then answers -EBUSY at
 * once instead of after wait_ms. */
bool pool_may_arrive(struct pool *p);

/* Hand a used sandbox back for teardown (never reused). */
void pool_release(struct pool *p, struct sandbox *sb);

void pool_get_stats(struct pool *p, struct pool_stats *ret);

/* Change how many warm sandboxes the pool keeps (capped at
 * EXEC_POOL_SIZE_MAX). Idle ones above a lower target are torn down. */
void pool_set_target(struct pool *p, unsigned target);

/* Stop refilling, tear down idle sandboxes and drain the teardown queue.
 * Call after every acquired sandbox was released. */
void pool_shutdown(struct pool *p);

/* pool_shutdown() if needed, then free. NULL is a no-op. */
void pool_free(struct pool *p);

/* Take sb (a container of this pool from an earlier life of the executor,
 * attached again) as in use, as if pool_acquire() had handed it out: the
 * pool's sweep leaves it alone and pool_release() tears it down. -ENOSPC
 * when the pool already counts EXEC_MAX_JOBS_MAX in use. */
int pool_adopt(struct pool *p, const struct sandbox *sb);

/* Remove every container labelled as instance's (orphans of an earlier
 * life) except the n_keep ids in keep (sessions to take back; may be NULL).
 * *ret_n counts the removed ones. */
int pool_reap(struct docker_client *dc, const char *instance, const char (*keep)[DOCKER_ID_LEN + 1],
              size_t n_keep, unsigned *ret_n, struct sg_error *err);

#endif
