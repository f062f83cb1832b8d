#include "metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "histogram.h"

#define METRICS_RENDER_MAX (64u * 1024u)

static const char *limit_types[] = {"time", "memory", "output", "pids", "other"};
#define N_LIMITS (sizeof(limit_types) / sizeof(limit_types[0]))
static const char *reject_reasons[] = {
    "bad_request",         "unauthorized", "pool_busy", "docker_unreachable",
    "network_unavailable", "memory_busy",  "other"};
#define N_REASONS (sizeof(reject_reasons) / sizeof(reject_reasons[0]))
static const char *lost_reasons[] = {METRICS_SESSION_LOST_REASONS};
#define N_LOST (sizeof(lost_reasons) / sizeof(lost_reasons[0]))

/* Histogram bounds in seconds. */
/* Bucket bounds in microseconds (rendered in seconds). */
static const uint64_t job_bounds_us[] = {5000,    10000,    15000,    25000,   50000,
                                         100000,  250000,   500000,   1000000, 2500000,
                                         5000000, 10000000, 30000000, 60000000};
static const uint64_t create_bounds_us[] = {100000,  200000,  300000,  500000,   750000,
                                            1000000, 2000000, 5000000, 10000000, 30000000};
#define N_JOB_B (sizeof(job_bounds_us) / sizeof(job_bounds_us[0]))
#define N_CREATE_B (sizeof(create_bounds_us) / sizeof(create_bounds_us[0]))

struct metrics {
    pthread_mutex_t mu;
    unsigned long long jobs[EXEC_STATUS_COUNT];
    unsigned long long limits[N_LIMITS];
    unsigned long long rejected[N_REASONS];
    unsigned long long creates_ok, creates_failed;
    unsigned long long phase_n;      /* launches with their parts timed */
    double phase_ms[METRICS_PHASES]; /* sums */
    unsigned long long egress_allowed, egress_denied;
    unsigned long long sessions_recovered, sessions_expired, sessions_lost[N_LOST];
    struct sg_histogram job_latency, create_latency;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    sg_histogram_init(&m->job_latency, job_bounds_us, N_JOB_B);
    sg_histogram_init(&m->create_latency, create_bounds_us, N_CREATE_B);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static uint64_t ms_to_us(double ms)
{
    return ms > 0 ? (uint64_t)(ms * 1000.0 + 0.5) : 0;
}

static size_t index_of(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (s && strcmp(names[i], s) == 0)
            return i;
    return n - 1;
}

void metrics_job(struct metrics *m, enum exec_status st, const char *limit_type, double ms)
{
    pthread_mutex_lock(&m->mu);
    if ((unsigned)st < EXEC_STATUS_COUNT)
        m->jobs[st]++;
    if (st == EXEC_RESOURCE_LIMIT)
        m->limits[index_of(limit_types, N_LIMITS, limit_type)]++;
    sg_histogram_observe_us(&m->job_latency, ms_to_us(ms));
    pthread_mutex_unlock(&m->mu);
}

void metrics_rejected(struct metrics *m, const char *reason)
{
    pthread_mutex_lock(&m->mu);
    m->rejected[index_of(reject_reasons, N_REASONS, reason)]++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_create(struct metrics *m, double ms, bool ok)
{
    pthread_mutex_lock(&m->mu);
    if (ok) {
        m->creates_ok++;
        sg_histogram_observe_us(&m->create_latency, ms_to_us(ms));
    } else {
        m->creates_failed++;
    }
    pthread_mutex_unlock(&m->mu);
}

void metrics_create_phases(struct metrics *m, const double ms[METRICS_PHASES])
{
    pthread_mutex_lock(&m->mu);
    m->phase_n++;
    for (int i = 0; i < METRICS_PHASES; i++)
        m->phase_ms[i] += ms[i];
    pthread_mutex_unlock(&m->mu);
}

static void render_phases(const struct metrics *m, struct sg_buf *b)
{
    static const char *const names[METRICS_PHASES] = {"create", "attach", "start", "ready"};
    sg_buf_printf(b, "# HELP sandgate_executor_sandbox_phase_seconds_total Time spent in each "
                     "part of warm sandbox creation (sum; count below).\n"
                     "# TYPE sandgate_executor_sandbox_phase_seconds_total counter\n");
    for (int i = 0; i < METRICS_PHASES; i++)
        sg_buf_printf(b, "sandgate_executor_sandbox_phase_seconds_total{phase=\"%s\"} %.6f\n",
                      names[i], m->phase_ms[i] / 1000.0);
    sg_buf_printf(b,
                  "# TYPE sandgate_executor_sandbox_phase_launches_total counter\n"
                  "sandgate_executor_sandbox_phase_launches_total %llu\n",
                  m->phase_n);
}

void metrics_egress(struct metrics *m, unsigned long long allowed, unsigned long long denied)
{
    pthread_mutex_lock(&m->mu);
    m->egress_allowed += allowed;
    m->egress_denied += denied;
    pthread_mutex_unlock(&m->mu);
}

void metrics_session_recovered(struct metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->sessions_recovered++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_session_expired(struct metrics *m)
{
    pthread_mutex_lock(&m->mu);
    m->sessions_expired++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_session_lost(struct metrics *m, const char *reason)
{
    pthread_mutex_lock(&m->mu);
    m->sessions_lost[index_of(lost_reasons, N_LOST, reason)]++;
    pthread_mutex_unlock(&m->mu);
}

static void render_recovery(const struct metrics *m, struct sg_buf *b)
{
    sg_buf_printf(b,
                  "# HELP sandgate_executor_sessions_recovered_total Sessions of an earlier life "
                  "of this executor taken back at its start (--session-dir).\n"
                  "# TYPE sandgate_executor_sessions_recovered_total counter\n"
                  "sandgate_executor_sessions_recovered_total %llu\n"
                  "# HELP sandgate_executor_sessions_expired_total Sessions of an earlier life "
                  "found expired at its start (removed).\n"
                  "# TYPE sandgate_executor_sessions_expired_total counter\n"
                  "sandgate_executor_sessions_expired_total %llu\n"
                  "# HELP sandgate_executor_sessions_lost_total Sessions of an earlier life "
                  "that could not be taken back at its start (410 session_lost), by reason.\n"
                  "# TYPE sandgate_executor_sessions_lost_total counter\n",
                  m->sessions_recovered, m->sessions_expired);
    for (size_t i = 0; i < N_LOST; i++)
        sg_buf_printf(b, "sandgate_executor_sessions_lost_total{reason=\"%s\"} %llu\n",
                      lost_reasons[i], m->sessions_lost[i]);
}

char *metrics_render(struct metrics *m, const struct metrics_gauges *g)
{
    struct sg_buf b;
    sg_buf_init(&b, METRICS_RENDER_MAX);
    pthread_mutex_lock(&m->mu);
    sg_buf_printf(&b, "# HELP sandgate_executor_jobs_total Jobs run, by outcome status.\n"
                      "# TYPE sandgate_executor_jobs_total counter\n");
    for (int i = 0; i < EXEC_STATUS_COUNT; i++)
        sg_buf_printf(&b, "sandgate_executor_jobs_total{status=\"%s\"} %llu\n",
                      outcome_status_name((enum exec_status)i), m->jobs[i]);
    sg_buf_printf(&b, "# HELP sandgate_executor_limit_exceeded_total Jobs stopped by a limit.\n"
                      "# TYPE sandgate_executor_limit_exceeded_total counter\n");
    for (size_t i = 0; i < N_LIMITS; i++)
        sg_buf_printf(&b, "sandgate_executor_limit_exceeded_total{type=\"%s\"} %llu\n",
                      limit_types[i], m->limits[i]);
    sg_buf_printf(&b, "# HELP sandgate_executor_rejected_total Requests answered without "
                      "running a job.\n# TYPE sandgate_executor_rejected_total counter\n");
    for (size_t i = 0; i < N_REASONS; i++)
        sg_buf_printf(&b, "sandgate_executor_rejected_total{reason=\"%s\"} %llu\n",
                      reject_reasons[i], m->rejected[i]);
    sg_buf_printf(&b,
                  "# TYPE sandgate_executor_container_creates_total counter\n"
                  "sandgate_executor_container_creates_total{result=\"ok\"} %llu\n"
                  "sandgate_executor_container_creates_total{result=\"failed\"} %llu\n",
                  m->creates_ok, m->creates_failed);
    render_phases(m, &b);
    render_recovery(m, &b);
    sg_buf_printf(&b,
                  "# HELP sandgate_executor_egress_decisions_total Egress proxy decisions on "
                  "networked jobs' connections, by verdict.\n"
                  "# TYPE sandgate_executor_egress_decisions_total counter\n"
                  "sandgate_executor_egress_decisions_total{verdict=\"allowed\"} %llu\n"
                  "sandgate_executor_egress_decisions_total{verdict=\"denied\"} %llu\n",
                  m->egress_allowed, m->egress_denied);
    sg_histogram_render(&m->job_latency, "sandgate_executor_job_duration_seconds",
                        "Job latency (run, excl. wait).", &b);
    sg_histogram_render(&m->create_latency, "sandgate_executor_container_create_seconds",
                        "Container create+attach+start latency.", &b);
    pthread_mutex_unlock(&m->mu);
    sg_buf_printf(&b,
                  "# TYPE sandgate_executor_pool_target gauge\nsandgate_executor_pool_target %u\n"
                  "# TYPE sandgate_executor_pool_idle gauge\nsandgate_executor_pool_idle %u\n"
                  "# TYPE sandgate_executor_pool_busy gauge\nsandgate_executor_pool_busy %u\n"
                  "# TYPE sandgate_executor_pool_creating gauge\n"
                  "sandgate_executor_pool_creating %u\n"
                  "# TYPE sandgate_executor_docker_up gauge\nsandgate_executor_docker_up %d\n",
                  g->pool_target, g->pool_idle, g->pool_busy, g->pool_creating, g->docker_up);
    char *s = sg_buf_steal(&b, NULL);
    return s;
}
