/* The verdict cache (verdict_cache.h): hit and miss, what a hit returns,
 * keys that must differ (policy, language, source), eviction by count (LRU
 * order) and by bytes, the disabled cache, and concurrent use (ASan). */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "policy.h"
#include "rules.h"
#include "sha256.h"
#include "test_helpers.h"
#include "verdict_cache.h"

static void key_of(const struct sg_policy *p, enum sg_lang lang, const char *src, uint8_t *key)
{
    char sha[SG_SHA256_HEX_LEN + 1];
    sg_sha256_hex(src, strlen(src), sha);
    sg_vcache_key(p->sha256, lang, sha, key);
}

static void analyze(const struct sg_policy *p, enum sg_lang lang, const char *src,
                    struct sg_analysis *a)
{
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), a, &err), 0, "%s", err.msg);
}

/* Analyse src, store it, and return its key. */
static void put(struct sg_vcache *c, const struct sg_policy *p, enum sg_lang lang, const char *src,
                uint8_t *key)
{
    struct sg_analysis a;
    analyze(p, lang, src, &a);
    key_of(p, lang, src, key);
    cr_assert_eq(sg_vcache_put(c, key, &a), 0);
    sg_analysis_free(&a);
}

static int has(struct sg_vcache *c, const uint8_t *key)
{
    struct sg_analysis a;
    int r = sg_vcache_get(c, key, &a);
    cr_assert_geq(r, 0);
    if (r == 1)
        sg_analysis_free(&a);
    return r;
}

Test(vcache, hit_returns_the_stored_result)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_vcache *c = NULL;
    cr_assert_eq(sg_vcache_new(64, 1 << 20, &c), 0);
    static const char bad[] = "import os\nos.system('id')\neval('1')\n";
    uint8_t key[SG_VCACHE_KEY_LEN];
    struct sg_analysis cold, hot;
    analyze(p, SG_LANG_PYTHON, bad, &cold);
    key_of(p, SG_LANG_PYTHON, bad, key);
    cr_assert_eq(sg_vcache_get(c, key, &hot), 0, "empty cache must miss");
    cr_assert_eq(sg_vcache_put(c, key, &cold), 0);
    cr_assert_eq(sg_vcache_get(c, key, &hot), 1);
    cr_expect_eq(hot.accepted, 0);
    cr_assert_eq(hot.violations.count, cold.violations.count);
    cr_assert_gt(hot.violations.count, 1);
    for (size_t i = 0; i < hot.violations.count; i++) {
        const struct sg_violation *h = &hot.violations.items[i], *k = &cold.violations.items[i];
        cr_expect_str_eq(h->rule, k->rule);
        cr_expect_str_eq(h->message, k->message);
        cr_expect_str_eq(h->snippet, k->snippet);
        cr_expect_eq(h->line, k->line);
        cr_expect_eq(h->column, k->column);
        cr_expect_eq(h->end_column, k->end_column);
        cr_expect_neq(h->message, k->message, "a copy, not the caller's string");
    }
    cr_expect_eq(hot.stats.nodes, cold.stats.nodes);
    cr_expect_eq(hot.stats.source_bytes, strlen(bad));
    cr_expect_eq(hot.stats.parse_us, 0, "nothing was parsed for a hit");
    sg_analysis_free(&hot);
    sg_analysis_free(&cold);
    struct sg_vcache_stats st;
    sg_vcache_get_stats(c, &st);
    cr_expect_eq(st.hits, 1);
    cr_expect_eq(st.misses, 1);
    cr_expect_eq(st.insertions, 1);
    cr_expect_eq(st.entries, 1);
    cr_expect_gt(st.bytes, 0);
    sg_vcache_free(c);
    sg_policy_free(p);
}

Test(vcache, policy_language_and_source_are_in_the_key)
{
    struct sg_policy *def = test_load_policy("default"), *strict = test_load_policy("strict");
    struct sg_vcache *c = NULL;
    cr_assert_eq(sg_vcache_new(64, 1 << 20, &c), 0);
    uint8_t key[SG_VCACHE_KEY_LEN], other[SG_VCACHE_KEY_LEN];
    put(c, def, SG_LANG_PYTHON, "import json\n", key);
    cr_expect_eq(has(c, key), 1);
    key_of(strict, SG_LANG_PYTHON, "import json\n", other);
    cr_expect_eq(has(c, other), 0, "another policy (a reload: new sha256) must miss");
    key_of(def, SG_LANG_JAVASCRIPT, "import json\n", other);
    cr_expect_eq(has(c, other), 0, "another language must miss");
    key_of(def, SG_LANG_PYTHON, "import json \n", other);
    cr_expect_eq(has(c, other), 0, "another source must miss");
    sg_vcache_free(c);
    sg_policy_free(def);
    sg_policy_free(strict);
}

Test(vcache, evicts_least_recently_used_by_count)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_vcache *c = NULL;
    cr_assert_eq(sg_vcache_new(3, 1 << 20, &c), 0);
    uint8_t k[4][SG_VCACHE_KEY_LEN];
    put(c, p, SG_LANG_PYTHON, "a = 1\n", k[0]);
    put(c, p, SG_LANG_PYTHON, "b = 1\n", k[1]);
    put(c, p, SG_LANG_PYTHON, "c = 1\n", k[2]);
    cr_assert_eq(has(c, k[0]), 1); /* a is now the most recent; b the least */
    put(c, p, SG_LANG_PYTHON, "d = 1\n", k[3]);
    cr_expect_eq(has(c, k[1]), 0, "the least recently used entry goes first");
    cr_expect_eq(has(c, k[0]), 1);
    cr_expect_eq(has(c, k[2]), 1);
    cr_expect_eq(has(c, k[3]), 1);
    struct sg_vcache_stats st;
    sg_vcache_get_stats(c, &st);
    cr_expect_eq(st.entries, 3);
    cr_expect_eq(st.evictions, 1);
    sg_vcache_free(c);
    sg_policy_free(p);
}

Test(vcache, evicts_by_bytes_and_skips_oversized_entries)
{
    struct sg_policy *p = test_load_policy("default");
    uint8_t small[SG_VCACHE_KEY_LEN], big[SG_VCACHE_KEY_LEN];
    /* measure one accepted entry and one entry with many violations */
    struct sg_vcache *c = NULL;
    cr_assert_eq(sg_vcache_new(8, 1 << 20, &c), 0);
    put(c, p, SG_LANG_PYTHON, "a = 1\n", small);
    struct sg_vcache_stats st;
    sg_vcache_get_stats(c, &st);
    size_t one = st.bytes;
    /* enough violations to outweigh three small entries (each carries its
     * fixed stats, import list included) */
    static const char many[] = "eval(1)\neval(2)\neval(3)\neval(4)\neval(5)\neval(6)\n"
                               "eval(7)\neval(8)\neval(9)\neval(10)\neval(11)\neval(12)\n"
                               "eval(13)\neval(14)\neval(15)\neval(16)\neval(17)\neval(18)\n";
    put(c, p, SG_LANG_PYTHON, many, big);
    sg_vcache_get_stats(c, &st);
    size_t heavy = st.bytes - one;
    cr_assert_gt(heavy, one);
    sg_vcache_free(c);

    /* room for three small entries: the fourth pushes out the first */
    cr_assert_eq(sg_vcache_new(8, 3 * one, &c), 0);
    uint8_t k[4][SG_VCACHE_KEY_LEN];
    put(c, p, SG_LANG_PYTHON, "a = 1\n", k[0]);
    put(c, p, SG_LANG_PYTHON, "b = 1\n", k[1]);
    put(c, p, SG_LANG_PYTHON, "c = 1\n", k[2]);
    put(c, p, SG_LANG_PYTHON, "d = 1\n", k[3]);
    cr_expect_eq(has(c, k[0]), 0);
    cr_expect_eq(has(c, k[3]), 1);
    sg_vcache_get_stats(c, &st);
    cr_expect_leq(st.bytes, 3 * one);
    /* an entry larger than the whole cache is not stored and evicts nothing */
    put(c, p, SG_LANG_PYTHON, many, big);
    cr_expect_eq(has(c, big), 0);
    cr_expect_eq(has(c, k[3]), 1);
    sg_vcache_free(c);
    sg_policy_free(p);
}

Test(vcache, disabled_and_invalid_caps)
{
    struct sg_vcache *c = (struct sg_vcache *)1;
    cr_assert_eq(sg_vcache_new(0, 1 << 20, &c), 0);
    cr_assert_null(c);
    struct sg_policy *p = test_load_policy("default");
    uint8_t key[SG_VCACHE_KEY_LEN];
    put(c, p, SG_LANG_PYTHON, "a = 1\n", key); /* NULL cache: stores nothing */
    cr_expect_eq(has(c, key), 0);
    struct sg_vcache_stats st;
    sg_vcache_get_stats(c, &st);
    cr_expect_eq(st.hits + st.misses + st.entries, 0);
    sg_vcache_free(NULL);
    cr_expect_eq(sg_vcache_new(SG_VCACHE_ENTRIES_MAX + 1, 1 << 20, &c), -EINVAL);
    cr_expect_eq(sg_vcache_new(4, 0, &c), -EINVAL);
    sg_policy_free(p);
}

/* Many threads hitting, missing, inserting and evicting in one small
 * sharded cache: every hit must equal a fresh analysis of the same source. */
#define VC_THREADS 8
#define VC_ROUNDS 300
#define VC_SOURCES 200

struct vc_run {
    struct sg_vcache *c;
    const struct sg_policy *p;
    unsigned seed;
    size_t hits;
};

static void *vc_worker(void *arg)
{
    struct vc_run *w = arg;
    for (int i = 0; i < VC_ROUNDS; i++) {
        char src[64];
        unsigned n = (w->seed = w->seed * 1103515245u + 12345u) >> 16;
        snprintf(src, sizeof(src), n % 3 ? "x%u = %u\n" : "eval(%u)\n# %u\n", n % VC_SOURCES,
                 n % VC_SOURCES);
        uint8_t key[SG_VCACHE_KEY_LEN];
        key_of(w->p, SG_LANG_PYTHON, src, key);
        struct sg_analysis got, want;
        int r = sg_vcache_get(w->c, key, &got);
        analyze(w->p, SG_LANG_PYTHON, src, &want);
        if (r == 1) {
            w->hits++;
            cr_assert_eq(got.accepted, want.accepted, "%s", src);
            cr_assert_eq(got.violations.count, want.violations.count, "%s", src);
            sg_analysis_free(&got);
        } else {
            cr_assert_eq(sg_vcache_put(w->c, key, &want), 0);
        }
        sg_analysis_free(&want);
    }
    return NULL;
}

Test(vcache, concurrent_use)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_vcache *c = NULL;
    /* sharded (>= 16 * 8 entries) but smaller than the working set of both
     * kinds of sources, so entries are evicted while others read them */
    cr_assert_eq(sg_vcache_new(SG_VCACHE_SHARDS * SG_VCACHE_MIN_PER_SHARD, 1 << 20, &c), 0);
    pthread_t th[VC_THREADS];
    struct vc_run runs[VC_THREADS];
    for (int i = 0; i < VC_THREADS; i++) {
        runs[i] = (struct vc_run){.c = c, .p = p, .seed = (unsigned)i * 7919u + 1};
        cr_assert_eq(pthread_create(&th[i], NULL, vc_worker, &runs[i]), 0);
    }
    size_t hits = 0;
    for (int i = 0; i < VC_THREADS; i++) {
        pthread_join(th[i], NULL);
        hits += runs[i].hits;
    }
    struct sg_vcache_stats st;
    sg_vcache_get_stats(c, &st);
    cr_expect_eq(st.hits, hits);
    cr_expect_eq(st.hits + st.misses, (uint64_t)VC_THREADS * VC_ROUNDS);
    cr_expect_gt(st.hits, 0);
    cr_expect_leq(st.entries, SG_VCACHE_SHARDS * SG_VCACHE_MIN_PER_SHARD);
    sg_vcache_free(c);
    sg_policy_free(p);
}
