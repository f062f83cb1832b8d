/* bench_analyze - time sg_analyze on one source file.
 *
 *   bench_analyze POLICY.json LANG FILE RUNS [analyze|parse]
 *
 * analyze (the default) runs the full, cold analysis (canonicalise, parse,
 * evaluate; no verdict cache is involved) RUNS times after one warm-up run
 * and prints one key=value line:
 *   bytes=N runs=N verdict=accept|reject violations=N
 *   median_us=.. p50_us=.. p99_us=.. min_us=.. parse_median_us=..
 *   eval_median_us=.. mbps=..
 * parse times tree-sitter's bare parse of the same bytes (a fresh tree and
 * its deletion, no guard, no walk): the floor under any analysis. It runs
 * only after an analysis accepted the file, since an unguarded parse of
 * arbitrary input can overflow tree-sitter (ts_bound.h); it prints
 * bytes=N runs=N median_us=.. p50_us=.. p99_us=.. min_us=.. mbps=..
 * mbps is bytes / median time (MB = 10^6 bytes). Exits 1 when it cannot
 * measure (bad arguments, policy, file, or an analysis error). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "analyze.h"
#include "policy.h"
#include "readfile.h"
#include "sg_time.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_javascript(void);

#define BENCH_RUNS_MAX 1000000
#define BENCH_FILE_MAX (16u * 1024u * 1024u)

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t percentile(const uint64_t *sorted, size_t n, double p)
{
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

/* One timed analysis; *ret_t gets {total, parse, eval} in microseconds. */
static int analyze_once(const struct sg_policy *pol, enum sg_lang lang, const char *src, size_t len,
                        uint64_t ret_t[3], struct sg_analysis *keep)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    uint64_t t0 = sg_time_mono_us();
    int r = sg_analyze(pol, lang, src, len, &a, &err);
    ret_t[0] = sg_time_mono_us() - t0;
    if (r < 0) {
        fprintf(stderr, "bench_analyze: analysis failed: %s\n", err.msg);
        return r;
    }
    ret_t[1] = a.stats.parse_us;
    ret_t[2] = a.stats.eval_us;
    if (keep)
        *keep = a;
    else
        sg_analysis_free(&a);
    return 0;
}

static void report(const struct sg_analysis *first, size_t len, size_t runs, uint64_t *t[3])
{
    for (int k = 0; k < 3; k++)
        qsort(t[k], runs, sizeof(uint64_t), cmp_u64);
    uint64_t med = percentile(t[0], runs, 0.5);
    printf("bytes=%zu runs=%zu verdict=%s violations=%zu median_us=%llu p50_us=%llu "
           "p99_us=%llu min_us=%llu parse_median_us=%llu eval_median_us=%llu mbps=%.1f\n",
           len, runs, first->accepted ? "accept" : "reject",
           first->violations.count + first->violations.dropped, (unsigned long long)med,
           (unsigned long long)med, (unsigned long long)percentile(t[0], runs, 0.99),
           (unsigned long long)t[0][0], (unsigned long long)percentile(t[1], runs, 0.5),
           (unsigned long long)percentile(t[2], runs, 0.5), med ? (double)len / (double)med : 0.0);
    for (size_t i = 0; i < first->violations.count && i < 5; i++)
        fprintf(stderr, "bench_analyze: violation %u:%u %s %s\n", first->violations.items[i].line,
                first->violations.items[i].column, first->violations.items[i].rule,
                first->violations.items[i].message);
}

static int bench(const struct sg_policy *pol, enum sg_lang lang, const char *src, size_t len,
                 size_t runs)
{
    uint64_t *t[3] = {calloc(runs, sizeof(uint64_t)), calloc(runs, sizeof(uint64_t)),
                      calloc(runs, sizeof(uint64_t))};
    uint64_t one[3];
    struct sg_analysis first = {0};
    int r = t[0] && t[1] && t[2] ? analyze_once(pol, lang, src, len, one, &first) : -ENOMEM;
    for (size_t i = 0; i < runs && r == 0; i++) {
        r = analyze_once(pol, lang, src, len, one, NULL);
        for (int k = 0; k < 3; k++)
            t[k][i] = one[k];
    }
    if (r == 0)
        report(&first, len, runs, t);
    sg_analysis_free(&first);
    for (int k = 0; k < 3; k++)
        free(t[k]);
    return r;
}

/* The bare parse, after one guarded analysis accepted the same bytes. */
static int bench_parse(const struct sg_policy *pol, enum sg_lang lang, const char *src, size_t len,
                       size_t runs)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    if (sg_analyze(pol, lang, src, len, &a, &err) < 0 || !a.accepted) {
        fprintf(stderr, "bench_analyze: parse mode needs a file the policy accepts\n");
        sg_analysis_free(&a);
        return -EINVAL;
    }
    sg_analysis_free(&a);
    TSParser *p = ts_parser_new();
    uint64_t *t = calloc(runs, sizeof(uint64_t));
    if (!p || !t ||
        !ts_parser_set_language(p, lang == SG_LANG_PYTHON ? tree_sitter_python()
                                                          : tree_sitter_javascript())) {
        free(t);
        if (p)
            ts_parser_delete(p);
        return -ENOMEM;
    }
    for (size_t i = 0; i <= runs; i++) { /* run 0 warms up */
        uint64_t t0 = sg_time_mono_us();
        ts_tree_delete(ts_parser_parse_string(p, NULL, src, (uint32_t)len));
        if (i > 0)
            t[i - 1] = sg_time_mono_us() - t0;
    }
    qsort(t, runs, sizeof(uint64_t), cmp_u64);
    uint64_t med = percentile(t, runs, 0.5);
    printf("bytes=%zu runs=%zu median_us=%llu p50_us=%llu p99_us=%llu min_us=%llu mbps=%.1f\n", len,
           runs, (unsigned long long)med, (unsigned long long)med,
           (unsigned long long)percentile(t, runs, 0.99), (unsigned long long)t[0],
           med ? (double)len / (double)med : 0.0);
    free(t);
    ts_parser_delete(p);
    return 0;
}

int main(int argc, char **argv)
{
    int parse_only = argc == 6 && strcmp(argv[5], "parse") == 0;
    if ((argc != 5 && argc != 6) || (argc == 6 && !parse_only && strcmp(argv[5], "analyze"))) {
        fprintf(stderr, "usage: bench_analyze POLICY.json python|javascript FILE RUNS "
                        "[analyze|parse]\n");
        return 1;
    }
    enum sg_lang lang;
    char *end;
    unsigned long runs = strtoul(argv[4], &end, 10);
    if (sg_lang_from_name(argv[2], &lang) < 0 || *end || runs == 0 || runs > BENCH_RUNS_MAX) {
        fprintf(stderr, "bench_analyze: bad language or run count\n");
        return 1;
    }
    struct sg_error err = {0};
    struct sg_policy *pol = NULL;
    char *src = NULL;
    size_t len = 0;
    int r = sg_policy_load_file(argv[1], &pol, &err);
    if (r == 0)
        r = sg_read_file_capped(argv[3], BENCH_FILE_MAX, &src, &len, &err);
    if (r < 0)
        fprintf(stderr, "bench_analyze: %s\n", err.msg);
    else if (len > UINT32_MAX)
        r = -E2BIG;
    else
        r = parse_only ? bench_parse(pol, lang, src, len, runs) : bench(pol, lang, src, len, runs);
    free(src);
    sg_policy_free(pol);
    return r < 0 ? 1 : 0;
}
