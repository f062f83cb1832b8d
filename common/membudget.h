/* membudget.h - a daemon's memory budget for what grows with requests.
 *
 * Each daemon has one budget: the bytes that request bodies, decoded files,
 * job lines, output and answers may hold at once. Whoever is about to grow a
 * buffer for a request reserves the bytes first (sg_membudget_reserve) and
 * releases exactly what it reserved when the buffer is freed. A reservation
 * is all or nothing and never waits: past the limit the caller answers with
 * its busy answer (503 + Retry-After on the native API) and the daemon goes
 * on serving the others. Thread-safe (atomics only; no lock).
 *
 * The limit comes from the daemon's container (sg_membudget_cgroup_limit:
 * cgroup v2 memory.max, v1 memory.limit_in_bytes) through
 * sg_membudget_for_limit (a fixed share of it, the rest being the daemon's
 * own memory and the allocator's slack), or from a configured value when no
 * container limit applies.
 *
 * Returning memory: when the last reservation is released and at least
 * SG_MEMBUDGET_TRIM_AFTER bytes were released since the last trim, the
 * releasing thread calls malloc_trim(0), so the resident size falls back
 * after a burst. sg_membudget_tune_allocator() sets glibc's arena count and
 * fixed mmap/trim thresholds once at start for the same reason. */
#ifndef SG_MEMBUDGET_H
#define SG_MEMBUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

/* Bounds a configured or derived budget is validated against. */
#define SG_MEMBUDGET_MIN (4ull << 20)
#define SG_MEMBUDGET_MAX (1ull << 40)
/* The share of the container limit a budget takes: the rest is the daemon's
 * own memory (code, libraries, threads' stacks, tables) and the allocator's
 * slack. Percent. */
#define SG_MEMBUDGET_SHARE_PCT 50u
#define SG_MEMBUDGET_TRIM_AFTER (8u << 20)
/* A cgroup limit at or above this is "no limit" (v1 writes a huge number). */
#define SG_MEMBUDGET_UNLIMITED (1ull << 50)

struct sg_membudget {
    size_t limit; /* 0: accounting only, every reservation succeeds */
    atomic_size_t used;
    atomic_size_t peak;
    atomic_size_t since_trim; /* bytes released since the last trim */
    atomic_uint_fast64_t refused;
    atomic_uint_fast64_t trims;
};

struct sg_membudget_stats {
    size_t limit, used, peak;
    uint64_t refused, trims;
};

/* An empty budget of limit bytes (0: unlimited, still counted). */
void sg_membudget_init(struct sg_membudget *b, size_t limit);

/* Reserve n bytes: true when used + n stays within the limit (then the
 * caller owes one sg_membudget_release of n), false (nothing reserved, the
 * refusal counted) otherwise. n 0 always succeeds. b NULL: true. */
bool sg_membudget_reserve(struct sg_membudget *b, size_t n);

/* Give back n bytes reserved before. May call malloc_trim (see above). b NULL
 * is a no-op. */
void sg_membudget_release(struct sg_membudget *b, size_t n);

/* A snapshot for /metrics and /healthz; all 0 when b is NULL. */
void sg_membudget_get_stats(const struct sg_membudget *b, struct sg_membudget_stats *ret);

/* Prometheus lines PREFIX_memory_budget_bytes, _memory_used_bytes,
 * _memory_peak_bytes and _memory_refused_total (each with HELP and TYPE)
 * appended to out. Same returns as sg_buf_printf. */
struct sg_buf;
int sg_membudget_render(const struct sg_membudget *b, const char *prefix, struct sg_buf *out);

/* The memory limit of the cgroup this process runs in, read under root
 * (normally "/sys/fs/cgroup"): cgroup v2's memory.max of the process's own
 * cgroup (the "0::PATH" line of /proc/self/cgroup, "/" when unreadable), else
 * v1's memory/memory.limit_in_bytes at the mount's root (a container's own
 * cgroup). 0 and *ret_bytes set (0 = no limit: "max" or a huge value), or
 * -ENOENT when neither file exists, -EINVAL when a file does not hold a
 * number. self_cgroup: the /proc/self/cgroup to read (NULL = the real one). */
int sg_membudget_cgroup_limit(const char *root, const char *self_cgroup, uint64_t *ret_bytes);

/* The budget for a container limit: SG_MEMBUDGET_SHARE_PCT of it. */
uint64_t sg_membudget_for_limit(uint64_t limit_bytes);

/* The daemon's budget at start: configured (non-zero) must fit within what
 * the container's limit allows (sg_membudget_for_limit), when there is one;
 * not configured: derived from the container's limit, or fallback when none.
 * Either must lie within [SG_MEMBUDGET_MIN, SG_MEMBUDGET_MAX]. 0 or -EINVAL
 * with a message naming `what` (the key or flag). *ret_source says where the
 * value came from ("config", "cgroup", "default"; static). */
int sg_membudget_choose(uint64_t configured, uint64_t cgroup_limit, uint64_t fallback,
                        const char *what, uint64_t *ret_budget, const char **ret_source,
                        struct sg_error *err);

/* glibc: at most SG_MEMBUDGET_ARENAS malloc arenas, and fixed mmap and trim
 * thresholds (a large buffer is mapped and unmapped on free instead of the
 * heap keeping it after a burst). Call once at start, before threads. */
#define SG_MEMBUDGET_ARENAS 2
#define SG_MEMBUDGET_MMAP_THRESHOLD (128u * 1024u)
#define SG_MEMBUDGET_TRIM_THRESHOLD (1u << 20)
void sg_membudget_tune_allocator(void);

#endif
