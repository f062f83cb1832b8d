#include "histogram.h"

void sg_histogram_init(struct sg_histogram *h, const uint64_t *bounds_us, size_t n)
{
    h->bounds_us = bounds_us;
    h->n = n < SG_HISTOGRAM_MAX_BUCKETS ? n : SG_HISTOGRAM_MAX_BUCKETS;
    for (size_t b = 0; b <= SG_HISTOGRAM_MAX_BUCKETS; b++)
        atomic_init(&h->buckets[b], 0);
    atomic_init(&h->sum_us, 0);
    atomic_init(&h->count, 0);
}

void sg_histogram_observe_us(struct sg_histogram *h, uint64_t us)
{
    size_t b = 0;
    while (b < h->n && us > h->bounds_us[b])
        b++;
    atomic_fetch_add_explicit(&h->buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

int sg_histogram_render(const struct sg_histogram *h, const char *name, const char *help,
                        struct sg_buf *out)
{
    int r = sg_buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (size_t b = 0; r == 0 && b <= h->n; b++) {
        cum += atomic_load(&h->buckets[b]);
        if (b < h->n)
            r = sg_buf_printf(out, "%s_bucket{le=\"%g\"} %llu\n", name,
                              (double)h->bounds_us[b] / 1e6, (unsigned long long)cum);
        else
            r = sg_buf_printf(out, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)cum);
    }
    if (r == 0)
        r = sg_buf_printf(out, "%s_sum %.6f\n%s_count %llu\n", name,
                          (double)atomic_load(&h->sum_us) / 1e6, name,
                          (unsigned long long)atomic_load(&h->count));
    return r;
}
