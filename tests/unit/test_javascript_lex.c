/* JavaScript lexical decoding (js_lex.h), constant folding (js_fold.h) and
 * the grammar's symbol table (js_syms.h). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "js_fold.h"
#include "js_lex.h"
#include "js_syms.h"
#include "ts_util.h"

static void cooked(const char *body, int template, struct js_str *ret)
{
    js_str_clear(ret);
    js_str_append_cooked(ret, body, strlen(body), template);
}

static void expect_cooked(const char *body, const char *want, size_t want_len)
{
    struct js_str s;
    cooked(body, 0, &s);
    cr_expect_eq(s.len, want_len, "%s: length %zu, want %zu", body, s.len, want_len);
    cr_expect(memcmp(s.buf, want, want_len) == 0, "%s: got %s", body, s.buf);
}

Test(js_lex, string_escapes)
{
    expect_cooked("plain", "plain", 5);
    expect_cooked("\\x63onstructor", "constructor", 11);
    expect_cooked("\\143onstructor", "constructor", 11); /* legacy octal (sloppy mode) */
    expect_cooked("\\u0063onstructor", "constructor", 11);
    expect_cooked("\\u{63}onstructor", "constructor", 11);
    expect_cooked("\\u{000063}x", "cx", 2);
    expect_cooked("a\\nb\\tc\\\\d\\'e\\\"", "a\nb\tc\\d'e\"", 10);
    expect_cooked("\\b\\f\\v\\r", "\b\f\v\r", 4);
    expect_cooked("\\0", "\0", 1);
    expect_cooked("\\08",
                  "\0"
                  "8",
                  2);                       /* \0 then a plain 8 */
    expect_cooked("\\101\\1012", "AA2", 3); /* at most three octal digits */
    expect_cooked("\\477", "'7", 2);        /* \47 is "'" : 4-7 take two digits */
    expect_cooked("\\8\\9", "89", 2);
    expect_cooked("\\q\\$", "q$", 2);                    /* any other char stands for itself */
    expect_cooked("con\\\nstructor", "constructor", 11); /* line continuation */
    expect_cooked("con\\\r\nstructor", "constructor", 11);
    expect_cooked("con\\\xe2\x80\xa8structor", "constructor", 11); /* U+2028 continuation */
    expect_cooked("\\\xc3\xa9", "\xc3\xa9", 2);                    /* escaped multibyte char */
    expect_cooked("\\u{1F600}", "\xf0\x9f\x98\x80", 4);
    expect_cooked("\\uD83D\\uDE00", "\xf0\x9f\x98\x80", 4); /* surrogate pair */
    expect_cooked("\\uD83D", "\xed\xa0\xbd", 3);            /* lone surrogate: WTF-8 */
    expect_cooked("\\xZZ", "xZZ", 3);                       /* not an escape V8 accepts */
    expect_cooked("\\u{110000}", "u{110000}", 9);           /* past U+10FFFF */
}

Test(js_lex, template_cooking_normalises_crlf)
{
    struct js_str s;
    cooked("a\r\nb\\r", 1, &s);
    cr_assert_str_eq(s.buf, "a\nb\r");
    cooked("a\r\nb", 0, &s);
    cr_assert_str_eq(s.buf, "a\r\nb");
}

Test(js_lex, identifiers)
{
    struct js_str s;
    static const char *const evals[] = {"eval", "\\u0065val", "\\u{65}val", "\\u{0065}v\\u0061l",
                                        "ev\\u{61}l"};
    for (size_t i = 0; i < sizeof(evals) / sizeof(evals[0]); i++) {
        js_decode_identifier(evals[i], strlen(evals[i]), &s);
        cr_expect_str_eq(s.buf, "eval", "%s", evals[i]);
    }
    js_decode_identifier("\\uD835\\uDC1A", 12, &s); /* 𝐚: a different name */
    cr_assert_str_eq(s.buf, "\xf0\x9d\x90\x9a");
    js_decode_identifier("a\\x", 3, &s);
    cr_assert_str_eq(s.buf, "a\\x");
}

Test(js_lex, long_values_are_truncated_never_overflowed)
{
    struct js_str s;
    char big[1000];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cooked(big, 0, &s);
    cr_assert(s.truncated);
    cr_assert_eq(s.len, JS_STR_MAX - 1);
    cr_assert_eq(strlen(s.buf), JS_STR_MAX - 1);
    js_decode_identifier(big, strlen(big), &s);
    cr_assert(s.truncated);
    js_decode_identifier("ok", 2, &s);
    cr_assert(!s.truncated, "decoding resets the value");
}

Test(js_lex, case_mapping_is_unicode)
{
    struct js_str s;
    js_str_clear(&s);
    js_str_append(&s,
                  "x\xe2\x84\xaa"
                  "EY",
                  6); /* KELVIN SIGN lowercases to k */
    cr_assert_eq(js_str_casemap(&s, 1, 0), 0);
    cr_assert_str_eq(s.buf, "xkey");
    js_str_clear(&s);
    js_str_append(&s,
                  "\xc5\xbf"
                  "ecret",
                  7); /* LATIN SMALL LETTER LONG S uppercases to S */
    cr_assert_eq(js_str_casemap(&s, 0, 1), 0);
    cr_assert_str_eq(s.buf, "SECRET");
    cr_assert(js_is_dunder("__proto__", 9));
    cr_assert(!js_is_dunder("__dirname", 9));
    cr_assert(!js_is_dunder("____", 4));
}

Test(js_syms, every_symbol_and_field_exists)
{
    const struct js_syms *sy = js_syms_get();
    const uint16_t *ids = (const uint16_t *)sy;
    cr_assert_eq(sizeof(*sy) % sizeof(uint16_t), 0);
    for (size_t i = 0; i < sizeof(*sy) / sizeof(uint16_t); i++)
        cr_expect_neq(ids[i], 0, "symbol/field #%zu was not found in the grammar", i);
    cr_assert_eq(js_syms_get(), sy);
}

/* ---- folding ------------------------------------------------------------- */

struct fold_case {
    const char *expr;
    enum js_fold_kind kind;
    const char *value; /* for text kinds */
};

static void expect_fold(const struct fold_case *fc)
{
    char src[8192];
    cr_assert_lt((size_t)snprintf(src, sizeof(src), "x = %s;", fc->expr), sizeof(src));
    TSTree *tree = NULL;
    cr_assert_eq(sg_ts_parse(tree_sitter_javascript(), src, strlen(src), &tree), 0);
    TSNode root = ts_tree_root_node(tree);
    cr_assert(!ts_node_has_error(root), "%s does not parse", src);
    TSNode assign = ts_node_named_child(ts_node_named_child(root, 0), 0);
    TSNode expr = ts_node_child_by_field_name(assign, "right", 5);
    struct js_str v;
    enum js_fold_kind k = js_fold(js_syms_get(), src, expr, &v);
    cr_expect_eq(k, fc->kind, "%s: kind %d, want %d", fc->expr, k, fc->kind);
    if (fc->value && k == fc->kind)
        cr_expect_str_eq(v.buf, fc->value, "%s", fc->expr);
    ts_tree_delete(tree);
}

Test(js_fold, constants)
{
    static const struct fold_case cases[] = {
        {"'a' + \"b\"", JS_FOLD_STRING, "ab"},
        {"`a${'b'}c${1}`", JS_FOLD_STRING, "abc1"},
        {"'a' + 1", JS_FOLD_STRING, "a1"},
        {"1 + 'a'", JS_FOLD_STRING, "1a"},
        {"'a' + 0x10 + 1_000", JS_FOLD_STRING, "a161000"},
        {"'a' + true + null", JS_FOLD_STRING, "atruenull"},
        {"1 + 2", JS_FOLD_DYNAMIC, NULL},
        {"'a' + 1.5", JS_FOLD_DYNAMIC, NULL},
        {"'a' + 010", JS_FOLD_DYNAMIC, NULL},
        {"42", JS_FOLD_NUMBER, "42"},
        {"1.5", JS_FOLD_NUMBER_INEXACT, NULL},
        {"-1", JS_FOLD_NUMBER_INEXACT, NULL},
        {"undefined", JS_FOLD_OTHER, "undefined"},
        {"('x', 'y')", JS_FOLD_STRING, "y"},
        {"(/* c */ 'x')", JS_FOLD_STRING, "x"},
        {"'a' + b", JS_FOLD_DYNAMIC, NULL},
        {"`a${b}`", JS_FOLD_DYNAMIC, NULL},
        {"String.raw`a\\n${'b'}`", JS_FOLD_STRING, "a\\nb"},
        {"tag`a`", JS_FOLD_DYNAMIC, NULL},
        {"String(12)", JS_FOLD_STRING, "12"},
        {"String.fromCharCode(104, 105)", JS_FOLD_STRING, "hi"},
        {"String.fromCharCode(0x10068)", JS_FOLD_STRING, "h"},
        {"String.fromCodePoint(0x1F600)", JS_FOLD_STRING, "\xf0\x9f\x98\x80"},
        {"String.fromCodePoint(0x110000)", JS_FOLD_DYNAMIC, NULL},
        {"String['fromCharCode'](97)", JS_FOLD_STRING, "a"},
        {"'a'.concat('b', 1)", JS_FOLD_STRING, "ab1"},
        {"['a', 'b'].join('')", JS_FOLD_STRING, "ab"},
        {"['a', 'b'].join()", JS_FOLD_STRING, "a,b"},
        {"['a', , 'b', null, undefined].join('-')", JS_FOLD_STRING, "a--b--"},
        {"[, 'a', ].join('+')", JS_FOLD_STRING, "+a"},
        {"[].join('x')", JS_FOLD_STRING, ""},
        {"['a', b].join('')", JS_FOLD_DYNAMIC, NULL},
        {"[...a].join('')", JS_FOLD_DYNAMIC, NULL},
        {"'AbC'.toLowerCase()", JS_FOLD_STRING, "abc"},
        {"'x' + 'abc'.toUpperCase()", JS_FOLD_STRING, "xABC"},
        {"'I'.toLocaleLowerCase('tr')", JS_FOLD_DYNAMIC, NULL},
        {"'I'.toLocaleLowerCase()", JS_FOLD_STRING, "i"},
        {"'a'.toString()", JS_FOLD_STRING, "a"},
        {"f('a')", JS_FOLD_DYNAMIC, NULL},
        {"a.b", JS_FOLD_DYNAMIC, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_fold(&cases[i]);
}

Test(js_fold, bounds_make_it_complex)
{
    char expr[4096];
    size_t o = 0;
    for (int i = 0; i < JS_FOLD_DEPTH_MAX + 5; i++)
        o += (size_t)snprintf(expr + o, sizeof(expr) - o, "'a' + ");
    snprintf(expr + o, sizeof(expr) - o, "'b'");
    struct fold_case deep = {expr, JS_FOLD_COMPLEX, NULL};
    expect_fold(&deep);
    struct fold_case shallow = {"'a' + 'b' + 'c' + 'd'", JS_FOLD_STRING, "abcd"};
    expect_fold(&shallow);
}
