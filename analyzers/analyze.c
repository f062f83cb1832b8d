/* analyze.c - the analysis pipeline: size limit, language switch,
 * canonicalisation, then the language checker (parse + policy). */
#include "analyze.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "canon.h"
#include "lang.h"
#include "rules.h"

int sg_lang_from_name(const char *name, enum sg_lang *ret_lang)
{
    static const struct {
        const char *name;
        enum sg_lang lang;
    } names[] = {
        {"python", SG_LANG_PYTHON}, {"python3", SG_LANG_PYTHON},
        {"nodejs", SG_LANG_JAVASCRIPT}, {"javascript", SG_LANG_JAVASCRIPT},
        {"js", SG_LANG_JAVASCRIPT}, {"node", SG_LANG_JAVASCRIPT},
    };
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i].name) == 0) {
            *ret_lang = names[i].lang;
            return 0;
        }
    }
    return -EINVAL;
}

const char *sg_lang_name(enum sg_lang lang)
{
    return lang == SG_LANG_JAVASCRIPT ? "nodejs" : "python";
}

/* Length of module's top-level part (*ret_skip: a prefix not part of it). */
static size_t import_top(enum sg_lang lang, const char *m, size_t *ret_skip)
{
    *ret_skip = 0;
    if (lang == SG_LANG_PYTHON)
        return strcspn(m, ".");
    if (strncmp(m, "node:", 5) == 0)
        *ret_skip = 5;
    m += *ret_skip;
    if (m[0] == '@') {
        size_t scope = strcspn(m, "/");
        return m[scope] ? scope + 1 + strcspn(m + scope + 1, "/") : scope;
    }
    return strcspn(m, "/");
}

void sg_imports_add(struct sg_imports *im, enum sg_lang lang, const char *module)
{
    if (!im || !module || module[0] == '.' || module[0] == '\0')
        return;
    size_t skip, n = import_top(lang, module, &skip);
    const char *m = module + skip;
    int ok = n > 0 && n <= SG_IMPORT_NAME_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = (m[i] >= 'a' && m[i] <= 'z') || (m[i] >= 'A' && m[i] <= 'Z') ||
             (m[i] >= '0' && m[i] <= '9') || m[i] == '_' || m[i] == '.' || m[i] == '@' ||
             m[i] == '/' || m[i] == '-';
    /* already there? names are ','-separated and never contain ',' */
    size_t used = strlen(im->text);
    for (const char *p = im->text; ok && *p;) {
        size_t l = strcspn(p, ",");
        if (l == n && memcmp(p, m, n) == 0)
            return;
        p += l + (p[l] == ',');
    }
    if (!ok || im->count >= SG_IMPORTS_MAX || used + (used > 0) + n >= sizeof(im->text)) {
        im->dropped++;
        return;
    }
    if (used)
        im->text[used++] = ',';
    memcpy(im->text + used, m, n);
    im->text[used + n] = '\0';
    im->count++;
}

uint64_t sg_monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int run_checker(enum sg_lang lang, const struct sg_lang_policy *lp, const char *src,
                       size_t len, struct sg_analysis *ret, struct sg_error *err)
{
    if (lang == SG_LANG_PYTHON)
        return sg_python_check(lp, src, len, &ret->violations, &ret->stats, err);
    return sg_javascript_check(lp, src, len, &ret->violations, &ret->stats, err);
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
    uint64_t t0 = sg_monotonic_us();
    r = sg_canon_check(lang, src, len, &ret->violations);
    uint64_t t1 = sg_monotonic_us();
    ret->stats.canon_us = t1 - t0;
    if (r < 0)
        return sg_error_set(err, r, "out of memory");
    /* fail closed: bytes the parser and the runtime could read differently
     * are never parsed, so no rule can be fooled by them */
    if (ret->violations.count + ret->violations.dropped > 0)
        return 0;
    r = run_checker(lang, lp, src, len, ret, err);
    uint64_t t2 = sg_monotonic_us();
    if (ret->stats.eval_us == 0 && t2 - t1 >= ret->stats.parse_us)
        ret->stats.eval_us = t2 - t1 - ret->stats.parse_us;
    return r;
}

int sg_analyze(const struct sg_policy *policy, enum sg_lang lang, const char *src, size_t len,
               struct sg_analysis *ret, struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    if (!policy || (!src && len > 0) || (lang != SG_LANG_PYTHON && lang != SG_LANG_JAVASCRIPT))
        return sg_error_set(err, -EINVAL, "sg_analyze: invalid arguments");
    if (!src)
        src = "";
    ret->stats.source_bytes = len;
    const struct sg_lang_policy *lp = lang == SG_LANG_PYTHON ? &policy->python : &policy->javascript;
    int r = analyze_run(lp, lang, src, len, ret, err);
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
