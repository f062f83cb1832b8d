/* membudget.c - see membudget.h. */
#include "membudget.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "readfile.h"

#define CGROUP_FILE_MAX 4096u /* /proc/self/cgroup and a limit file */
#define SELF_CGROUP "/proc/self/cgroup"

void sg_membudget_init(struct sg_membudget *b, size_t limit)
{
    b->limit = limit;
    atomic_init(&b->used, 0);
    atomic_init(&b->peak, 0);
    atomic_init(&b->since_trim, 0);
    atomic_init(&b->refused, 0);
    atomic_init(&b->trims, 0);
}

static void note_peak(struct sg_membudget *b, size_t now)
{
    size_t p = atomic_load(&b->peak);
    while (now > p && !atomic_compare_exchange_weak(&b->peak, &p, now))
        ;
}

bool sg_membudget_reserve(struct sg_membudget *b, size_t n)
{
    if (!b || n == 0)
        return true;
    size_t cur = atomic_load(&b->used);
    for (;;) {
        if (cur > SIZE_MAX - n || (b->limit && cur + n > b->limit)) {
            atomic_fetch_add(&b->refused, 1);
            return false;
        }
        if (atomic_compare_exchange_weak(&b->used, &cur, cur + n))
            break;
    }
    note_peak(b, cur + n);
    return true;
}

void sg_membudget_release(struct sg_membudget *b, size_t n)
{
    if (!b || n == 0)
        return;
    size_t before = atomic_fetch_sub(&b->used, n);
    size_t freed = atomic_fetch_add(&b->since_trim, n) + n;
    /* the last reservation of a burst: give the freed heap back */
    if (before == n && freed >= SG_MEMBUDGET_TRIM_AFTER &&
        atomic_compare_exchange_strong(&b->since_trim, &freed, 0)) {
        malloc_trim(0);
        atomic_fetch_add(&b->trims, 1);
    }
}

void sg_membudget_get_stats(const struct sg_membudget *b, struct sg_membudget_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!b)
        return;
    ret->limit = b->limit;
    ret->used = atomic_load(&b->used);
    ret->peak = atomic_load(&b->peak);
    ret->refused = atomic_load(&b->refused);
    ret->trims = atomic_load(&b->trims);
}

int sg_membudget_render(const struct sg_membudget *b, const char *prefix, struct sg_buf *out)
{
    struct sg_membudget_stats st;
    sg_membudget_get_stats(b, &st);
    return sg_buf_printf(
        out,
        "# HELP %1$s_memory_budget_bytes bytes request buffers may hold at once (0: no limit)\n"
        "# TYPE %1$s_memory_budget_bytes gauge\n%1$s_memory_budget_bytes %2$zu\n"
        "# HELP %1$s_memory_used_bytes bytes reserved by requests now\n"
        "# TYPE %1$s_memory_used_bytes gauge\n%1$s_memory_used_bytes %3$zu\n"
        "# HELP %1$s_memory_peak_bytes most bytes reserved at once since start\n"
        "# TYPE %1$s_memory_peak_bytes gauge\n%1$s_memory_peak_bytes %4$zu\n"
        "# HELP %1$s_memory_refused_total requests refused busy: the memory budget was full\n"
        "# TYPE %1$s_memory_refused_total counter\n%1$s_memory_refused_total %5$llu\n",
        prefix, st.limit, st.used, st.peak, (unsigned long long)st.refused);
}

/* A limit file's value: a number of bytes, or "max". */
static int read_limit(const char *path, uint64_t *ret)
{
    char *text = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(path, CGROUP_FILE_MAX, &text, &len, NULL);
    if (r < 0)
        return r == -E2BIG ? -EINVAL : -ENOENT;
    text[strcspn(text, "\n")] = '\0';
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (strcmp(text, "max") == 0)
        *ret = 0;
    else if (text[0] < '0' || text[0] > '9' || *end || errno)
        r = -EINVAL;
    else
        *ret = v >= SG_MEMBUDGET_UNLIMITED ? 0 : v;
    free(text);
    return r < 0 ? r : 0;
}

/* The "0::PATH" line of /proc/self/cgroup into out ("/" when none). */
static void v2_path(const char *self_cgroup, char *out, size_t cap)
{
    char *text = NULL;
    size_t len = 0;
    snprintf(out, cap, "/");
    if (sg_read_file_capped(self_cgroup ? self_cgroup : SELF_CGROUP, CGROUP_FILE_MAX, &text, &len,
                            NULL) < 0)
        return;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (strncmp(line, "0::", 3) == 0 && line[3] == '/' && !strstr(line, "..")) {
            snprintf(out, cap, "%s", line + 3);
            break;
        }
    }
    free(text);
}

int sg_membudget_cgroup_limit(const char *root, const char *self_cgroup, uint64_t *ret_bytes)
{
    char rel[PATH_MAX / 2], path[PATH_MAX];
    v2_path(self_cgroup, rel, sizeof(rel));
    snprintf(path, sizeof(path), "%s%s%smemory.max", root, rel,
             rel[strlen(rel) - 1] == '/' ? "" : "/");
    int r = read_limit(path, ret_bytes);
    if (r != -ENOENT)
        return r;
    snprintf(path, sizeof(path), "%s/memory/memory.limit_in_bytes", root);
    return read_limit(path, ret_bytes);
}

uint64_t sg_membudget_for_limit(uint64_t limit_bytes)
{
    return limit_bytes / 100 * SG_MEMBUDGET_SHARE_PCT +
           limit_bytes % 100 * SG_MEMBUDGET_SHARE_PCT / 100;
}

static int in_bounds(uint64_t v, const char *what, const char *source, struct sg_error *err)
{
    if (v >= SG_MEMBUDGET_MIN && v <= SG_MEMBUDGET_MAX)
        return 0;
    return sg_error_set(err, -EINVAL,
                        "%s: a memory budget of %" PRIu64 " bytes (%s) is outside %llu..%llu", what,
                        v, source, SG_MEMBUDGET_MIN, SG_MEMBUDGET_MAX);
}

int sg_membudget_choose(uint64_t configured, uint64_t cgroup_limit, uint64_t fallback,
                        const char *what, uint64_t *ret_budget, const char **ret_source,
                        struct sg_error *err)
{
    uint64_t allowed = cgroup_limit ? sg_membudget_for_limit(cgroup_limit) : 0;
    if (configured) {
        if (allowed && configured > allowed)
            return sg_error_set(err, -EINVAL,
                                "%s: %" PRIu64
                                " bytes exceed what the container's limit of %" PRIu64
                                " bytes allows (%" PRIu64 ", %u %%)",
                                what, configured, cgroup_limit, allowed, SG_MEMBUDGET_SHARE_PCT);
        *ret_source = "config";
        *ret_budget = configured;
    } else if (allowed) {
        *ret_source = "cgroup";
        *ret_budget = allowed;
    } else {
        *ret_source = "default";
        *ret_budget = fallback;
    }
    return in_bounds(*ret_budget, what, *ret_source, err);
}

void sg_membudget_tune_allocator(void)
{
    mallopt(M_ARENA_MAX, SG_MEMBUDGET_ARENAS);
    mallopt(M_MMAP_THRESHOLD, SG_MEMBUDGET_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, SG_MEMBUDGET_TRIM_THRESHOLD);
}
