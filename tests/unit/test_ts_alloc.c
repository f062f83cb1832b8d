/* tree-sitter's budgeted allocator (ts_alloc.h): error-recovery blow-ups
 * end as a violation within the memory budget instead of taking gigabytes
 * (or exit()ing the process), the thread's parsers come back afterwards,
 * no block leaks, and the budget runs are independent per thread. These
 * tests run under ASan, which would report a use of a freed block. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "sg_time.h"
#include "test_helpers.h"
#include "ts_alloc.h"
#include "ts_util.h"

static void analyze(const struct sg_policy *p, enum sg_lang lang, const char *src,
                    struct sg_analysis *a)
{
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), a, &err), 0, "%s", err.msg);
}

/* 3 KB of `/ * x` (no blanks): without the budget, 0.5 GB and 2 s after
 * the last byte is read. */
#define BLOWUP_UNIT "/*x"
#define BLOWUP_COUNT 1000

Test(ts_alloc, error_recovery_blowup_is_a_violation)
{
    struct sg_policy *p = test_load_policy("default");
    char *src = test_repeat("", BLOWUP_UNIT, BLOWUP_COUNT, NULL);
    struct sg_analysis a;
    uint64_t t0 = sg_time_mono_us();
    analyze(p, SG_LANG_PYTHON, src, &a);
    uint64_t took = sg_time_mono_us() - t0;
    cr_assert_eq(a.accepted, 0);
    cr_assert_eq(a.violations.count, 1);
    cr_expect_str_eq(a.violations.items[0].rule, SG_RULE_SYNTAX_ERROR);
    cr_expect(strstr(a.violations.items[0].message, "MiB of memory"), "%s",
              a.violations.items[0].message);
    cr_expect_lt(took, SG_TS_PARSE_TIMEOUT_US, "stopped by the budget, not the clock");
    sg_analysis_free(&a);
    /* the thread's parsers were dropped with the abandoned parse: both
     * languages still work, and the same verdicts come out */
    analyze(p, SG_LANG_PYTHON, "import json\nx = json.dumps({})\n", &a);
    cr_expect_eq(a.accepted, 1);
    sg_analysis_free(&a);
    analyze(p, SG_LANG_JAVASCRIPT, "const x = JSON.stringify({});\n", &a);
    cr_expect_eq(a.accepted, 1);
    sg_analysis_free(&a);
    analyze(p, SG_LANG_PYTHON, "import os\n", &a);
    cr_expect_str_eq(a.violations.items[0].rule, SG_RULE_IMPORT_NOT_ALLOWED);
    sg_analysis_free(&a);
    free(src);
    sg_policy_free(p);
}

Test(ts_alloc, analyses_leave_no_tree_sitter_memory_behind)
{
    struct sg_policy *p = test_load_policy("default");
    static const char code[] = "def f(a):\n    return [x * 2 for x in a]\n";
    struct sg_analysis a;
    /* the first analysis creates this thread's parser (and grows the
     * scanner's indentation stack, which the parser keeps) */
    analyze(p, SG_LANG_PYTHON, code, &a);
    sg_analysis_free(&a);
    size_t base = sg_ts_alloc_live();
    cr_assert_gt(base, 0, "the cached parser's blocks are tracked");
    for (int i = 0; i < 20; i++) {
        analyze(p, SG_LANG_PYTHON, code, &a);
        sg_analysis_free(&a);
    }
    cr_expect_eq(sg_ts_alloc_live(), base);
    char *src = test_repeat("", BLOWUP_UNIT, BLOWUP_COUNT, NULL);
    analyze(p, SG_LANG_PYTHON, src, &a);
    sg_analysis_free(&a);
    cr_expect_eq(sg_ts_alloc_live(), 0, "an abandoned parse frees every block of the thread");
    free(src);
    sg_policy_free(p);
}

Test(ts_alloc, parsers_release_frees_every_block_and_parsing_goes_on)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_analysis a;
    analyze(p, SG_LANG_PYTHON, "def f(a):\n    return [x * 2 for x in a]\n", &a);
    sg_analysis_free(&a);
    analyze(p, SG_LANG_JAVASCRIPT, "const f = (a) => a.map((x) => x * 2);\n", &a);
    sg_analysis_free(&a);
    cr_assert_gt(sg_ts_alloc_live(), 0, "both cached parsers hold blocks");
    sg_ts_parsers_release();
    cr_expect_eq(sg_ts_alloc_live(), 0, "the parsers and their pools are gone");
    sg_ts_parsers_release(); /* nothing cached: a no-op */
    analyze(p, SG_LANG_PYTHON, "import os\n", &a);
    cr_expect_str_eq(a.violations.items[0].rule, SG_RULE_IMPORT_NOT_ALLOWED);
    sg_analysis_free(&a);
    analyze(p, SG_LANG_JAVASCRIPT, "const x = JSON.stringify({});\n", &a);
    cr_expect_eq(a.accepted, 1);
    sg_analysis_free(&a);
    sg_ts_parsers_release();
    cr_expect_eq(sg_ts_alloc_live(), 0);
    sg_policy_free(p);
}

struct blowup_run {
    const struct sg_policy *p;
    int bad; /* 1: the blow-up input, 0: ordinary code */
    int ok;
};

static void *blowup_thread(void *arg)
{
    struct blowup_run *r = arg;
    char *src = r->bad ? test_repeat("", BLOWUP_UNIT, BLOWUP_COUNT, NULL)
                       : test_repeat("import math\n", "y = math.sqrt(2) * 3\n", 200, NULL);
    r->ok = 1;
    for (int i = 0; i < 5; i++) {
        struct sg_analysis a;
        struct sg_error err = {0};
        if (sg_analyze(r->p, SG_LANG_PYTHON, src, strlen(src), &a, &err) < 0 ||
            a.accepted == r->bad)
            r->ok = 0;
        sg_analysis_free(&a);
    }
    free(src);
    return NULL;
}

/* An abandoned parse frees only its own thread's blocks. */
Test(ts_alloc, threads_are_independent)
{
    struct sg_policy *p = test_load_policy("default");
    pthread_t th[4];
    struct blowup_run runs[4];
    for (int i = 0; i < 4; i++) {
        runs[i] = (struct blowup_run){.p = p, .bad = i % 2};
        cr_assert_eq(pthread_create(&th[i], NULL, blowup_thread, &runs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_expect(runs[i].ok, "thread %d (%s input)", i, runs[i].bad ? "blow-up" : "ordinary");
    }
    sg_policy_free(p);
}
