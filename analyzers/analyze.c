/* analyze.c - the analysis pipeline: size limit, language switch,
 * canonicalisation, then the language checker (parse + policy), found in the
 * language table below. */
#include "analyze.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "javascript.h"
#include "lang.h"
#include "python.h"
#include "rules.h"
#include "sg_time.h"

/* The languages plug in here: one row per analyzer (lang.h, the contract). */
static const struct sg_lang_checker checkers[] = {
    {SG_LANG_PYTHON, "python", sg_python_check},
    {SG_LANG_JAVASCRIPT, "javascript", sg_javascript_check},
};

/* The row for lang, or NULL when no analyzer handles it. */
static const struct sg_lang_checker *checker_for(enum sg_lang lang)
{
    for (size_t i = 0; i < sizeof(checkers) / sizeof(checkers[0]); i++)
        if (checkers[i].lang == lang)
            return &checkers[i];
    return NULL;
}

/* Gate checks that need no parse: size, then the language switch. Returns
 * 1 when a violation was added (stop), 0 to go on, negative on failure. */
static int check_gates(const struct sg_lang_policy *lp, enum sg_lang lang, const char *src,
                       size_t len, struct sg_violations *vs)
{
    int r;
    if (len > lp->max_source_bytes) {
        /* position 1:1 with an empty span: the whole file is the problem */
        r = sg_violations_add_at(vs, SG_RULE_SOURCE_BYTES, src, len, 0, 0,
                                 "source is %zu bytes; the policy allows at most %zu", len,
                                 lp->max_source_bytes);
        return r < 0 ? r : 1;
    }
    if (!lp->enabled) {
        r = sg_violations_add_at(vs, SG_RULE_LANGUAGE_DISABLED, src, len, 0, 0,
                                 "%s is disabled by this policy", sg_lang_name(lang));
        return r < 0 ? r : 1;
    }
    return 0;
}

static int analyze_run(const struct sg_lang_policy *lp, enum sg_lang lang, const char *src,
                       size_t len, struct sg_analysis *ret, struct sg_error *err)
{
    int r = check_gates(lp, lang, src, len, &ret->violations);
    if (r != 0)
        return r < 0 ? sg_error_set(err, r, "out of memory") : 0;
    uint64_t t0 = sg_time_mono_us();
    r = sg_canon_check(lang, src, len, &ret->violations);
    uint64_t t1 = sg_time_mono_us();
    ret->stats.canon_us = t1 - t0;
    if (r < 0)
        return sg_error_set(err, r, "out of memory");
    /* fail closed: bytes the parser and the runtime could read differently
     * are never parsed, so no rule can be fooled by them */
    if (ret->violations.count + ret->violations.dropped > 0)
        return 0;
    r = checker_for(lang)->check(lp, src, len, &ret->violations, &ret->stats, err);
    uint64_t t2 = sg_time_mono_us();
    if (ret->stats.eval_us == 0 && t2 - t1 >= ret->stats.parse_us)
        ret->stats.eval_us = t2 - t1 - ret->stats.parse_us;
    return r;
}

/* An allow-list gap names the policy and the list to change: a module an
 * operator added to an image stays rejected until a policy allows it, and
 * the message says which (policies/README.md, "Extending the images"). */
static int name_the_policy(const struct sg_policy *policy, enum sg_lang lang,
                           struct sg_violations *vs)
{
    static const char tail[] = "not allowed";
    for (size_t i = 0; i < vs->count; i++) {
        struct sg_violation *v = &vs->items[i];
        size_t n = strlen(v->message);
        if (strcmp(v->rule, SG_RULE_IMPORT_NOT_ALLOWED) != 0 || n < sizeof(tail) - 1 ||
            strcmp(v->message + n - (sizeof(tail) - 1), tail) != 0)
            continue;
        char *m = NULL;
        if (asprintf(&m, "%s by policy '%s' (%s.imports.modules)", v->message, policy->name,
                     lang == SG_LANG_PYTHON ? "python" : "javascript") < 0)
            return -ENOMEM;
        free(v->message);
        v->message = m;
    }
    return 0;
}

int sg_analyze(const struct sg_policy *policy, enum sg_lang lang, const char *src, size_t len,
               struct sg_analysis *ret, struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    if (!policy || (!src && len > 0) || !checker_for(lang))
        return sg_error_set(err, -EINVAL, "sg_analyze: invalid arguments");
    if (!src)
        src = "";
    ret->stats.source_bytes = len;
    const struct sg_lang_policy *lp =
        lang == SG_LANG_PYTHON ? &policy->python : &policy->javascript;
    int r = analyze_run(lp, lang, src, len, ret, err);
    if (r == 0 && name_the_policy(policy, lang, &ret->violations) < 0)
        r = sg_error_set(err, -ENOMEM, "out of memory");
    if (r < 0) {
        sg_analysis_free(ret);
        return r;
    }
    ret->accepted = ret->violations.count + ret->violations.dropped == 0;
    return 0;
}

void sg_analysis_free(struct sg_analysis *analysis)
{
    if (!analysis)
        return;
    sg_violations_free(&analysis->violations);
}
