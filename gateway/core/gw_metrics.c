#include "gw_metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"

static const int status_codes[] = {200, 400, 401, 403, 404, 405, 413, 429, 500, 502, 503, 504};
#define STATUS_COUNT (sizeof(status_codes) / sizeof(status_codes[0]))
#define STATUS_OTHER STATUS_COUNT

/* Upper bounds in microseconds (rendered in seconds). */
static const uint64_t bucket_us[] = {100,     250,     500,     1000,     2500,     5000,
                                     10000,   25000,   50000,   100000,   250000,   500000,
                                     1000000, 2500000, 5000000, 10000000, 30000000, 60000000};
#define BUCKETS (sizeof(bucket_us) / sizeof(bucket_us[0]))

static const char *const ep_names[GW_EP_COUNT] = {
    "run",         "v1_run",    "v1_analyze",  "healthz", "readyz",    "metrics",
    "v1_policies", "v1_whoami", "v1_runtimes", "mcp",     "v1_cancel", "v1_sessions",
    "v1_audit",    "console",   "dify",        "other"};
static const char *const hist_names[GW_HIST_COUNT] = {"analysis", "execution", "total"};
static const char *const hist_help[GW_HIST_COUNT] = {
    "Time spent canonicalising, parsing and evaluating the policy",
    "Time spent waiting for the executor", "Time from request to response"};

struct rule_slot {
    char name[64];
    atomic_uint_fast64_t count;
};

struct gw_metrics {
    atomic_uint_fast64_t requests[GW_EP_COUNT][STATUS_COUNT + 1];
    atomic_uint_fast64_t verdicts[2]; /* reject, accept */
    atomic_uint_fast64_t egress[2];   /* denied, allowed */
    struct sg_histogram hists[GW_HIST_COUNT];
    pthread_mutex_t rules_lock;
    atomic_size_t rule_count;
    struct rule_slot rules[GW_METRICS_RULES_MAX];
    atomic_uint_fast64_t rule_other;
};

struct gw_metrics *gw_metrics_new(void)
{
    struct gw_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->rules_lock, NULL);
    for (int h = 0; h < GW_HIST_COUNT; h++)
        sg_histogram_init(&m->hists[h], bucket_us, BUCKETS);
    return m;
}

void gw_metrics_free(struct gw_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->rules_lock);
    free(m);
}

const char *gw_endpoint_name(enum gw_endpoint ep)
{
    return ep < GW_EP_COUNT ? ep_names[ep] : "other";
}

void gw_metrics_request(struct gw_metrics *m, enum gw_endpoint ep, int status)
{
    size_t s = STATUS_OTHER;
    for (size_t i = 0; i < STATUS_COUNT; i++)
        if (status_codes[i] == status)
            s = i;
    atomic_fetch_add_explicit(&m->requests[ep < GW_EP_COUNT ? ep : GW_EP_OTHER][s], 1,
                              memory_order_relaxed);
}

void gw_metrics_egress(struct gw_metrics *m, uint64_t allowed, uint64_t denied)
{
    atomic_fetch_add_explicit(&m->egress[1], allowed, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->egress[0], denied, memory_order_relaxed);
}

void gw_metrics_verdict(struct gw_metrics *m, int accepted)
{
    atomic_fetch_add_explicit(&m->verdicts[accepted ? 1 : 0], 1, memory_order_relaxed);
}

void gw_metrics_rule(struct gw_metrics *m, const char *rule)
{
    /* Slots are only appended, and a slot's name is written before the count
     * is published, so readers can scan [0, rule_count) without the lock. */
    size_t n = atomic_load(&m->rule_count);
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->rules[i].name, rule) == 0)
            return (void)atomic_fetch_add_explicit(&m->rules[i].count, 1, memory_order_relaxed);
    pthread_mutex_lock(&m->rules_lock);
    n = atomic_load(&m->rule_count);
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->rules[i].name, rule) == 0) {
            atomic_fetch_add_explicit(&m->rules[i].count, 1, memory_order_relaxed);
            goto out;
        }
    if (n < GW_METRICS_RULES_MAX && strlen(rule) < sizeof(m->rules[0].name)) {
        memcpy(m->rules[n].name, rule, strlen(rule) + 1);
        atomic_store(&m->rules[n].count, 1);
        atomic_store(&m->rule_count, n + 1);
    } else {
        atomic_fetch_add_explicit(&m->rule_other, 1, memory_order_relaxed);
    }
out:
    pthread_mutex_unlock(&m->rules_lock);
}

void gw_metrics_observe(struct gw_metrics *m, enum gw_hist h, uint64_t us)
{
    sg_histogram_observe_us(&m->hists[h], us);
}

static int render_hist(struct gw_metrics *m, enum gw_hist h, struct sg_buf *out)
{
    char name[64], help[128];
    snprintf(name, sizeof(name), "sandgate_%s_seconds", hist_names[h]);
    snprintf(help, sizeof(help), "%s.", hist_help[h]);
    return sg_histogram_render(&m->hists[h], name, help, out);
}

int gw_metrics_render(struct gw_metrics *m, struct sg_buf *out)
{
    int r = sg_buf_printf(out, "# HELP sandgate_requests_total Requests by endpoint and HTTP "
                               "status.\n# TYPE sandgate_requests_total counter\n");
    for (int ep = 0; r == 0 && ep < GW_EP_COUNT; ep++)
        for (size_t s = 0; r == 0 && s <= STATUS_COUNT; s++) {
            uint64_t v = atomic_load(&m->requests[ep][s]);
            if (!v)
                continue;
            char code[8];
            snprintf(code, sizeof(code), "%d", s < STATUS_COUNT ? status_codes[s] : 0);
            r = sg_buf_printf(out, "sandgate_requests_total{endpoint=\"%s\",status=\"%s\"} %llu\n",
                              ep_names[ep], s < STATUS_COUNT ? code : "other",
                              (unsigned long long)v);
        }
    if (r == 0)
        r = sg_buf_printf(out,
                          "# HELP sandgate_verdicts_total Analysis verdicts.\n"
                          "# TYPE sandgate_verdicts_total counter\n"
                          "sandgate_verdicts_total{verdict=\"accept\"} %llu\n"
                          "sandgate_verdicts_total{verdict=\"reject\"} %llu\n"
                          "# HELP sandgate_egress_decisions_total Egress proxy decisions on "
                          "networked jobs' connections (each host:port once per job).\n"
                          "# TYPE sandgate_egress_decisions_total counter\n"
                          "sandgate_egress_decisions_total{verdict=\"allowed\"} %llu\n"
                          "sandgate_egress_decisions_total{verdict=\"denied\"} %llu\n"
                          "# HELP sandgate_violations_total Violations by rule id.\n"
                          "# TYPE sandgate_violations_total counter\n",
                          (unsigned long long)atomic_load(&m->verdicts[1]),
                          (unsigned long long)atomic_load(&m->verdicts[0]),
                          (unsigned long long)atomic_load(&m->egress[1]),
                          (unsigned long long)atomic_load(&m->egress[0]));
    size_t n = atomic_load(&m->rule_count);
    for (size_t i = 0; r == 0 && i < n; i++)
        r = sg_buf_printf(out, "sandgate_violations_total{rule=\"%s\"} %llu\n", m->rules[i].name,
                          (unsigned long long)atomic_load(&m->rules[i].count));
    if (r == 0 && atomic_load(&m->rule_other))
        r = sg_buf_printf(out, "sandgate_violations_total{rule=\"other\"} %llu\n",
                          (unsigned long long)atomic_load(&m->rule_other));
    for (int h = 0; r == 0 && h < GW_HIST_COUNT; h++)
        r = render_hist(m, (enum gw_hist)h, out);
    return r;
}
