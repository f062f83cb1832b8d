/* The daemons' memory budget (common/membudget): all-or-nothing
 * reservations within the limit under threads, peaks and refusals counted,
 * the container's limit read from cgroup v2 and v1 files, and the choice
 * between a configured value, the container's share and the fallback. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "membudget.h"

Test(membudget, reserves_within_the_limit_all_or_nothing)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 100);
    cr_assert(sg_membudget_reserve(&b, 60));
    cr_assert_not(sg_membudget_reserve(&b, 41), "60 + 41 is past 100");
    cr_assert(sg_membudget_reserve(&b, 40), "the refusal reserved nothing");
    cr_assert_not(sg_membudget_reserve(&b, 1));
    cr_assert(sg_membudget_reserve(&b, 0), "nothing always fits");
    sg_membudget_release(&b, 60);
    cr_assert(sg_membudget_reserve(&b, 60), "a release makes room");
    struct sg_membudget_stats st;
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.used, 100);
    cr_assert_eq(st.peak, 100);
    cr_assert_eq(st.refused, 2);
    cr_assert_eq(st.limit, 100);
}

Test(membudget, no_limit_counts_and_null_is_harmless)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 0);
    cr_assert(sg_membudget_reserve(&b, SIZE_MAX / 2));
    cr_assert_not(sg_membudget_reserve(&b, SIZE_MAX / 2 + 2), "overflow is refused");
    sg_membudget_release(&b, SIZE_MAX / 2);
    cr_assert(sg_membudget_reserve(NULL, 5));
    sg_membudget_release(NULL, 5);
    struct sg_membudget_stats st;
    sg_membudget_get_stats(NULL, &st);
    cr_assert_eq(st.limit + st.used + st.peak + st.refused, 0);
}

#define THREADS 8
#define ROUNDS 20000

static void *hammer(void *arg)
{
    struct sg_membudget *b = arg;
    for (size_t i = 0; i < ROUNDS; i++) {
        size_t n = 1 + (i * 7919) % 300;
        if (sg_membudget_reserve(b, n))
            sg_membudget_release(b, n);
    }
    return NULL;
}

Test(membudget, threads_never_pass_the_limit)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 1000);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, hammer, &b), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    struct sg_membudget_stats st;
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.used, 0, "every reservation was released");
    cr_assert_leq(st.peak, 1000);
    cr_assert_gt(st.peak, 0);
}

Test(membudget, the_last_release_of_a_burst_trims)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 0);
    cr_assert(sg_membudget_reserve(&b, SG_MEMBUDGET_TRIM_AFTER));
    cr_assert(sg_membudget_reserve(&b, 10));
    sg_membudget_release(&b, SG_MEMBUDGET_TRIM_AFTER);
    struct sg_membudget_stats st;
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.trims, 0, "something is still reserved");
    sg_membudget_release(&b, 10);
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.trims, 1);
    cr_assert(sg_membudget_reserve(&b, 10));
    sg_membudget_release(&b, 10);
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.trims, 1, "a small burst does not trim again");
}

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[256], dir[256];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(dir, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void fresh_root(void)
{
    snprintf(root, sizeof(root), "/tmp/sg-membudget-XXXXXX");
    cr_assert(mkdtemp(root));
}

static void drop_root(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

static int limit_of(uint64_t *v)
{
    char self[128];
    snprintf(self, sizeof(self), "%s/self", root);
    return sg_membudget_cgroup_limit(root, self, v);
}

Test(membudget, reads_cgroup_v2_of_its_own_cgroup, .init = fresh_root, .fini = drop_root)
{
    uint64_t v = 1;
    put("self", "0::/\n");
    cr_assert_eq(limit_of(&v), -ENOENT, "no limit file at all");
    put("memory.max", "268435456\n");
    cr_assert_eq(limit_of(&v), 0);
    cr_assert_eq(v, 268435456u);
    put("self", "0::/a/b\n");
    put("a/b/memory.max", "max\n");
    cr_assert_eq(limit_of(&v), 0);
    cr_assert_eq(v, 0, "max is no limit");
    put("a/b/memory.max", "12ab\n");
    cr_assert_eq(limit_of(&v), -EINVAL);
    put("self", "0::/a/../../etc\n");
    cr_assert_eq(limit_of(&v), 0, "a path with .. is not followed: the root's file");
    cr_assert_eq(v, 268435456u);
}

Test(membudget, reads_cgroup_v1_at_the_mount_root, .init = fresh_root, .fini = drop_root)
{
    uint64_t v = 1;
    put("self", "4:memory:/docker/abc\n0::/\n");
    put("memory/memory.limit_in_bytes", "536870912\n");
    cr_assert_eq(limit_of(&v), 0);
    cr_assert_eq(v, 536870912u);
    put("memory/memory.limit_in_bytes", "9223372036854771712\n");
    cr_assert_eq(limit_of(&v), 0);
    cr_assert_eq(v, 0, "v1's huge value is no limit");
}

Test(membudget, chooses_config_then_container_then_fallback)
{
    uint64_t b = 0;
    const char *src = NULL;
    struct sg_error e = {0};
    cr_assert_eq(sg_membudget_choose(0, 256u << 20, 64u << 20, "k", &b, &src, &e), 0);
    cr_assert_eq(b, sg_membudget_for_limit(256u << 20));
    cr_assert_str_eq(src, "cgroup");
    cr_assert_eq(sg_membudget_choose(0, 0, 64u << 20, "k", &b, &src, &e), 0);
    cr_assert_eq(b, 64u << 20);
    cr_assert_str_eq(src, "default");
    cr_assert_eq(sg_membudget_choose(32u << 20, 256u << 20, 64u << 20, "k", &b, &src, &e), 0);
    cr_assert_eq(b, 32u << 20);
    cr_assert_str_eq(src, "config");
    cr_assert_eq(sg_membudget_choose(200u << 20, 256u << 20, 0, "mem_key", &b, &src, &e), -EINVAL);
    cr_assert(strstr(e.msg, "mem_key"), "%s", e.msg);
    cr_assert_eq(sg_membudget_choose(1024, 0, 0, "k", &b, &src, &e), -EINVAL, "below the minimum");
    cr_assert_eq(sg_membudget_choose(0, 4u << 20, 0, "k", &b, &src, &e), -EINVAL,
                 "a container too small for a budget");
    cr_assert_eq(sg_membudget_for_limit(512u << 20), 256u << 20, "exactly half");
    cr_assert_eq(sg_membudget_for_limit(UINT64_MAX), UINT64_MAX / 2, "no overflow");
}

/* The gateway's executor answers (gateway/core/gw_answer): reserved
 * GW_ANSWER_COPIES times over in steps beyond what the caller paid, refused
 * past the limit without appending, released when freed or handed over. */
#include "gw_answer.h"

#define STEP ((size_t)GW_ANSWER_STEP * GW_ANSWER_COPIES)

Test(gw_answer, reserves_in_steps_beyond_what_was_paid)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 10 * STEP);
    struct gw_answer a;
    gw_answer_init(&a, 1u << 30, &b, STEP); /* one step paid by the caller */
    static char chunk[GW_ANSWER_STEP / 2];
    memset(chunk, 'x', sizeof(chunk));
    cr_assert_eq(gw_answer_append(&a, chunk, sizeof(chunk)), 0);
    cr_assert_eq(gw_answer_append(&a, chunk, sizeof(chunk)), 0);
    cr_assert_eq(b.used, 0, "within what was paid");
    cr_assert_eq(gw_answer_append(&a, chunk, 1), 0);
    cr_assert_eq(b.used, STEP, "one byte over: one more step");
    int r;
    size_t len;
    do { /* each step reserved once, whole, until the limit */
        len = a.buf.len;
        r = gw_answer_append(&a, chunk, sizeof(chunk));
        size_t have = r == 0 ? a.buf.len : len;
        size_t want = (have * GW_ANSWER_COPIES - STEP + STEP - 1) / STEP * STEP;
        cr_assert_eq(b.used, want, "at %zu bytes", have);
        cr_assert_leq(b.used, 10 * STEP);
    } while (r == 0);
    cr_assert_eq(r, -EBUSY, "past the limit");
    cr_assert(a.refused);
    cr_assert_eq(a.buf.len, len, "nothing appended");
    cr_assert_gt((a.buf.len + sizeof(chunk)) * GW_ANSWER_COPIES - STEP, 10 * STEP - STEP,
                 "refused only when the next step did not fit");
    size_t n = 0, owed = 0;
    char *data = gw_answer_steal(&a, &n, &owed);
    cr_assert_eq(n, len);
    cr_assert_eq(owed, b.used);
    gw_answer_free(&a);
    cr_assert_eq(b.used, owed, "handed over: the new owner releases");
    sg_membudget_release(&b, owed);
    free(data);
    cr_assert_eq(b.used, 0);
}

Test(gw_answer, free_releases_and_no_budget_counts_nothing)
{
    struct sg_membudget b;
    sg_membudget_init(&b, 4 * STEP);
    struct gw_answer a;
    gw_answer_init(&a, 1u << 20, &b, 0);
    cr_assert_eq(gw_answer_append(&a, "abc", 3), 0);
    cr_assert_eq(b.used, STEP, "from the first byte when nothing was paid");
    gw_answer_free(&a);
    cr_assert_eq(b.used, 0);
    gw_answer_init(&a, 4, NULL, 0);
    cr_assert_eq(gw_answer_append(&a, "abcd", 4), 0);
    cr_assert_eq(gw_answer_append(&a, "e", 1), -E2BIG, "the cap still holds");
    gw_answer_free(&a);
}
