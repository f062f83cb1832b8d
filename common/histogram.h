/* histogram.h - a lock-free latency histogram in Prometheus form.
 *
 * Both daemons export latency histograms; observations come from request
 * threads, so counting is a few relaxed atomic adds and never takes a lock.
 * Bounds are microseconds (rendered in seconds, as Prometheus expects); an
 * observation lands in the first bucket whose bound is >= the value.
 */
#ifndef SG_HISTOGRAM_H
#define SG_HISTOGRAM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SG_HISTOGRAM_MAX_BUCKETS 24

struct sg_histogram {
    const uint64_t *bounds_us; /* borrowed, ascending; static arrays in practice */
    size_t n;                  /* at most SG_HISTOGRAM_MAX_BUCKETS */
    atomic_uint_fast64_t buckets[SG_HISTOGRAM_MAX_BUCKETS + 1]; /* per bucket; last = +Inf */
    atomic_uint_fast64_t sum_us;
    atomic_uint_fast64_t count;
};

/* Set the bounds (n is capped at SG_HISTOGRAM_MAX_BUCKETS) and zero the counts. */
void sg_histogram_init(struct sg_histogram *h, const uint64_t *bounds_us, size_t n);

void sg_histogram_observe_us(struct sg_histogram *h, uint64_t us);

/* Append "# HELP/# TYPE", the cumulative _bucket lines, _sum (seconds) and
 * _count for metric `name`. Returns 0 or the sg_buf_printf error. */
int sg_histogram_render(const struct sg_histogram *h, const char *name, const char *help,
                        struct sg_buf *out);

#endif
