/* Canonicalisation: each reject with its position, and its accepted
 * counterpart; NFKC of identifiers. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "canon.h"
#include "rules.h"

static struct sg_violations check(enum sg_lang lang, const char *src, size_t len)
{
    struct sg_violations vs = {0};
    cr_assert_eq(sg_canon_check(lang, src, len, &vs), 0);
    return vs;
}

/* src must produce exactly one violation: rule at line:col. */
static void expect_one(enum sg_lang lang, const char *src, size_t len, const char *rule,
                       uint32_t line, uint32_t col)
{
    struct sg_violations vs = check(lang, src, len);
    cr_assert_eq(vs.count, 1, "want one violation (%s), got %zu", rule, vs.count);
    cr_assert_str_eq(vs.items[0].rule, rule);
    cr_assert_eq(vs.items[0].line, line, "%s: line %u, want %u", rule, vs.items[0].line, line);
    cr_assert_eq(vs.items[0].column, col, "%s: column %u, want %u", rule, vs.items[0].column, col);
    cr_assert_str_eq(vs.items[0].severity, "error");
    sg_violations_free(&vs);
}

static void expect_clean(enum sg_lang lang, const char *src, size_t len)
{
    struct sg_violations vs = check(lang, src, len);
    cr_assert_eq(vs.count, 0, "unexpected %s", vs.count ? vs.items[0].rule : "");
    sg_violations_free(&vs);
}

#define S(lit) lit, sizeof(lit) - 1

Test(canon, invalid_utf8)
{
    expect_one(SG_LANG_PYTHON, S("x = 1\ny = '\xff'\n"), SG_RULE_INVALID_UTF8, 2, 6);
    expect_one(SG_LANG_JAVASCRIPT, S("let s = '\xc3';"), SG_RULE_INVALID_UTF8, 1, 10);
    /* overlong encoding of '/' and an encoded surrogate */
    expect_one(SG_LANG_PYTHON, S("a\xc0\xaf"), SG_RULE_INVALID_UTF8, 1, 2);
    expect_one(SG_LANG_PYTHON, S("a\xed\xa0\x80"), SG_RULE_INVALID_UTF8, 1, 2);
    expect_clean(SG_LANG_PYTHON, S("s = 'caf\xc3\xa9 \xf0\x9f\x98\x80'\n"));
}

Test(canon, nul_byte)
{
    expect_one(SG_LANG_PYTHON, S("x = 1\n\xc3\xa9\xc3\xa9 = '\0'\n"), SG_RULE_NUL_BYTE, 2, 7);
    expect_one(SG_LANG_JAVASCRIPT, S("\0"), SG_RULE_NUL_BYTE, 1, 1);
    expect_clean(SG_LANG_PYTHON, S("x = '\\0'\n"));
}

Test(canon, lone_cr)
{
    /* tree-sitter reads this as one comment; CPython runs the import */
    expect_one(SG_LANG_PYTHON, S("# x\rimport os\n"), SG_RULE_LONE_CR, 1, 4);
    expect_one(SG_LANG_JAVASCRIPT, S("a;\r\nb;\r"), SG_RULE_LONE_CR, 2, 3);
    expect_clean(SG_LANG_PYTHON, S("# ok\r\nimport json\r\n"));
    expect_clean(SG_LANG_JAVASCRIPT, S("a;\r\n"));
}

Test(canon, coding_cookie)
{
    expect_one(SG_LANG_PYTHON, S("# -*- coding: latin-1 -*-\nx = 1\n"), SG_RULE_CODING_COOKIE, 1,
               15);
    expect_one(SG_LANG_PYTHON, S("#!/usr/bin/python\n# vim: set fileencoding=utf-7 :\n"),
               SG_RULE_CODING_COOKIE, 2, 25);
    expect_one(SG_LANG_PYTHON, S("\xef\xbb\xbf# coding=cp1252\n"), SG_RULE_CODING_COOKIE, 1, 11);
    expect_one(SG_LANG_PYTHON, S("  \t# coding:\tutf-16\n"), SG_RULE_CODING_COOKIE, 1, 14);
    /* the first "coding" with no name after it does not stop the search */
    expect_one(SG_LANG_PYTHON, S("# coding: \xc3\xa9 coding=ascii\n"), SG_RULE_CODING_COOKIE, 1,
               20);
    const char *ok[] = {"# coding: utf-8\n", "# -*- coding: UTF8 -*-\n", "# coding=utf_8\n",
                        "# coding: utf-8-sig\n", "x = 1\n# coding: utf8\n",
                        /* not a comment line: no cookie */
                        "x = 1  # coding: latin-1\n",
                        /* line 3 is past PEP 263's window */
                        "\n\n# coding: latin-1\n", "# coding latin-1\n"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        expect_clean(SG_LANG_PYTHON, ok[i], strlen(ok[i]));
    /* JavaScript has no cookies */
    expect_clean(SG_LANG_JAVASCRIPT, S("// coding: latin-1\n"));
}

Test(canon, coding_cookie_message_names_encoding)
{
    struct sg_violations vs = check(SG_LANG_PYTHON, S("# coding: latin-1\n"));
    cr_assert_eq(vs.count, 1);
    cr_assert(strstr(vs.items[0].message, "\"latin-1\""), "%s", vs.items[0].message);
    cr_assert_str_eq(vs.items[0].snippet, "latin-1");
    sg_violations_free(&vs);
}

Test(canon, line_separators)
{
    expect_one(SG_LANG_JAVASCRIPT,
               S("// a\xe2\x80\xa8"
                 "alert(1)\n"),
               SG_RULE_LINE_SEPARATOR, 1, 5);
    expect_one(SG_LANG_PYTHON, S("x = 1\ns = '\xe2\x80\xa9'\n"), SG_RULE_LINE_SEPARATOR, 2, 6);
    /* neighbours in the same block are fine: U+2027, U+2030 */
    expect_clean(SG_LANG_JAVASCRIPT, S("s = '\xe2\x80\xa7\xe2\x80\xb0';"));
}

Test(canon, bidi_controls)
{
    const char *bidi[] = {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",
                          "\xe2\x80\xad", "\xe2\x80\xae", "\xe2\x81\xa6",
                          "\xe2\x81\xa7", "\xe2\x81\xa8", "\xe2\x81\xa9"};
    for (size_t i = 0; i < sizeof(bidi) / sizeof(bidi[0]); i++) {
        char src[64];
        int n = snprintf(src, sizeof(src), "ok = 1\ns = \"%s\"\n", bidi[i]);
        expect_one(SG_LANG_PYTHON, src, (size_t)n, SG_RULE_BIDI_CONTROL, 2, 6);
        expect_one(SG_LANG_JAVASCRIPT, src, (size_t)n, SG_RULE_BIDI_CONTROL, 2, 6);
    }
    /* U+200E/U+200F marks and U+2065 are not in the set */
    expect_clean(SG_LANG_PYTHON, S("s = '\xe2\x80\x8e\xe2\x81\xa5'\n"));
}

Test(canon, mixed_indentation)
{
    /* a tab after a space in the indentation, reported at the tab */
    expect_one(SG_LANG_PYTHON, S("if x:\n    y = 1\n \ty = 2\n"), SG_RULE_MIXED_INDENTATION, 3, 2);
    expect_one(SG_LANG_PYTHON, S("if x:\n\t  \tpass\n"), SG_RULE_MIXED_INDENTATION, 2, 4);
    expect_one(SG_LANG_PYTHON, S(" \tx = 1"), SG_RULE_MIXED_INDENTATION, 1, 2);
    /* continuation lines count too: bytes cannot tell them from others */
    expect_one(SG_LANG_PYTHON, S("x = (1,\n  \t2)\n"), SG_RULE_MIXED_INDENTATION, 2, 3);
    /* comment-only lines do not: no parser reads their indentation */
    expect_clean(SG_LANG_PYTHON, S("if x:\n  \t# note\n    pass\n"));
    /* tabs only, spaces only, tab then spaces: accepted */
    expect_clean(SG_LANG_PYTHON, S("if x:\n\tif y:\n\t\tpass\n"));
    expect_clean(SG_LANG_PYTHON, S("if x:\n    pass\n"));
    expect_clean(SG_LANG_PYTHON, S("if x:\n\t    pass\n"));
    /* a tab after the indentation, a blank line, a form feed restarting it */
    expect_clean(SG_LANG_PYTHON, S("if x:\n    y = 1 \t# c\n"));
    expect_clean(SG_LANG_PYTHON, S("if x:\n \t \n    pass\n"));
    expect_clean(SG_LANG_PYTHON, S("x = 1\n \f\ty = 2\n"));
    expect_clean(SG_LANG_PYTHON, S("x = 1\r\n \t\r\n"));
    /* JavaScript indentation carries no meaning */
    expect_clean(SG_LANG_JAVASCRIPT, S("if (x) {\n \ty = 2;\n}\n"));
}

Test(canon, mixed_indentation_through_the_analysis)
{
    /* CPython puts `c` (7 spaces and a tab: column 8) in `if x:`'s body;
     * tree-sitter-python (a tab adds 8: column 15) puts it under `if y:` */
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_file("policies/default.json", &p, &err), 0, "%s", err.msg);
    static const char src[] = "if x:\n        a\n        if y:\n            b\n       \tc\n";
    struct sg_analysis a;
    cr_assert_eq(sg_analyze(p, SG_LANG_PYTHON, src, sizeof(src) - 1, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.accepted, 0);
    cr_assert_eq(a.violations.count, 1);
    cr_expect_str_eq(a.violations.items[0].rule, SG_RULE_MIXED_INDENTATION);
    cr_expect_eq(a.violations.items[0].line, 5);
    cr_expect_eq(a.violations.items[0].column, 8);
    sg_analysis_free(&a);
    sg_policy_free(p);
}

Test(canon, bom_only_at_start)
{
    expect_clean(SG_LANG_PYTHON, S("\xef\xbb\xbfimport json\n"));
    expect_clean(SG_LANG_JAVASCRIPT, S("\xef\xbb\xbf"
                                       "1;"));
    expect_clean(SG_LANG_PYTHON, "", 0);
}

Test(canon, one_per_rule_in_source_order)
{
    const char src[] = "a\rb\xe2\x80\xae\rc\0d\0\xe2\x80\xae\xff";
    struct sg_violations vs = check(SG_LANG_PYTHON, src, sizeof(src) - 1);
    cr_assert_eq(vs.count, 4);
    cr_assert_str_eq(vs.items[0].rule, SG_RULE_LONE_CR);
    cr_assert_str_eq(vs.items[1].rule, SG_RULE_BIDI_CONTROL);
    cr_assert_str_eq(vs.items[2].rule, SG_RULE_NUL_BYTE);
    cr_assert_str_eq(vs.items[3].rule, SG_RULE_INVALID_UTF8);
    /* the snippets never carry the raw characters */
    for (size_t i = 0; i < vs.count; i++)
        cr_assert_null(strstr(vs.items[i].snippet, "\xe2\x80\xae"));
    sg_violations_free(&vs);
}

Test(nfkc, identifiers)
{
    char *s = NULL;
    /* fullwidth "exec" */
    cr_assert_eq(sg_nfkc(S("\xef\xbd\x85\xef\xbd\x98\xef\xbd\x85\xef\xbd\x83"), &s), 0);
    cr_assert_str_eq(s, "exec");
    free(s);
    /* mathematical bold "eval" */
    cr_assert_eq(sg_nfkc(S("\xf0\x9d\x90\x9e\xf0\x9d\x90\xaf\xf0\x9d\x90\x9a\xf0\x9d\x90\xa5"), &s),
                 0);
    cr_assert_str_eq(s, "eval");
    free(s);
    /* the ligature U+FB01 "fi" */
    cr_assert_eq(sg_nfkc(S("\xef\xac\x81le"), &s), 0);
    cr_assert_str_eq(s, "file");
    free(s);
    cr_assert_eq(sg_nfkc(S("plain_ascii"), &s), 0);
    cr_assert_str_eq(s, "plain_ascii");
    free(s);
    cr_assert_eq(sg_nfkc(S("caf\xc3\xa9"), &s), 0);
    cr_assert_str_eq(s, "caf\xc3\xa9");
    free(s);
    cr_assert_eq(sg_nfkc("ab", 1, &s), 0, "length bounds the input");
    cr_assert_str_eq(s, "a");
    free(s);
    cr_assert_eq(sg_nfkc(S("a\xff"), &s), -EINVAL);
    cr_assert_null(s);
}
