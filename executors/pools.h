/* pools.h - the executor's warm pools, one per flavour (flavour.h), and the
 * choice of a pool for each job.
 *
 * Each flavour has its own struct pool (pool.h) whose containers carry
 * SANDGATE_PREIMPORT=<its modules> and the label EXEC_LABEL_POOL. A job's
 * imports choose the order in which pools are tried (flavour_choose); the
 * job takes the first idle sandbox in that order and waits (bounded) only
 * when every allowed pool is empty. A sizing thread keeps each pool's target
 * within the memory budget, using each flavour's measured memory (Docker
 * stats of a settled warm sandbox) or, until measured, an estimate; with
 * adaptive sizing the targets follow the recent arrivals of each flavour.
 *
 * Thread-safe. The single-use rule is the pools': a released sandbox is
 * always torn down.
 */
#ifndef SG_EXEC_POOLS_H
#define SG_EXEC_POOLS_H

#include <stdbool.h>

#include "buf.h"
#include "docker.h"
#include "flavour.h"
#include "metrics.h"
#include "pool.h"
#include "sandbox.h"
#include "sg_error.h"

#define POOLS_SLICE_MS 25u          /* re-check the lighter pools this often while waiting */
#define POOLS_SIZING_MS 1000u       /* sizing period */
#define POOLS_WINDOW_S 60u          /* arrivals remembered for adaptive sizing */
#define POOLS_REFILL_GUESS_MS 2000u /* refill time assumed before a launch was measured */

struct pool_set;

struct pool_set_config {
    struct docker_client *dc;           /* borrowed; outlives the set */
    const char *base_body;              /* copied: sandbox_create_body() */
    const char *instance;               /* copied */
    const struct flavour_set *flavours; /* copied; finished (flavour_set_finish) */
    unsigned parallel;                  /* launches at once by a flavour without modules */
    unsigned budget_mb;                 /* 0: no memory budget */
    bool adaptive;
    bool runner_ready;       /* the runner reports pre-import done (both runners do) */
    struct metrics *metrics; /* borrowed, may be NULL */
    /* the sandboxes are restored from checkpoints (--sandbox-restore): a
     * flavour with modules then launches `parallel` at once like a plain one
     * (its imports are in the checkpoint), not 1 (a boot imports for seconds) */
    bool restoring;
};

struct pool_set_flavour {
    const char *name; /* borrowed from the set */
    char preimport[FLAVOUR_MODULES_MAX * (FLAVOUR_MODULE_MAX + 1) + 1];
    unsigned size, want; /* configured most, wanted now (adaptive, or size) */
    unsigned mem_mb;     /* measured, or the estimate when !measured */
    bool measured;
    unsigned long long hits, fallbacks, arrivals;
    struct pool_stats ps;
};

struct pool_set_stats {
    unsigned n;
    struct pool_set_flavour f[FLAVOUR_MAX];
    unsigned budget_mb;      /* 0: none */
    unsigned planned_mb;     /* sum of target * memory */
    unsigned held_mb;        /* the sandboxes sessions hold (pool_set_hold) */
    struct pool_stats total; /* sums; docker_up/launch_ok/last_error of any pool */
};

/* Create every pool and the sizing thread. Free with pool_set_free(). */
int pool_set_new(const struct pool_set_config *cfg, struct pool_set **ret, struct sg_error *err);

/* Take a sandbox for a job importing imports[0..n) (top-level names),
 * waiting at most wait_ms. *ret_flavour names the flavour used (index for
 * pool_set_release and pool_set_flavour_name), *ret_fallback tells whether
 * it was not the job's ideal one. Errors as pool_acquire(). */
int pool_set_acquire(struct pool_set *s, const char *const *imports, size_t n, unsigned wait_ms,
                     struct sandbox *ret, unsigned *ret_flavour, bool *ret_fallback,
                     struct sg_error *err);

/* The same with the flavour named flavour tried first when it exists (a
 * job's "flavour"; NULL: by the imports alone). */
int pool_set_acquire_named(struct pool_set *s, const char *flavour, const char *const *imports,
                           size_t n, unsigned wait_ms, struct sandbox *ret, unsigned *ret_flavour,
                           bool *ret_fallback, struct sg_error *err);

/* A session holds (hold) or gave back (!hold) one sandbox of flavour: held
 * sandboxes count against the memory budget, so the warm pools shrink while
 * sessions hold memory. */
void pool_set_hold(struct pool_set *s, unsigned flavour, bool hold);

/* Pure: the budget left for warm sandboxes when sessions hold held_mb (0:
 * no budget stays no budget; a budget used up leaves 1 MiB, which fits no
 * sandbox). */
unsigned pools_budget_left(unsigned budget_mb, unsigned held_mb);

/* Pure: launches at once by fl's refill: parallel, or 1 for a flavour with
 * modules that boots; never more than the flavour's size (pool_set_config). */
unsigned pools_launch_parallel(const struct flavour *fl, unsigned parallel, bool restoring);

/* Hand the sandbox back to its flavour's pool for teardown. */
void pool_set_release(struct pool_set *s, unsigned flavour, struct sandbox *sb);

/* Take sb back (pool_adopt) into the pool of the flavour named name, held
 * for a session (pool_set_hold): *ret_flavour is its index. -ENOENT when no
 * flavour has that name, -ENOSPC as pool_adopt(). */
int pool_set_adopt(struct pool_set *s, const char *name, const struct sandbox *sb,
                   unsigned *ret_flavour);

/* The flavour's name (static for the set's life). */
const char *pool_set_flavour_name(const struct pool_set *s, unsigned flavour);

void pool_set_get_stats(struct pool_set *s, struct pool_set_stats *ret);

/* Per-flavour Prometheus lines, appended to b. */
void pool_set_render_metrics(const struct pool_set_stats *st, struct sg_buf *b);

/* Stop sizing and every pool (as pool_shutdown()). */
void pool_set_shutdown(struct pool_set *s);

/* pool_set_shutdown() if needed, then free. NULL is a no-op. */
void pool_set_free(struct pool_set *s);

#endif
