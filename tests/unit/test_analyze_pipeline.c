/* The pipeline with the language analyzers linked: verdicts under the
 * shipped policies, stats, and thread safety. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"

static struct sg_policy_set *set;

static void load_set(void)
{
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir("policies", &set, &err), 0, "%s", err.msg);
}

static void free_set(void)
{
    sg_policy_set_free(set);
}

static const struct sg_policy *pol(const char *name)
{
    const struct sg_policy *p = sg_policy_set_find(set, name);
    cr_assert_not_null(p, "policy %s", name);
    return p;
}

struct sample {
    enum sg_lang lang;
    const char *policy, *src, *rule; /* rule NULL: accepted */
};

static const struct sample samples[] = {
    {SG_LANG_PYTHON, "default", "import json\n\ndef main(x=1):\n    return json.dumps({'x': x})\n",
     NULL},
    {SG_LANG_PYTHON, "default", "# ok\r\nimport json\r\n", NULL},
    {SG_LANG_PYTHON, "default", "import os\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {SG_LANG_PYTHON, "default", "x = eval('1')\n", SG_RULE_NAME_FORBIDDEN},
    {SG_LANG_PYTHON, "default", "def f(:\n", SG_RULE_SYNTAX_ERROR},
    {SG_LANG_PYTHON, "strict", "f = open('x')\n", SG_RULE_NAME_FORBIDDEN},
    {SG_LANG_PYTHON, "permissive", "import subprocess\n", SG_RULE_IMPORT_DENIED},
    {SG_LANG_PYTHON, "permissive", "import sqlite3\n", NULL},
    {SG_LANG_JAVASCRIPT, "default",
     "const path = require('path');\nfunction main(a) { return path.join('a', 'b'); "
     "}\nmodule.exports = { main };\n",
     NULL},
    {SG_LANG_JAVASCRIPT, "default", "const cp = require('child_process');\n",
     SG_RULE_IMPORT_NOT_ALLOWED},
    {SG_LANG_JAVASCRIPT, "default", "eval('1');\n", SG_RULE_NAME_FORBIDDEN},
    {SG_LANG_JAVASCRIPT, "default", "function (\n", SG_RULE_SYNTAX_ERROR},
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

/* Returns 1 when the analysis matched the sample's expectation. */
static int run_sample(const struct sample *s, int verbose)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    if (sg_analyze(pol(s->policy), s->lang, s->src, strlen(s->src), &a, &err) < 0) {
        if (verbose)
            cr_log_error("%s: %s", s->src, err.msg);
        return 0;
    }
    int ok = s->rule ? (!a.accepted && a.violations.count > 0 &&
                        strcmp(a.violations.items[0].rule, s->rule) == 0)
                     : (a.accepted && a.violations.count == 0);
    if (!ok && verbose)
        cr_log_error("%s under %s: accepted=%d first=%s", s->src, s->policy, a.accepted,
                     a.violations.count ? a.violations.items[0].rule : "-");
    sg_analysis_free(&a);
    return ok;
}

Test(pipeline, verdicts_under_shipped_policies, .init = load_set, .fini = free_set)
{
    for (size_t i = 0; i < NSAMPLES; i++)
        cr_expect(run_sample(&samples[i], 1), "sample %zu", i);
}

Test(pipeline, stats_are_filled, .init = load_set, .fini = free_set)
{
    struct sg_analysis a;
    const char *src = samples[0].src;
    cr_assert_eq(sg_analyze(pol("default"), SG_LANG_PYTHON, src, strlen(src), &a, NULL), 0);
    cr_assert_eq(a.accepted, 1);
    cr_assert_eq(a.stats.source_bytes, strlen(src));
    cr_assert_gt(a.stats.nodes, 10);
    cr_assert_gt(a.stats.max_depth, 2);
    sg_analysis_free(&a);
}

static void *hammer(void *arg)
{
    size_t bad = 0;
    for (int round = 0; round < 50; round++)
        for (size_t i = 0; i < NSAMPLES; i++)
            bad += !run_sample(&samples[(i + (size_t)(uintptr_t)arg) % NSAMPLES], 0);
    return (void *)(uintptr_t)bad;
}

Test(pipeline, concurrent_analyses_agree, .init = load_set, .fini = free_set)
{
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hammer, (void *)i), 0);
    for (int i = 0; i < 4; i++) {
        void *bad;
        pthread_join(th[i], &bad);
        cr_assert_eq((uintptr_t)bad, 0, "thread %d saw %zu wrong verdicts", i,
                     (size_t)(uintptr_t)bad);
    }
}
