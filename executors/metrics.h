/* metrics.h - the executor's Prometheus counters and histograms.
 *
 * Thread-safe (one mutex; updates are a handful of adds). Rendering takes the
 * pool gauges from the caller so this module knows nothing of the pool.
 */
#ifndef SG_EXEC_METRICS_H
#define SG_EXEC_METRICS_H

#include <stdbool.h>

#include "outcome.h"

struct metrics;

struct metrics_gauges {
    unsigned pool_target, pool_idle, pool_busy, pool_creating;
    bool docker_up;
};

/* Caller frees with metrics_free(). */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* A job that ran: status, resource limit type (may be NULL), latency. */
void metrics_job(struct metrics *m, enum exec_status st, const char *limit_type, double ms);
/* A request answered without running: "bad_request", "unauthorized",
 * "pool_busy", "docker_unreachable". */
void metrics_rejected(struct metrics *m, const char *reason);
/* One container launch (create+attach+start) and whether it worked. */
void metrics_create(struct metrics *m, double ms, bool ok);

/* The parts of one warm sandbox's creation, in ms (PHASE_* order): Engine
 * API create, attach, start (runsc boots the sandbox), the runner's ready
 * line after the start. Rendered as sums with the count of launches. */
enum {
    METRICS_PHASE_CREATE,
    METRICS_PHASE_ATTACH,
    METRICS_PHASE_START,
    METRICS_PHASE_READY,
    METRICS_PHASES
};
void metrics_create_phases(struct metrics *m, const double ms[METRICS_PHASES]);

/* Egress decisions of one networked job (egress.h), by verdict. */
void metrics_egress(struct metrics *m, unsigned long long allowed, unsigned long long denied);

/* Sessions an earlier life of this executor left in its session directory,
 * at start (sessions_recover): one taken back, one expired meanwhile, or one
 * lost for reason (one of METRICS_SESSION_LOST_REASONS; another: "other"). */
#define METRICS_SESSION_LOST_REASONS                                                               \
    "other_boot_id", "sandbox_gone", "sandbox_stopped", "attach_failed", "runner_silent",          \
        "operation_running", "flavour_gone", "no_slot", "out_of_memory", "other"
void metrics_session_recovered(struct metrics *m);
void metrics_session_expired(struct metrics *m);
void metrics_session_lost(struct metrics *m, const char *reason);

/* Prometheus text exposition; caller frees with free(). */
char *metrics_render(struct metrics *m, const struct metrics_gauges *g);

#endif
