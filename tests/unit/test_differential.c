/* Parser differentials: sources tree-sitter reads as one program and the
 * runtime (V8 compiling main.js as the Node runner does, CPython) as
 * another. Each family here was found by the differential fuzzer
 * (tests/fuzz/diff/) and must be rejected with a rule that says why; the
 * neighbouring ordinary code must still pass. The reject cases are the
 * fuzzer's findings (reduced), kept as its regression seeds too
 * (tests/fuzz/regress/diff_*). Tests run from the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "test_helpers.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void analyze(enum sg_lang lang, const char *src, struct sg_analysis *a)
{
    static struct sg_policy *p;
    if (!p)
        p = test_load_policy("default");
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), a, &err), 0, "%s", err.msg);
}

static void dump(const struct sg_analysis *a, char *out, size_t outsz)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < a->violations.count && o < outsz; i++)
        o += (size_t)snprintf(out + o, outsz - o, "\n  %u:%u %s: %s", a->violations.items[i].line,
                              a->violations.items[i].column, a->violations.items[i].rule,
                              a->violations.items[i].message);
}

static void expect_rule(enum sg_lang lang, const char *src, const char *rule)
{
    struct sg_analysis a;
    char got[2048];
    analyze(lang, src, &a);
    dump(&a, got, sizeof(got));
    int found = 0;
    for (size_t i = 0; i < a.violations.count; i++)
        found |= strcmp(a.violations.items[i].rule, rule) == 0;
    cr_expect(found, "expected %s for:\n%s\ngot:%s", rule, src, got);
    sg_analysis_free(&a);
}

static void expect_accept(enum sg_lang lang, const char *src)
{
    struct sg_analysis a;
    char got[2048];
    analyze(lang, src, &a);
    dump(&a, got, sizeof(got));
    cr_expect(a.accepted, "expected no violation for:\n%s\ngot:%s", src, got);
    sg_analysis_free(&a);
}

/* ---- JavaScript: await and yield outside their functions --------------- */

/* main.js is compiled as the body of a plain (non-async, non-generator,
 * sloppy) function, so there `await` and `yield` are identifiers and
 * `await /x;...;1/g` is two divisions around live code, while tree-sitter
 * always reads an await/yield expression with a regex inside. */
Test(differential, js_await_yield_outside_their_functions_are_rejected)
{
    static const char *const cases[] = {
        /* the fuzzer's first finding, and the escape it opens */
        "var await = 4, g = 2, i = 1;\nvar x = await /g/i;\n",
        "var await = 1, x = 1, g = 1;\nawait /x;require(\"child_process\").execSync(\"id\");1/g;\n",
        "var yield = 4, g = 2, i = 1;\nvar y = yield /g/i;\n",
        "var yield = 1, x = 1, g = 1;\nyield /x;process.binding(\"spawn_sync\");1/g;\n",
        /* the nearest function decides, not an outer one */
        "function f() { return await /g/i; }\n",
        "async function f() { function g() { return await /x/g; } }\n",
        "async function f() { const h = () => await /x/g; }\n",
        "function* g() { const h = () => yield /x/g; }\n",
        "function* g() { function h() { yield /x/g; } }\n",
        "const o = { m() { return await /x/g; } };\n",
        "class A { m() { yield /x/g; } }\n",
        "class A { static { await /x/g; } }\n",
        /* `async` then a line break is the identifier `async` to V8 (a
         * class field, an expression statement), and the function is plain */
        "var x = 1, g = 1;\nclass A { async\n  m() { return await /x/g; } }\n",
        "var async = 1, x = 1, g = 1;\nasync\nfunction f() { return await /x/g; }\n",
        "var x = 1, g = 1;\nasync /* a\n */ function f() { return await /x/g; }\n",
        /* top-level await: main.js is not a module */
        "await Promise.resolve(1);\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_rule(SG_LANG_JAVASCRIPT, cases[i], SG_RULE_CONTEXT_KEYWORD);
}

Test(differential, js_await_yield_inside_their_functions_pass)
{
    static const char *const cases[] = {
        "async function f(p) { return await p; }\n",
        "async function f() { return await /x/g.test(\"x\"); }\n",
        "const f = async (p) => await p;\n",
        "const f = async p => await p;\n",
        "const f = async function (p) { await p; };\n",
        "function* g() { yield 1; yield* [2]; const x = yield; return x; }\n",
        "const g = function* () { yield /x/g; };\n",
        "class A { async m(p) { await p; } *gen() { yield 1; } async *ag() { yield await 1; } "
        "static async s(p) { return await p; } }\n",
        "const o = { async m(p) { return await p; }, *g() { yield 2; }, async *h() { yield 3; } "
        "};\n",
        "async function f(xs) { for await (const x of xs) { await x; } }\n",
        "async function f() { const g = async () => { await 1; }; function* h() { yield 1; } }\n",
        "async /* same line */ function f(p) { return await p; }\n",
        "class A { @dec async m(p) { return await p; } }\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_JAVASCRIPT, cases[i]);
}

/* `async` + line break + function: V8 reads the identifier `async` and a
 * plain function, tree-sitter an async function, even with no await in it
 * (found by diff_javascript as `async`, a comment holding a line break,
 * then `function f() {...}`). */
Test(differential, js_async_line_break_is_rejected)
{
    static const char *const cases[] = {
        "var x = 1, g = 1;\nasync /*fa\n */ function f() { return x; }\n",
        "var f = async /*\n*/ (x) => x;\n",
        "var f = async /*\n*/ function () { return 1; };\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_rule(SG_LANG_JAVASCRIPT, cases[i], SG_RULE_CONTEXT_KEYWORD);
}

/* where tree-sitter, too, reads `async` + line break as a name of its own */
Test(differential, js_async_name_before_a_line_break_passes)
{
    static const char *const cases[] = {
        "var async = 1;\nasync\nfunction f() { return 1; }\n",
        "var x = 1;\nasync // c\nfunction f() { return x; }\n",
        "class A { async\n  m() { return 1; } }\n",
        "var async = 1, x = 1;\nasync\nfunction* g() { yield x; }\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_JAVASCRIPT, cases[i]);
}

/* `let` + line break + a name is a declaration to V8 and the name `let`
 * followed by a statement to tree-sitter (found by diff_javascript as
 * `let\nregexcf`). (`let[0] = 2`, a destructuring declaration to V8,
 * tree-sitter refuses itself: parse.syntax-error.) */
Test(differential, js_let_as_a_name_is_rejected)
{
    static const char *const cases[] = {
        "let\nregexcf",
        "var x = 1;\nlet\nrequire = function (m) { return m; };\n",
        "let\n/* c */ a = 1, b = 2; [a, b] = [b, a];\n",
        "var o = {let};\n",
        /* a declaration written over two lines is misread the same way: the
         * message says to keep the name on the line of 'let' */
        "let\n  y = 2;\nconst z = y;\n",
        "l\\u0065t\nx = 1;\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_rule(SG_LANG_JAVASCRIPT, cases[i], SG_RULE_CONTEXT_KEYWORD);
}

Test(differential, js_let_declarations_and_let_properties_pass)
{
    static const char *const cases[] = {
        "let x = 1;\n",
        "for (let i = 0; i < 2; i++) {}\n",
        "let [a, b] = [1, 2];\n",
        "const o = { let: 1 }; o.let = 2;\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_JAVASCRIPT, cases[i]);
}

/* `static` + line break + a method: V8 reads a static method, tree-sitter a
 * field named `static` and an instance method (found by diff_javascript in
 * the findings of a one-hour run replayed after the `let` rule). */
Test(differential, js_class_field_named_like_a_modifier_is_rejected)
{
    static const char *const cases[] = {
        "class Acc extends Object {\n  #t = 0;\n  static\n  add(x) { return this; }\n}\n",
        "class A {\n  static\n  m() { return 1; }\n}\n",
        "class A { get\n  x() { return 1; } }\n",
        "class A { static; m() {} }\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_rule(SG_LANG_JAVASCRIPT, cases[i], SG_RULE_CONTEXT_KEYWORD);
}

Test(differential, js_class_modifiers_on_their_line_pass)
{
    static const char *const cases[] = {
        "class A { static m() { return 1; } get x() { return 2; } set x(v) {} }\n",
        "class A { static count = 0; static { A.count = 1; } async run() {} }\n",
        "class A { static = 1; get = 2; }\n",
        "class A { #total = 0; total() { return this.#total; } }\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_JAVASCRIPT, cases[i]);
}

/* ---- JavaScript: a legacy octal literal followed by '.' ----------------- */

/* `041.` is the decimal 41. to tree-sitter and the octal 33 followed by a
 * property access to V8: `041.\nx` hides the access `.x` as a plain name `x`
 * (found by diff_javascript as `041.\n\n\n\nuuu//`). */
Test(differential, js_legacy_octal_dot_is_rejected)
{
    static const char *const cases[] = {
        "041.\n\n\n\nuuu//",
        "var x = 041.\nvalueOf;\n",
        "var x = 041.e1;\n",
        "var x = 07.\n/* c */ toString();\n",
    };
    for (size_t i = 0; i < N(cases); i++) {
        struct sg_analysis a;
        analyze(SG_LANG_JAVASCRIPT, cases[i], &a);
        cr_expect(a.violations.count == 1 &&
                      strcmp(a.violations.items[0].rule, SG_RULE_SYNTAX_ERROR) == 0 &&
                      strstr(a.violations.items[0].message, "legacy octal"),
                  "expected the legacy octal violation for:\n%s", cases[i]);
        sg_analysis_free(&a);
    }
}

Test(differential, js_other_numbers_pass)
{
    static const char *const cases[] = {
        "var a = 08.5, b = 0.5, c = 041, d = 0o41, e = 1.5e3, f = 0.1, g = 0x1F, h = 10n;\n",
        "var s = 0.5.toFixed(1), t = 041 .toString(8), u = (041).toString(8);\n",
        "var v = 09.e1, w = 0e1, z = 0.e1;\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_JAVASCRIPT, cases[i]);
}

/* ---- Python: an attribute after a subscript in an annotation ------------- */

/* tree-sitter reads `g[0].gi_frame` in an annotation as a member_type (a type
 * and a name), CPython as an attribute access it evaluates: fail closed. */
Test(differential, py_annotation_member_type_is_rejected)
{
    static const char *const cases[] = {
        "g = [0]\nx: g[0].gi_frame\n",
        "g = [0]\nclass A:\n    x: g[0].gi_frame\n",
        "g = {}\nx: g['a'].__globals__ = 1\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_rule(SG_LANG_PYTHON, cases[i], SG_RULE_ANNOTATION_MEMBER);
}

Test(differential, py_ordinary_annotations_pass)
{
    static const char *const cases[] = {
        "import numpy as np\nx: np.ndarray = None\n",
        "import pandas as pd\ndef f(a: pd.DataFrame) -> pd.Series:\n    return a\n",
        "from typing import Dict, List, Optional\nx: Dict[str, List[int]] = {}\n"
        "y: Optional[int] = None\nclass A:\n    b: int\n    c: list[dict[str, int]] | None = "
        "None\n",
    };
    for (size_t i = 0; i < N(cases); i++)
        expect_accept(SG_LANG_PYTHON, cases[i]);
}
