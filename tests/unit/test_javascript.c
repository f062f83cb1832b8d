/* The JavaScript analyzer (sg_javascript_check) under the shipped policies:
 * every rule in both directions, the attack families it must reject, the
 * ordinary code it must accept, positions, syntax errors, limits and
 * thread safety. Tests run from the repository root. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "javascript.h"
#include "lang.h"
#include "rules.h"
#include "test_helpers.h"

static void check(const struct sg_lang_policy *lp, const char *src, struct sg_violations *vs,
                  struct sg_analysis_stats *st)
{
    struct sg_error err = {0};
    memset(vs, 0, sizeof(*vs));
    memset(st, 0, sizeof(*st));
    cr_assert_eq(sg_javascript_check(lp, src, strlen(src), vs, st, &err), 0, "%s", err.msg);
}

static void dump(const struct sg_violations *vs, char *out, size_t outsz)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < vs->count && o < outsz; i++)
        o += (size_t)snprintf(out + o, outsz - o, "\n  %u:%u %s: %s", vs->items[i].line,
                              vs->items[i].column, vs->items[i].rule, vs->items[i].message);
}

/* Index of the first violation with rule, or -1. */
static int find_rule(const struct sg_violations *vs, const char *rule)
{
    for (size_t i = 0; i < vs->count; i++)
        if (strcmp(vs->items[i].rule, rule) == 0)
            return (int)i;
    return -1;
}

static void expect_reject_lp(const struct sg_lang_policy *lp, const char *src, const char *rule)
{
    struct sg_violations vs;
    struct sg_analysis_stats st;
    char got[2048];
    check(lp, src, &vs, &st);
    dump(&vs, got, sizeof(got));
    cr_expect(find_rule(&vs, rule) >= 0, "expected %s for:\n%s\ngot:%s", rule, src, got);
    sg_violations_free(&vs);
}

static void expect_accept_lp(const struct sg_lang_policy *lp, const char *src)
{
    struct sg_violations vs;
    struct sg_analysis_stats st;
    char got[2048];
    check(lp, src, &vs, &st);
    dump(&vs, got, sizeof(got));
    cr_expect_eq(vs.count + vs.dropped, 0, "expected no violation for:\n%s\ngot:%s", src, got);
    sg_violations_free(&vs);
}

struct reject_case {
    const char *src;
    const char *rule;
};

static void reject_all(const char *policy, const struct reject_case *cases, size_t n)
{
    struct sg_policy *p = test_load_policy(policy);
    for (size_t i = 0; i < n; i++)
        expect_reject_lp(&p->javascript, cases[i].src, cases[i].rule);
    sg_policy_free(p);
}

static void accept_all(const char *policy, const char *const *srcs, size_t n)
{
    struct sg_policy *p = test_load_policy(policy);
    for (size_t i = 0; i < n; i++)
        expect_accept_lp(&p->javascript, srcs[i]);
    sg_policy_free(p);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define A_FORBIDDEN SG_RULE_ATTRIBUTE_FORBIDDEN
#define N_FORBIDDEN SG_RULE_NAME_FORBIDDEN

/* ---- the attack families the default policy must reject -------------- */

Test(javascript, default_rejects_function_constructor_routes)
{
    static const struct reject_case cases[] = {
        {"(() => {}).constructor(\"return process\")()", A_FORBIDDEN},
        {"this.constructor.constructor(\"return process\")()", A_FORBIDDEN},
        {"[].filter.constructor(\"return 1\")()", A_FORBIDDEN},
        {"Object.getPrototypeOf(async function(){}).constructor", A_FORBIDDEN},
        {"Object.getPrototypeOf(async function(){})", SG_RULE_CALL_FORBIDDEN},
        {"Object.getOwnPropertyNames(Object.prototype)", SG_RULE_CALL_FORBIDDEN},
        {"const {getOwnPropertyDescriptors: d} = Object", SG_RULE_CALL_FORBIDDEN},
        {"new Function(\"return 1\")", N_FORBIDDEN},
        {"Function`return 1`", N_FORBIDDEN},
        {"const F = Function", N_FORBIDDEN},
        {"a?.constructor", A_FORBIDDEN},
        {"a?.[\"constructor\"]", A_FORBIDDEN},
        {"(0, f).constructor", A_FORBIDDEN},
        {"const {constructor: C} = () => {}", A_FORBIDDEN},
        {"const {constructor} = () => {}", A_FORBIDDEN},
        {"const {constructor = 1} = f", A_FORBIDDEN},
        {"({constructor: C} = f)", A_FORBIDDEN},
        {"function g({a: {constructor: c}}) {}", A_FORBIDDEN},
        {"const {[\"constr\" + \"uctor\"]: C} = f", A_FORBIDDEN},
        {"constructor.constructor(\"return 1\")()", A_FORBIDDEN},
        {"x.__proto__", A_FORBIDDEN},
        {"x = {__proto__: Function.prototype}", A_FORBIDDEN},
        {"x = {\"__proto__\": p}", A_FORBIDDEN},
        {"Object.getOwnPropertyDescriptor(o, \"__proto__\")", A_FORBIDDEN},
        {"x.__defineGetter__(\"a\", f)", A_FORBIDDEN},
        {"x.__foo__", SG_RULE_ATTRIBUTE_DUNDER},
        {"with (obj) { constructor }", N_FORBIDDEN},
    };
    reject_all("default", cases, N(cases));
}

Test(javascript, default_rejects_eval_and_globals)
{
    static const struct reject_case cases[] = {
        {"(0, eval)(\"1\")", N_FORBIDDEN},
        {"const e = [eval][0]", N_FORBIDDEN},
        {"globalThis[\"ev\" + \"al\"](\"1\")", N_FORBIDDEN},
        {"global.process", N_FORBIDDEN},
        {"Reflect.get(globalThis, \"eval\")", N_FORBIDDEN},
        {"Reflect.construct(F, [])", N_FORBIDDEN},
        {"Object.entries(globalThis)", N_FORBIDDEN},
        {"process.getBuiltinModule(\"child_process\")", N_FORBIDDEN},
        {"process.binding(\"spawn_sync\")", N_FORBIDDEN},
        {"process.mainModule.require(\"child_process\")", N_FORBIDDEN},
        {"const p = {process}", N_FORBIDDEN},
        {"function f(process) { return 1 }", N_FORBIDDEN},
        {"WebAssembly.compile(buf)", N_FORBIDDEN},
        {"const g = (function () { return this })(); g[\"ev\" + \"al\"](\"1\")", A_FORBIDDEN},
        {"const g = (function () { return this })(); g.Function(\"1\")", A_FORBIDDEN},
        {"(function () { return this[k] })()", SG_RULE_REFLECTION_DYNAMIC},
        {"const g = (function () { return this })()", N_FORBIDDEN},
        {"const g = [1].map(function () { return this })[0]", N_FORBIDDEN},
        /* return this in an object literal's method: only where no use of
         * the object can detach the method (js_fluent.c) */
        {"const o = { m() { return this } }; const f = o.m; f()", N_FORBIDDEN},
        {"const o = { m() { return this } }; module.exports = o", N_FORBIDDEN},
        {"const o = { m() { return this } }; const r = o.m(); r.m", N_FORBIDDEN},
        {"let o = { m() { return this } }; o.m()", N_FORBIDDEN},
        {"function make() { return { m() { return this } } }", N_FORBIDDEN},
        {"const o = { get me() { return this } }; o.me", N_FORBIDDEN},
        {"const o = { m() { return () => this } }; o.m()", N_FORBIDDEN},
        {"function f() { const self = this; return () => self }", N_FORBIDDEN},
        {"function f() { return (() => this)() }", N_FORBIDDEN},
        {"function f() { return arguments.callee.caller }", A_FORBIDDEN},
        {"Error.prepareStackTrace = (e, frames) => frames", A_FORBIDDEN},
        {"setTimeout(\"code\", 10)", SG_RULE_CALL_FORBIDDEN},
        {"setInterval(\"co\" + \"de\")", SG_RULE_CALL_FORBIDDEN},
        {"setImmediate(`code`)", SG_RULE_CALL_FORBIDDEN},
    };
    reject_all("default", cases, N(cases));
}

Test(javascript, default_rejects_computed_names_that_fold)
{
    static const struct reject_case cases[] = {
        {"x = a[\"con\" + \"structor\"]", A_FORBIDDEN},
        {"x = a['con' + 'struc' + 'tor']", A_FORBIDDEN},
        {"x = a[`constructor`]", A_FORBIDDEN},
        {"x = a[`${\"con\"}structor`]", A_FORBIDDEN},
        {"x = a[(\"x\", \"constructor\")]", A_FORBIDDEN},
        {"x = a[['con', 'structor'].join('')]", A_FORBIDDEN},
        {"x = a[['constructor'].join()]", A_FORBIDDEN},
        {"x = a['con'.concat('struc', 'tor')]", A_FORBIDDEN},
        {"x = a[String.fromCharCode(99, 111, 110, 115, 116, 114, 117, 99, 116, 111, 114)]",
         A_FORBIDDEN},
        {"x = a[String.fromCodePoint(0x63) + 'onstructor']", A_FORBIDDEN},
        {"x = a['CONSTRUCTOR'.toLowerCase()]", A_FORBIDDEN},
        {"x = a[String.raw`constructor`]", A_FORBIDDEN},
        {"x = a[String('constructor')]", A_FORBIDDEN},
        {"x = a['constructor'.toString()]", A_FORBIDDEN},
        {"x = a[\"\\x63onstructor\"]", A_FORBIDDEN},
        {"x = a[\"\\143onstructor\"]", A_FORBIDDEN},
        {"x = a[\"\\u{63}onstructor\"]", A_FORBIDDEN},
        {"x = a[\"\\u0063onstructor\"]", A_FORBIDDEN},
        {"x = a[\"con\\\nstructor\"]", A_FORBIDDEN},
        {"x = a[\"__pro\" + \"to__\"]", A_FORBIDDEN},
        {"x = a['call' + 'er']", A_FORBIDDEN},
        /* a name bound to a forbidden property name, before or after use */
        {"const k = 'constructor'; f[k]('return 1')()", A_FORBIDDEN},
        {"function g() { return f[k] }\nvar k = 'constr' + 'uctor';", A_FORBIDDEN},
        {"let k; k = '__proto__'; o[k]", A_FORBIDDEN},
        {"const {[k]: C} = f; const k = 'constructor'", A_FORBIDDEN},
        {"const k = 'constructor'; Object.getOwnPropertyDescriptor(f, k)", A_FORBIDDEN},
    };
    reject_all("default", cases, N(cases));
}

Test(javascript, escapes_in_identifiers_are_decoded)
{
    static const struct reject_case cases[] = {
        {"x = \\u0065val", N_FORBIDDEN},
        {"x = \\u{65}val", N_FORBIDDEN},
        {"x = \\u{0000065}v\\u0061l", N_FORBIDDEN},
        {"x = pr\\u006Fcess", N_FORBIDDEN},
        {"x = a.\\u0063onstructor", A_FORBIDDEN},
        {"x = a?.\\u{63}onstructor", A_FORBIDDEN},
        {"const {\\u0063onstructor: c} = f", A_FORBIDDEN},
        {"const r = \\u0072equire", N_FORBIDDEN},
        {"\\u006Dodule.require('fs')", N_FORBIDDEN},
    };
    reject_all("default", cases, N(cases));
    /* JavaScript does not normalise names: a fullwidth look-alike is a
     * different (undeclared) name for V8 too. */
    static const char *const ok[] = {"x = \xef\xbd\x85val"};
    accept_all("default", ok, N(ok));
}

/* ---- modules ---------------------------------------------------------- */

Test(javascript, default_rejects_modules)
{
    static const struct reject_case cases[] = {
        {"require(\"child_process\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"node:child_process\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(`child${\"_\"}process`)", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"child\" + \"_process\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"\\x63hild_process\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import(\"child\" + \"_process\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"fs/promises\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"fs\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"vm\").runInThisContext(\"1\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import x from 'child_process'", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import {exec} from 'node:child_process'", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import 'worker_threads'", SG_RULE_IMPORT_NOT_ALLOWED},
        {"export * from 'vm'", SG_RULE_IMPORT_NOT_ALLOWED},
        {"export {x} from 'net'", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"./local\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"../x\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"/usr/lib/x.js\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import(\"data:text/javascript,console.log(1)\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import(\"file:///etc/passwd\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(\"node:\")", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(name)", SG_RULE_IMPORT_DYNAMIC},
        {"require(\"child\" + suffix)", SG_RULE_IMPORT_DYNAMIC},
        {"import(name)", SG_RULE_IMPORT_DYNAMIC},
        {"require()", SG_RULE_IMPORT_DYNAMIC},
        {"require(...names)", SG_RULE_IMPORT_DYNAMIC},
        {"require`fs`", SG_RULE_IMPORT_DYNAMIC},
        {"require('crypto/../child_process')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require('path/./x')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require('path//x')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require('path/..')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"import('path/%2e%2e/vm')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require('path\\\\..\\\\vm')", SG_RULE_IMPORT_NOT_ALLOWED},
    };
    reject_all("default", cases, N(cases));
}

Test(javascript, require_and_module_only_in_their_plain_forms)
{
    static const struct reject_case cases[] = {
        {"const r = require; r('fs')", N_FORBIDDEN},
        {"require.call(null, 'path')", N_FORBIDDEN},
        {"require.apply(null, ['path'])", N_FORBIDDEN},
        {"require.resolve('path')", N_FORBIDDEN},
        {"require['resolve']('path')", N_FORBIDDEN},
        {"require.cache", N_FORBIDDEN},
        {"require.main", N_FORBIDDEN},
        {"(0, require)('path')", N_FORBIDDEN},
        {"new require('path')", N_FORBIDDEN},
        {"f(require)", N_FORBIDDEN},
        {"module.constructor._load(\"child_process\")", N_FORBIDDEN},
        {"module.constructor._load(\"child_process\")", A_FORBIDDEN},
        {"module.require('fs')", N_FORBIDDEN},
        {"module.children", N_FORBIDDEN},
        {"module.parent", N_FORBIDDEN},
        {"module.paths", N_FORBIDDEN},
        {"module['req' + 'uire']('fs')", N_FORBIDDEN},
        {"const m = module", N_FORBIDDEN},
        {"f(module)", N_FORBIDDEN},
        {"x = {module}", N_FORBIDDEN},
        /* the CommonJS wrapper's arguments: (exports, require, module, ...) */
        {"arguments[1]('child_process')", N_FORBIDDEN},
        {"const f = () => arguments[2].constructor", N_FORBIDDEN},
        {"const [e, r] = arguments", N_FORBIDDEN},
    };
    reject_all("default", cases, N(cases));
}

Test(javascript, default_accepts_allowed_modules)
{
    static const char *const ok[] = {
        "const crypto = require('crypto');\n"
        "const h = require('crypto').createHash('sha256').update('x').digest('hex');",
        "const path = require('path'); path.join('a', 'b')",
        "const { createHash } = require('node:crypto')",
        "const util = require(\"util\"); const { promisify } = util",
        "const zlib = require('zlib'); const { EventEmitter } = require('events')",
        "require(`url`)",
        "require('path' /* the path module */)",
        "import path from 'path'",
        "export { join } from 'path'",
        "export const x = 1",
    };
    accept_all("default", ok, N(ok));
}

Test(javascript, module_exports_forms_are_accepted)
{
    static const char *const ok[] = {
        "async function main(args) {\n  const { arg1, arg2 } = args;\n"
        "  return { result: arg1 + arg2 };\n}\nmodule.exports = { main };\n",
        "function main(args) { return 1 }\nmodule.exports = main;",
        "function main(args) { return 1 }\nexports.main = main;",
        "module.exports.main = function (args) { return args };",
        "module[\"exports\"] = { main: () => 1 };",
        "exports.__esModule = true;",
    };
    accept_all("default", ok, N(ok));
}

/* ---- ordinary code the default policy must accept ---------------------- */

Test(javascript, default_accepts_ordinary_code)
{
    static const char *const ok[] = {
        "class A extends B {\n  constructor(x) { super(x); this.x = x; }\n"
        "  get y() { return this._y }\n  set y(v) { this._y = v }\n"
        "  static z() { return new A(1) }\n  #p = 1;\n  m(k) { return this[k] + this.#p }\n}",
        "const o = { constructor: 1, caller: 2, get v() { return 1 }, set v(x) {} }",
        "const data = JSON.parse(s); const t = JSON.stringify(data, null, 2)",
        "const f = async (x) => { const r = await g(x); return r?.y ?? 0 }",
        "const {a, b: [c, d], ...rest} = obj; const [h, , ...tail] = arr",
        "const s = `a ${b} c ${d + 1}`",
        "for (let i = 0; i < arr.length; i++) { total += arr[i] }",
        "obj[key] = value; m[row.id] = 1; x = arr[arr.length - 1]",
        "const m = Math.max(...xs); const s = new Set(xs); const mp = new Map()",
        "const ok = /ab+c/gi.test(s) && /<!--/.test(t) && /-->/.test(t)",
        "const html = '<!-- comment -->' + \"-->\" + `<!--${x}-->`",
        "// <!-- not code\n/* --> */\nconst x = 1",
        "const merged = {...a, b: 1}; const all = [...xs, ...ys]",
        "const v = a?.b?.c; const w = a?.[0]; const r = f?.(x)",
        "for (const [k, v] of Object.entries(obj)) { out[k] = v * 2 }",
        "setTimeout(() => done(), 10); setInterval(tick, 100)",
        "function Point(x) { this.x = x }\nPoint.prototype.norm = function () { return this.x }",
        "const s = String.fromCharCode(65) + String(1) + 'x'.toUpperCase()",
        "x = typeof y === 'string' ? y.toLowerCase() : String(y)",
        "label: for (const x of xs) { if (x) continue label; }",
        "const d = new Date(); const n = Number.parseInt('12', 10); Array.from({length: 3})",
        "try { f() } catch (e) { console.log(e.message) } finally { g() }",
        "function* gen() { yield 1 } async function* agen() { yield* gen() }",
        "const big = 10n ** 20n; const h = 0xff; const o = 0o7; const b = 0b1",
        "x = a !== b && c >= d || e-- > 0",
        "#!/usr/bin/env node\nconsole.log(1)",
        "function f() { return arguments.length }",
        "class A { m() { return this } static s() { return [this] } }",
        "'use strict';\nfunction f() { return this }",
        "function f() { 'use strict'; return [1].map(function () { return this }) }",
        "const o = { m() { return this.x + this['y'] } }",
        "const o = { n: 0, add(k) { this.n += k; return this } };\n"
        "o.add(1).add(2); console.log(o.n, Object.keys(o), JSON.stringify(o))",
        "const o = { m() { return this } }",
        "const top = () => this; const self = this",
        "const k = 'name'; o[k] = 1; const other = 'constructor_name'; o[other] = 2",
        "if (key === '__proto__' || key === 'constructor') { skip(key) }",
        "obj.evaluate = 1; obj.functions = []; obj.processor = p",
        "const { evaluate, processData } = helpers",
    };
    accept_all("default", ok, N(ok));
}

/* ---- strict and permissive --------------------------------------------- */

Test(javascript, strict_rejects_computed_names_and_more)
{
    static const struct reject_case cases[] = {
        {"x = arr[i]", SG_RULE_REFLECTION_DYNAMIC},
        {"x = obj[key]", SG_RULE_REFLECTION_DYNAMIC},
        {"x = arr[i + 1]", SG_RULE_REFLECTION_DYNAMIC},
        {"x = obj['a' + k]", SG_RULE_REFLECTION_DYNAMIC},
        {"const {[k]: v} = obj", SG_RULE_REFLECTION_DYNAMIC},
        {"x = __dirname", N_FORBIDDEN},
        {"new Proxy({}, {})", N_FORBIDDEN},
        {"x = Foo.prototype", A_FORBIDDEN},
        {"require('zlib')", SG_RULE_IMPORT_NOT_ALLOWED},
    };
    reject_all("strict", cases, N(cases));
    static const char *const ok[] = {
        "x = arr[0] + arr[arr.length - 1] + arr[i - 1] + arr[i | 0] + arr[-1] + arr[(i * 2)]",
        "x = obj['name'] + obj[`key`]",
        "for (const v of arr) total += v",
        "const h = require('crypto').createHash('sha256')",
    };
    accept_all("strict", ok, N(ok));
}

Test(javascript, permissive_uses_its_deny_list)
{
    static const struct reject_case cases[] = {
        {"require('child_process')", SG_RULE_IMPORT_DENIED},
        {"require('node:vm')", SG_RULE_IMPORT_DENIED},
        {"require('worker_threads')", SG_RULE_IMPORT_DENIED},
        {"import('module')", SG_RULE_IMPORT_DENIED},
        {"require('./x')", SG_RULE_IMPORT_NOT_ALLOWED},
        {"require(name)", SG_RULE_IMPORT_DYNAMIC},
        {"process.binding('spawn_sync')", SG_RULE_CALL_FORBIDDEN},
        {"const p = process; p.kill(1)", SG_RULE_CALL_FORBIDDEN},
        {"function f() { return q.setuid(0) }\nvar q = process;", SG_RULE_CALL_FORBIDDEN},
        {"let q; q = process; const r = q; r.chdir('/')", SG_RULE_CALL_FORBIDDEN},
        {"const {binding: b} = process", SG_RULE_CALL_FORBIDDEN},
        {"process['bin' + 'ding']('x')", A_FORBIDDEN},
        {"globalThis[k]", SG_RULE_REFLECTION_DYNAMIC},
        {"process[k]", SG_RULE_REFLECTION_DYNAMIC},
        {"Reflect.get(f, 'constructor')", A_FORBIDDEN},
        {"Reflect.get(globalThis, k)", SG_RULE_REFLECTION_DYNAMIC},
        {"new Function('1')", N_FORBIDDEN},
        {"x.constructor", A_FORBIDDEN},
        {"Reflect.getPrototypeOf(f)", SG_RULE_CALL_FORBIDDEN},
    };
    reject_all("permissive", cases, N(cases));
    static const char *const ok[] = {
        "const fs = require('fs'); fs.writeFileSync('/tmp/x', 'y')",
        "const x = obj[key]; const h = process.env.HOME",
        "require('http2x')",
        "Reflect.get(o, 'name')",
    };
    accept_all("permissive", ok, N(ok));
}

/* ---- fail closed --------------------------------------------------------- */

static void expect_first(const char *src, const char *rule, uint32_t line, uint32_t col,
                         const char *msg_part)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_violations vs;
    struct sg_analysis_stats st;
    char got[2048];
    check(&p->javascript, src, &vs, &st);
    dump(&vs, got, sizeof(got));
    cr_assert_geq(vs.count, 1, "no violation for %s", src);
    cr_expect_str_eq(vs.items[0].rule, rule, "%s:%s", src, got);
    cr_expect_eq(vs.items[0].line, line, "%s:%s", src, got);
    cr_expect_eq(vs.items[0].column, col, "%s:%s", src, got);
    if (msg_part)
        cr_expect(strstr(vs.items[0].message, msg_part), "%s:%s", src, got);
    sg_violations_free(&vs);
    sg_policy_free(p);
}

Test(javascript, syntax_error_stops_the_analysis_at_the_first_error)
{
    static const char src[] = "const x = eval;\nif (x {\n  y();\n}\n";
    struct sg_policy *p = test_load_policy("default");
    struct sg_violations vs;
    struct sg_analysis_stats st;
    check(&p->javascript, src, &vs, &st);
    cr_assert_eq(vs.count, 1, "only the syntax error, not the eval before it");
    cr_assert_str_eq(vs.items[0].rule, SG_RULE_SYNTAX_ERROR);
    cr_assert_eq(vs.items[0].line, 2);
    sg_violations_free(&vs);
    sg_policy_free(p);
    expect_first("let x = (1;", SG_RULE_SYNTAX_ERROR, 1, 11, "missing");
    expect_first("x = 1;\nx = \"unterminated\n", SG_RULE_SYNTAX_ERROR, 2, 1, NULL);
}

Test(javascript, html_like_comments_and_jsx_are_rejected)
{
    expect_first("x = a <!-- b\ny()", SG_RULE_SYNTAX_ERROR, 1, 7, "<!--");
    expect_first("x = 1\n--> eval(1)\n", SG_RULE_SYNTAX_ERROR, 2, 1, "HTML-like");
    expect_first("x\n/*\n*/ --> `\neval(\"1\")\n//`\n", SG_RULE_SYNTAX_ERROR, 3, 4, "-->");
    expect_first("while (n --> 0) {}", SG_RULE_SYNTAX_ERROR, 1, 10, "-->");
    expect_first("x = `\\<!--${a <!-- b}`", SG_RULE_SYNTAX_ERROR, 1, 15, "<!--");
    expect_first("x = <div>{eval}</div>", SG_RULE_SYNTAX_ERROR, 1, 5, "JSX");
    expect_first("x = '<!--'; y = /-->/; // <!--\nz = 1 <!-- 2", SG_RULE_SYNTAX_ERROR, 2, 7,
                 "<!--");
    expect_first("x = `a${b}<!--${c}`; y = c-->d", SG_RULE_SYNTAX_ERROR, 1, 27, "-->");
}

Test(javascript, many_literals_with_comment_marks)
{
    /* each literal covers its own marks; the one in code is still found */
    size_t n = 3000, o = 0;
    char *s = malloc(n * 24 + 64);
    cr_assert(s);
    for (size_t i = 0; i < n; i++)
        o += (size_t)sprintf(s + o, "s%zu = '<!-- -->';\n", i % 10);
    struct sg_policy *p = test_load_policy("default");
    expect_accept_lp(&p->javascript, s);
    sprintf(s + o, "t = u --> 0;\n");
    expect_reject_lp(&p->javascript, s, SG_RULE_SYNTAX_ERROR);
    sg_policy_free(p);
    free(s);
}

Test(javascript, positions_are_code_points)
{
    expect_first("x = 1;\nconst y = eval;", N_FORBIDDEN, 2, 11, "'eval'");
    expect_first("const s = \"\xc3\xa9\xe2\x82\xac\"; eval", N_FORBIDDEN, 1, 17, NULL);
    struct sg_policy *p = test_load_policy("default");
    struct sg_violations vs;
    struct sg_analysis_stats st;
    check(&p->javascript, "a.b;\n  x.constructor", &vs, &st);
    cr_assert_eq(vs.count, 1);
    cr_assert_eq(vs.items[0].line, 2);
    cr_assert_eq(vs.items[0].column, 5);
    cr_assert_eq(vs.items[0].end_line, 2);
    cr_assert_eq(vs.items[0].end_column, 16);
    cr_assert_str_eq(vs.items[0].snippet, "constructor");
    sg_violations_free(&vs);
    /* reported in source order although the walk meets the outer node first */
    check(&p->javascript, "module.constructor._load('x')", &vs, &st);
    cr_assert_eq(vs.count, 3);
    for (size_t i = 1; i < vs.count; i++)
        cr_assert_lt(vs.items[i - 1].column, vs.items[i].column);
    sg_violations_free(&vs);
    sg_policy_free(p);
}

Test(javascript, messages_name_the_construct)
{
    expect_first("require('child_process')", SG_RULE_IMPORT_NOT_ALLOWED, 1, 9,
                 "require of module 'child_process' is not allowed");
    expect_first(
        "x.constructor", A_FORBIDDEN, 1, 3,
        "access to property 'constructor' is forbidden (reaches the Function constructor)");
    /* getPrototypeOf is a forbidden property on any object: reported at the name */
    expect_first("const O = Object; O.getPrototypeOf(x)", SG_RULE_ATTRIBUTE_FORBIDDEN, 1, 21,
                 "'getPrototypeOf'");
}

/* ---- limits --------------------------------------------------------------- */

static char *nested(size_t levels)
{
    char *s = malloc(2 * levels + 8);
    cr_assert(s);
    size_t o = 0;
    o += (size_t)sprintf(s, "x = ");
    for (size_t i = 0; i < levels; i++)
        s[o++] = '[';
    for (size_t i = 0; i < levels; i++)
        s[o++] = ']';
    s[o] = '\0';
    return s;
}

Test(javascript, depth_limit)
{
    struct sg_policy *p = test_load_policy("default");
    char *deep = nested(p->javascript.max_depth), *shallow = nested(40);
    expect_reject_lp(&p->javascript, deep, SG_RULE_DEPTH);
    struct sg_violations vs;
    struct sg_analysis_stats st;
    check(&p->javascript, shallow, &vs, &st);
    cr_assert_eq(vs.count, 0);
    cr_assert_gt(st.max_depth, 40);
    cr_assert_leq(st.max_depth, p->javascript.max_depth);
    sg_violations_free(&vs);
    free(deep);
    free(shallow);
    sg_policy_free(p);
}

Test(javascript, node_limit_and_stats)
{
    static const char pol[] =
        "{\"name\": \"t\", \"python\": {\"imports\": {\"mode\": \"allow\", \"modules\": "
        "[\"json\"]}},"
        " \"javascript\": {\"imports\": {\"mode\": \"allow\", \"modules\": [\"path\"]},"
        " \"limits\": {\"max_nodes\": 40}}}";
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_buf(pol, strlen(pol), "t", &p, &err), 0, "%s", err.msg);
    struct sg_violations vs;
    struct sg_analysis_stats st;
    check(&p->javascript, "x = [1, 2, 3]", &vs, &st);
    cr_assert_eq(vs.count, 0);
    cr_assert_gt(st.nodes, 5);
    cr_assert_lt(st.nodes, 40);
    sg_violations_free(&vs);
    expect_reject_lp(&p->javascript,
                     "x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]",
                     SG_RULE_NODES);
    sg_policy_free(p);
}

/* tree-sitter 0.20.7 corrupts its heap when error recovery meets ~65535
 * subtrees on its stack (ts_util.h): these must be a violation, not a
 * crash (the test runs under ASan). */
Test(javascript, parse_stack_guard)
{
    struct sg_policy *p = test_load_policy("permissive");
    static const struct {
        const char *prefix, *unit;
        size_t n;
    } bombs[] = {{"x = ", "[", 66000},
                 {"", "x:", 34000},
                 {"", "if(", 34000},
                 {"x = ", "!", 66000},
                 {"x = ", "`${", 34000}};
    for (size_t i = 0; i < N(bombs); i++) {
        char *s = test_repeat(bombs[i].prefix, bombs[i].unit, bombs[i].n, NULL);
        expect_reject_lp(&p->javascript, s, SG_RULE_DEPTH);
        free(s);
    }
    /* a long ordinary program is parsed under the guard and accepted */
    char *big = test_repeat("",
                            "function f(a, b) { const r = [a, b].map((x) => x * 2); "
                            "return { r, s: `${a}-${b}` } }\n",
                            2500, NULL);
    cr_assert_gt(strlen(big), 100000);
    expect_accept_lp(&p->javascript, big);
    free(big);
    sg_policy_free(p);
}

Test(javascript, folding_past_its_bound_is_a_violation)
{
    /* an attacker cannot pad a name until it counts as "dynamic" */
    size_t terms = 300;
    char *s = malloc(terms * 6 + 64);
    cr_assert(s);
    size_t o = (size_t)sprintf(s, "x = a['con' ");
    for (size_t i = 0; i < terms; i++)
        o += (size_t)sprintf(s + o, "+ '' ");
    sprintf(s + o, "+ 'structor']");
    struct sg_policy *p = test_load_policy("permissive");
    expect_reject_lp(&p->javascript, s, SG_RULE_REFLECTION_DYNAMIC);
    sg_policy_free(p);
    free(s);
}

/* ---- the pipeline and threads --------------------------------------------- */

Test(javascript, through_sg_analyze)
{
    struct sg_policy *p = test_load_policy("default");
    struct sg_analysis a;
    struct sg_error err = {0};
    static const char ok[] = "function main(args) { return args.x }\nmodule.exports = { main };";
    cr_assert_eq(sg_analyze(p, SG_LANG_JAVASCRIPT, ok, strlen(ok), &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.accepted, 1);
    cr_assert_gt(a.stats.nodes, 10);
    sg_analysis_free(&a);
    static const char bad[] = "require('child_process').execSync('id')";
    cr_assert_eq(sg_analyze(p, SG_LANG_JAVASCRIPT, bad, strlen(bad), &a, &err), 0, "%s", err.msg);
    cr_assert_eq(a.accepted, 0);
    cr_assert_str_eq(a.violations.items[0].rule, SG_RULE_IMPORT_NOT_ALLOWED);
    sg_analysis_free(&a);
    sg_policy_free(p);
}

struct thread_arg {
    const struct sg_lang_policy *lp;
    int failures;
};

static void *hammer(void *p)
{
    struct thread_arg *t = p;
    static const char *const srcs[] = {"x.constructor", "const p = require('path')",
                                       "require('vm')", "if ("};
    static const size_t want[] = {1, 0, 1, 1};
    for (int i = 0; i < 200; i++) {
        struct sg_violations vs = {0};
        struct sg_analysis_stats st = {0};
        size_t k = (size_t)i % 4;
        if (sg_javascript_check(t->lp, srcs[k], strlen(srcs[k]), &vs, &st, NULL) != 0 ||
            vs.count != want[k])
            t->failures++;
        sg_violations_free(&vs);
    }
    return NULL;
}

Test(javascript, concurrent_checks_agree)
{
    struct sg_policy *p = test_load_policy("default");
    pthread_t th[4];
    struct thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thread_arg){.lp = &p->javascript};
        cr_assert_eq(pthread_create(&th[i], NULL, hammer, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(pthread_join(th[i], NULL), 0);
        cr_assert_eq(args[i].failures, 0);
    }
    sg_policy_free(p);
}

/* ---- issue 9: globals through this, key scopes, the stack-trace hook ---- */

Test(javascript, sloppy_this_reads_globals)
{
    static const struct reject_case cases[] = {
        {"function f() { return this.process; }", N_FORBIDDEN},
        {"function f() { return this['fetch']; }", SG_RULE_NETWORK_DISABLED},
        {"function f() { return (this).WebSocket; }", N_FORBIDDEN},
        /* a class key is evaluated in the enclosing (sloppy) function */
        {"function f() { class A { [this.process.pid]() {} } }", N_FORBIDDEN},
        {"function f() { class A { [this.process] = 1; } }", N_FORBIDDEN},
        /* at the top level a key's arguments are the module wrapper's */
        {"class A { [arguments[1]]() {} }", N_FORBIDDEN},
        {"const o = { [arguments[1]]() {} };", N_FORBIDDEN},
    };
    static const char *const ok[] = {
        "class A { m() { return this.process; } }",
        "'use strict'; function f() { return this.process; }",
        "function f() { class A { m() { return arguments.length + this.x; } } }",
        "const o = { n: 1, get() { return this.n; } };",
    };
    reject_all("default", cases, N(cases));
    accept_all("default", ok, N(ok));
}

Test(javascript, stack_trace_hook_in_any_spelling)
{
    static const struct reject_case cases[] = {
        {"const n = 'prepareStackTrace';", A_FORBIDDEN},
        {"const n = `prepare${''}StackTrace`;", A_FORBIDDEN},
        {"Object.fromEntries([['prepare' + 'StackTrace', f]]);", A_FORBIDDEN},
        {"const k = ['capture', 'StackTrace'].join('');", A_FORBIDDEN},
        {"Error.captureStackTrace(o);", A_FORBIDDEN},
        {"Object.assign(Error, {});", N_FORBIDDEN},
        {"const E = Error;", N_FORBIDDEN},
        {"Error[k] = f;", SG_RULE_REFLECTION_DYNAMIC},
        {"x[{ toString() { return 'a'; } }];", SG_RULE_REFLECTION_DYNAMIC},
        {"x[['a']];", SG_RULE_REFLECTION_DYNAMIC},
        {"const s = 'constr' + 'uctor';", A_FORBIDDEN},
    };
    static const char *const ok[] = {
        "throw new Error('bad input');",
        "class AppError extends Error {}",
        "if (e instanceof Error) { console.log(Error.name, e.message); }",
        "const r = Error('x');",
        "if (key === '__proto__' || key === 'constructor') { skip(key); }",
        "switch (k) { case 'constructor': break; }",
        "console.log(e.stack);",
    };
    reject_all("default", cases, N(cases));
    accept_all("default", ok, N(ok));
}

Test(javascript, reflective_getters_and_network)
{
    static const struct reject_case cases[] = {
        {"const { getPrototypeOf: g } = Object;", A_FORBIDDEN},
        {"Object.getOwnPropertyDescriptor(Object, 'getPrototypeOf').value(f);", A_FORBIDDEN},
        {"class R extends Object { static p(x) { return super.getPrototypeOf(x); } }", A_FORBIDDEN},
        {"const [k] = ['getOwnPropertyNames']; Object[k](x);", A_FORBIDDEN},
        {"fetch('http://127.0.0.1/');", SG_RULE_NETWORK_DISABLED},
        {"new WebSocket('ws://127.0.0.1/');", N_FORBIDDEN},
        {"const X = XMLHttpRequest;", N_FORBIDDEN},
    };
    static const char *const ok[] = {
        "const keys = Object.keys(o); const vals = Object.values(o);",
        "const d = Object.getOwnPropertyDescriptor(o, 'name');",
        "const m = new Map(Object.entries({ a: 1 }));",
    };
    reject_all("default", cases, N(cases));
    accept_all("default", ok, N(ok));
}

/* Network modules and fetch: network.disabled (saying how an operator turns
 * network on) without network; axios, https, http and fetch in the networked
 * variant. Other forbidden names stay name.forbidden, and a policy without
 * network_names (strict) keeps fetch a plain forbidden name. */
Test(javascript, network_modules_need_network)
{
    struct sg_policy *p = test_load_policy("default");
    expect_reject_lp(&p->javascript, "const axios = require('axios');", SG_RULE_NETWORK_DISABLED);
    expect_reject_lp(&p->javascript, "const https = require('node:https');",
                     SG_RULE_NETWORK_DISABLED);
    expect_reject_lp(&p->javascript, "fetch('http://127.0.0.1/');", SG_RULE_NETWORK_DISABLED);
    expect_first("const r = fetch('https://x.example/');", SG_RULE_NETWORK_DISABLED, 1, 11,
                 "\"network\": {\"allow\"");
    expect_first("eval('1');", SG_RULE_NAME_FORBIDDEN, 1, 1, "'eval' is forbidden");
    struct sg_policy *strict = test_load_policy("strict");
    expect_reject_lp(&strict->javascript, "fetch('http://127.0.0.1/');", SG_RULE_NAME_FORBIDDEN);
    sg_policy_free(strict);
    const struct sg_lang_policy *net = &p->network->javascript;
    cr_expect(net->runtime.network);
    expect_accept_lp(net, "const axios = require('axios');\naxios.get('https://api.example.com');");
    expect_accept_lp(net, "const https = require('https');\nhttps.get('https://x.example');");
    expect_accept_lp(net, "async function main() { return (await fetch('http://x/')).status; }");
    expect_reject_lp(net, "require('net');", SG_RULE_IMPORT_NOT_ALLOWED);
    expect_reject_lp(net, "require('child_process');", SG_RULE_IMPORT_NOT_ALLOWED);
    sg_policy_free(p);
}
