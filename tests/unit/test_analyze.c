/* The analysis pipeline: language names, the gates before parsing (size,
 * language switch, canonicalisation) and the verdict. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"

#define LANG_MIN "{\"imports\": {\"mode\": \"allow\", \"modules\": [\"json\"]}"

static struct sg_policy *policy_with(const char *py_extra, const char *js_extra)
{
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"name\": \"t\", \"python\": " LANG_MIN "%s}, \"javascript\": " LANG_MIN
                       "%s}}",
                       py_extra, js_extra) > 0);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_buf(s, strlen(s), "t", &p, &err), 0, "%s", err.msg);
    free(s);
    return p;
}

static void expect_reject(const struct sg_policy *p, enum sg_lang lang, const char *src, size_t len,
                          const char *rule)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, len, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.accepted, 0);
    cr_assert_geq(a.violations.count, 1);
    cr_assert_str_eq(a.violations.items[0].rule, rule);
    cr_assert_eq(a.stats.source_bytes, len);
    sg_analysis_free(&a);
}

Test(analyze, language_names)
{
    enum sg_lang l;
    const char *py[] = {"python", "python3"}, *js[] = {"nodejs", "javascript", "js", "node"};
    for (size_t i = 0; i < 2; i++) {
        l = SG_LANG_JAVASCRIPT;
        cr_assert_eq(sg_lang_from_name(py[i], &l), 0);
        cr_assert_eq(l, SG_LANG_PYTHON);
    }
    for (size_t i = 0; i < 4; i++) {
        l = SG_LANG_PYTHON;
        cr_assert_eq(sg_lang_from_name(js[i], &l), 0);
        cr_assert_eq(l, SG_LANG_JAVASCRIPT);
    }
    cr_assert_eq(sg_lang_from_name("ruby", &l), -EINVAL);
    cr_assert_eq(sg_lang_from_name("Python", &l), -EINVAL);
    cr_assert_eq(sg_lang_from_name(NULL, &l), -EINVAL);
    cr_assert_str_eq(sg_lang_name(SG_LANG_PYTHON), "python");
    cr_assert_str_eq(sg_lang_name(SG_LANG_JAVASCRIPT), "nodejs");
}

Test(analyze, size_limit_comes_first)
{
    struct sg_policy *p = policy_with(", \"limits\": {\"max_source_bytes\": 16}", "");
    /* 17 bytes, also with a NUL: the size rule alone is reported */
    expect_reject(p, SG_LANG_PYTHON, "import json\0\0\0\0\0\0", 17, SG_RULE_SOURCE_BYTES);
    struct sg_analysis a;
    cr_assert_eq(sg_analyze(p, SG_LANG_PYTHON, "0123456789abcdef!", 17, &a, NULL), 0);
    cr_assert_eq(a.violations.count, 1);
    cr_assert_eq(a.violations.items[0].line, 1);
    cr_assert_eq(a.violations.items[0].column, 1);
    cr_assert(strstr(a.violations.items[0].message, "17 bytes"), "%s",
              a.violations.items[0].message);
    sg_analysis_free(&a);
    /* exactly at the limit passes the gate (and stops at the NUL) */
    expect_reject(p, SG_LANG_PYTHON, "x = 1\0", 6, SG_RULE_NUL_BYTE);
    sg_policy_free(p);
}

Test(analyze, disabled_language)
{
    struct sg_policy *p = policy_with("", ", \"enabled\": false");
    expect_reject(p, SG_LANG_JAVASCRIPT, "1;", 2, SG_RULE_LANGUAGE_DISABLED);
    /* python stays enabled: a canonicalisation reject proves it got past the gate */
    expect_reject(p, SG_LANG_PYTHON, "#\r", 2, SG_RULE_LONE_CR);
    sg_policy_free(p);
}

Test(analyze, canon_rejects_stop_before_parsing)
{
    struct sg_policy *p = policy_with("", "");
    struct sg_analysis a;
    const char src[] = "# x\rimport os\n\xe2\x80\xae";
    cr_assert_eq(sg_analyze(p, SG_LANG_PYTHON, src, sizeof(src) - 1, &a, NULL), 0);
    cr_assert_eq(a.accepted, 0);
    /* only canonicalisation rules: the parser never saw the bytes */
    cr_assert_eq(a.violations.count, 2);
    cr_assert_str_eq(a.violations.items[0].rule, SG_RULE_LONE_CR);
    cr_assert_str_eq(a.violations.items[1].rule, SG_RULE_BIDI_CONTROL);
    cr_assert_eq(a.stats.parse_us, 0);
    cr_assert_eq(a.stats.nodes, 0);
    sg_analysis_free(&a);
    expect_reject(p, SG_LANG_JAVASCRIPT, "a\xe2\x80\xa8;", 5, SG_RULE_LINE_SEPARATOR);
    sg_policy_free(p);
}

Test(analyze, invalid_arguments)
{
    struct sg_policy *p = policy_with("", "");
    struct sg_analysis a;
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(NULL, SG_LANG_PYTHON, "x", 1, &a, &err), -EINVAL);
    cr_assert_eq(sg_analyze(p, SG_LANG_PYTHON, NULL, 1, &a, &err), -EINVAL);
    cr_assert_eq(sg_analyze(p, (enum sg_lang)7, "x", 1, &a, &err), -EINVAL);
    cr_assert_eq(a.accepted, 0);
    sg_analysis_free(&a);
    sg_analysis_free(NULL);
    sg_policy_free(p);
}
