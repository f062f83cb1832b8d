#include "metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define METRICS_RENDER_MAX (64u * 1024u)

static const char *limit_types[] = {"time", "memory", "output", "pids", "other"};
#define N_LIMITS (sizeof(limit_types) / sizeof(limit_types[0]))
static const char *reject_reasons[] = {"bad_request", "unauthorized", "pool_busy",
                                       "docker_unreachable", "other"};
#define N_REASONS (sizeof(reject_reasons) / sizeof(reject_reasons[0]))

/* Histogram bounds in seconds. */
static const double job_bounds[] = {0.005, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                    5, 10, 30, 60};
static const double create_bounds[] = {0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10, 30};
#define N_JOB_B (sizeof(job_bounds) / sizeof(job_bounds[0]))
#define N_CREATE_B (sizeof(create_bounds) / sizeof(create_bounds[0]))

struct histo {
    unsigned long long counts[16];
    unsigned long long total;
    double sum;
};

struct metrics {
    pthread_mutex_t mu;
    unsigned long long jobs[EXEC_STATUS_COUNT];
    unsigned long long limits[N_LIMITS];
    unsigned long long rejected[N_REASONS];
    unsigned long long creates_ok, creates_failed;
    struct histo job_latency, create_latency;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof(*m));
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static void observe(struct histo *h, const double *bounds, size_t n, double seconds)
{
    for (size_t i = 0; i < n; i++)
        if (seconds <= bounds[i])
            h->counts[i]++;
    h->total++;
    h->sum += seconds;
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
    observe(&m->job_latency, job_bounds, N_JOB_B, ms / 1000.0);
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
        observe(&m->create_latency, create_bounds, N_CREATE_B, ms / 1000.0);
    } else {
        m->creates_failed++;
    }
    pthread_mutex_unlock(&m->mu);
}

static void render_histo(struct sg_buf *b, const char *name, const char *help,
                         const struct histo *h, const double *bounds, size_t n)
{
    sg_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (size_t i = 0; i < n; i++)
        sg_buf_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name, bounds[i], h->counts[i]);
    sg_buf_printf(b, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name, h->total,
                  name, h->sum, name, h->total);
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
    render_histo(&b, "sandgate_executor_job_duration_seconds", "Job latency (run, excl. wait).",
                 &m->job_latency, job_bounds, N_JOB_B);
    render_histo(&b, "sandgate_executor_container_create_seconds",
                 "Container create+attach+start latency.", &m->create_latency, create_bounds,
                 N_CREATE_B);
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
