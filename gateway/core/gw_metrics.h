/* gw_metrics.h - the gateway's counters and histograms, rendered as
 * Prometheus text.
 *
 * Recording is lock-free (relaxed atomics) except for a rule id seen for the
 * first time, which takes a short mutex to claim a slot in a bounded table
 * (ids past GW_METRICS_RULES_MAX are counted under rule="other").
 */
#ifndef SG_GW_METRICS_H
#define SG_GW_METRICS_H

#include <stdint.h>

#include "buf.h"

#define GW_METRICS_RULES_MAX 64

enum gw_endpoint {
    GW_EP_RUN = 0,
    GW_EP_V1_RUN,
    GW_EP_V1_ANALYZE,
    GW_EP_HEALTHZ,
    GW_EP_READYZ,
    GW_EP_METRICS,
    GW_EP_POLICIES,
    GW_EP_WHOAMI,
    GW_EP_RUNTIMES,
    GW_EP_MCP,
    GW_EP_V1_CANCEL,
    GW_EP_SESSIONS,
    GW_EP_AUDIT,
    GW_EP_CONSOLE,
    GW_EP_DIFY,
    GW_EP_OTHER,
    GW_EP_COUNT
};

enum gw_hist { GW_HIST_ANALYSIS = 0, GW_HIST_EXEC, GW_HIST_TOTAL, GW_HIST_COUNT };

struct gw_metrics;

/* Caller frees with gw_metrics_free(); NULL on out of memory. */
struct gw_metrics *gw_metrics_new(void);

void gw_metrics_free(struct gw_metrics *m);

/* The endpoint label ("run", "v1_run", ...). */
const char *gw_endpoint_name(enum gw_endpoint ep);

void gw_metrics_request(struct gw_metrics *m, enum gw_endpoint ep, int status);

/* One analysis verdict (accepted or not). */
void gw_metrics_verdict(struct gw_metrics *m, int accepted);

/* A networked job's egress decisions (README, "Network"), by verdict. */
void gw_metrics_egress(struct gw_metrics *m, uint64_t allowed, uint64_t denied);

/* One violation of rule (a stable id). */
void gw_metrics_rule(struct gw_metrics *m, const char *rule);

/* Record a duration in microseconds in histogram h. Tenant names are never
 * labels (they stay out of metrics). */
void gw_metrics_observe(struct gw_metrics *m, enum gw_hist h, uint64_t us);

/* Append the Prometheus text for everything recorded here. */
int gw_metrics_render(struct gw_metrics *m, struct sg_buf *out);

#endif
