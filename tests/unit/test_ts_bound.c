/* The parse-stack guard's token bound (ts_bound.h): the documented weights,
 * the fast-path boundary (inputs just below and just above it), the
 * per-line-block suffixes, and that parses on both sides of the boundary and
 * at the real trigger (65536 children) end in a violation, never a crash
 * (these tests run under ASan). Tests run from the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "test_helpers.h"
#include "ts_bound.h"

static uint64_t bound(const char *s)
{
    return sg_ts_token_bound(s, strlen(s));
}

Test(ts_bound, weights_of_each_character_class)
{
    cr_expect_eq(bound(""), 4); /* the end: NEWLINE, DEDENT, semicolon, content */
    cr_expect_eq(bound("x = 1"), 3 + 4);
    cr_expect_eq(bound("identifier_with_digits_123"), 1 + 4); /* a word is one token */
    cr_expect_eq(bound("1if"), 3 + 4); /* a number may stop at any character */
    cr_expect_eq(bound("0b12"), 4 + 4);
    cr_expect_eq(bound("\"\\nabc\""), 2 + 2 + 2 + 2 + 4); /* quote, \, word after \, quote */
    cr_expect_eq(bound("a\n"), 1 + 5 + 4); /* a line end: itself, content end, 3 zero-width */
    cr_expect_eq(bound("a\r\n"), 1 + 5 + 5 + 4);
    cr_expect_eq(bound("}"), 3 + 4); /* content end and an automatic semicolon */
    cr_expect_eq(bound("+-*"), 3 + 4);
    cr_expect_eq(bound("   \t  "), 4);                      /* blanks start no token of their own */
    cr_expect_eq(bound("caf\xc3\xa9x"), 3 + 4);             /* caf, é, x */
    cr_expect_eq(bound("\xe4\xb8\xad\xe6\x96\x87"), 2 + 4); /* one per code point */
    /* ill-formed UTF-8: the lexer reads each byte as a character */
    cr_expect_eq(bound("\xe0\x80\x80"), 3 + 4);
    cr_expect_eq(bound("\xff\xfe"), 2 + 4);
    cr_expect_eq(bound("\xc3"), 1 + 4);
}

/* `x = ` + n * `[` bounds to n + 6 tokens; the fast path needs
 * 2 * (n + 6) + 64 <= 65535, i.e. n <= 32729. */
#define FAST_MAX_BRACKETS 32729u

Test(ts_bound, fast_path_boundary)
{
    size_t len;
    char *below = test_repeat("x = ", "[", FAST_MAX_BRACKETS, &len);
    cr_expect_eq(sg_ts_token_bound(below, len), FAST_MAX_BRACKETS + 6);
    cr_expect_eq(sg_ts_bound_needs_guard(below, len), 0);
    free(below);
    char *above = test_repeat("x = ", "[", FAST_MAX_BRACKETS + 1, &len);
    cr_expect_eq(sg_ts_bound_needs_guard(above, len), 1);
    free(above);
    /* short sources skip the scan: 5 per byte at most */
    char *lines = test_repeat("", "\n", 6000, &len);
    cr_expect_eq(sg_ts_bound_needs_guard(lines, len), 0);
    free(lines);
    lines = test_repeat("", "\n", 7000, &len);
    cr_expect_eq(sg_ts_bound_needs_guard(lines, len), 1);
    free(lines);
}

Test(ts_bound, suffixes_per_line_block)
{
    size_t len;
    char *s = test_repeat("", "ab = cd(1)\n", 3 * SG_TS_BOUND_BLOCK_LINES + 10, &len);
    uint64_t *suffix = NULL;
    size_t blocks = 0;
    cr_assert_eq(sg_ts_bound_suffixes(s, len, &suffix, &blocks), 0);
    cr_assert_eq(blocks, 4); /* 202 lines (the last one empty) in blocks of 64 */
    cr_expect_eq(suffix[0], sg_ts_token_bound(s, len));
    size_t per_line = 6 + 5; /* ab = cd ( 1 ) and the line end */
    for (size_t b = 1; b < blocks; b++) {
        size_t from = b * SG_TS_BOUND_BLOCK_LINES * strlen("ab = cd(1)\n");
        cr_expect_eq(suffix[b], sg_ts_token_bound(s + from, len - from), "block %zu", b);
        cr_expect_eq(suffix[b - 1] - suffix[b], SG_TS_BOUND_BLOCK_LINES * per_line);
    }
    free(suffix);
    free(s);
}

static struct sg_policy *permissive_large(void)
{
    static const char doc[] =
        "{\"name\": \"big\", \"python\": {\"imports\": {\"mode\": \"deny\", \"modules\": []}, "
        "\"limits\": {\"max_source_bytes\": 1000000, \"max_depth\": 4096}}, "
        "\"javascript\": {\"imports\": {\"mode\": \"deny\", \"modules\": []}, "
        "\"limits\": {\"max_source_bytes\": 1000000, \"max_depth\": 4096}}}";
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_buf(doc, strlen(doc), "inline", &p, &err), 0, "%s", err.msg);
    return p;
}

static const char *first_rule(const struct sg_policy *p, enum sg_lang lang, const char *src,
                              size_t len)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, len, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.accepted, 0);
    const char *rule = a.violations.items[0].rule;
    sg_analysis_free(&a);
    return rule;
}

/* Both sides of the boundary and the smallest real trigger (65533 `[`
 * after `x = `: 65536 children) end in a violation in both languages. */
Test(ts_bound, bombs_around_the_boundary_are_violations)
{
    struct sg_policy *p = permissive_large();
    static const size_t counts[] = {FAST_MAX_BRACKETS, FAST_MAX_BRACKETS + 1, 65532, 65533};
    for (int lang = 0; lang < 2; lang++) {
        for (size_t i = 0; i < sizeof(counts) / sizeof(*counts); i++) {
            size_t len;
            char *s = test_repeat("x = ", "[", counts[i], &len);
            const char *rule = first_rule(p, (enum sg_lang)lang, s, len);
            cr_expect(strcmp(rule, SG_RULE_SYNTAX_ERROR) == 0 || strcmp(rule, SG_RULE_DEPTH) == 0,
                      "lang %d, %zu brackets: %s", lang, counts[i], rule);
            if (counts[i] >= 65533) /* past the real trigger only the guard can answer */
                cr_expect_str_eq(rule, SG_RULE_DEPTH);
            free(s);
        }
        size_t len;
        char *labels = test_repeat("", "x:", 32768, &len); /* 65536 tokens */
        cr_expect_str_eq(first_rule(p, (enum sg_lang)lang, labels, len), SG_RULE_DEPTH);
        free(labels);
    }
    sg_policy_free(p);
}

/* Ordinary code too long for the fast path goes through the guard (which
 * drops its logger part-way) and is accepted. */
Test(ts_bound, long_ordinary_python_is_accepted)
{
    struct sg_policy *p = permissive_large();
    size_t len;
    char *s = test_repeat("import math\n",
                          "def f(a, b=2):\n    r = [math.sqrt(x) for x in (a, b)]\n"
                          "    return {'r': r, 's': f\"{a}-{b}\"}\n\n",
                          2000, &len);
    cr_assert_eq(sg_ts_bound_needs_guard(s, len), 1);
    struct sg_analysis a;
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, SG_LANG_PYTHON, s, len, &a, &err), 0, "%s", err.msg);
    cr_expect_eq(a.accepted, 1, "%s", a.violations.count ? a.violations.items[0].message : "");
    sg_analysis_free(&a);
    free(s);
    sg_policy_free(p);
}
