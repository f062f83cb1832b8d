/* Red-team regressions: each attack here was accepted by the analyzers at
 * some point (constant names spelled through other names, string-based
 * attribute access outside str.format, ...). Every case must be rejected
 * by the shipped `default` policy with the rule given; the ordinary
 * programs next to them must stay accepted. Tests run from the repository
 * root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "test_helpers.h"

struct rt_case {
    const char *src;
    const char *rule; /* NULL: must be accepted */
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect_case(const struct sg_policy *p, enum sg_lang lang, const struct rt_case *c)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    char got[2048] = "";
    size_t o = 0;
    cr_assert_eq(sg_analyze(p, lang, c->src, strlen(c->src), &a, &err), 0, "%s", err.msg);
    int found = 0;
    for (size_t i = 0; i < a.violations.count; i++) {
        const struct sg_violation *v = &a.violations.items[i];
        found |= c->rule && strcmp(v->rule, c->rule) == 0;
        if (o < sizeof(got))
            o += (size_t)snprintf(got + o, sizeof(got) - o, "\n  %u:%u %s: %s", v->line,
                                  v->column, v->rule, v->message);
    }
    if (c->rule)
        cr_expect(found, "expected %s for:\n%s\ngot:%s", c->rule, c->src, got);
    else
        cr_expect(a.accepted, "expected no violation for:\n%s\ngot:%s", c->src, got);
    sg_analysis_free(&a);
}

static void expect_cases(const char *policy, enum sg_lang lang, const struct rt_case *cases,
                         size_t n)
{
    struct sg_policy *p = test_load_policy(policy);
    for (size_t i = 0; i < n; i++)
        expect_case(p, lang, &cases[i]);
    sg_policy_free(p);
}

#define JS SG_LANG_JAVASCRIPT
#define PY SG_LANG_PYTHON
#define A_FORBIDDEN SG_RULE_ATTRIBUTE_FORBIDDEN
#define A_DUNDER SG_RULE_ATTRIBUTE_DUNDER
#define DYNAMIC SG_RULE_REFLECTION_DYNAMIC

/* ---- JavaScript: names spelled through constant bindings ---------------- */

Test(redteam_js, constants_through_chained_bindings)
{
    static const struct rt_case cases[] = {
        {"const a = \"constr\"; const b = a + \"uctor\"; (()=>1)[b](\"return 1\")()", A_FORBIDDEN},
        {"let a = \"constr\"; let b = a + \"uctor\"; (()=>1)[b](\"return 1\")()", A_FORBIDDEN},
        {"var a = \"constr\"; var b = a + \"uctor\"; (()=>1)[b](\"return 1\")()", A_FORBIDDEN},
        {"const a = \"constr\"; (()=>1)[a + \"uctor\"](\"x\")()", A_FORBIDDEN},
        {"const a = \"con\", b = `${a}str`, c = b.concat(\"uctor\"); ({})[c]", A_FORBIDDEN},
        /* a use before the declarations, inside a function */
        {"function f(o) { return o[b] }\nconst a = \"__pro\"; const b = a + \"to__\";", A_FORBIDDEN},
        {"function f(o) { return o[a + \"to__\"] }\nconst a = \"__pro\";", A_FORBIDDEN},
        {"const parts = [\"con\", \"structor\"]; (()=>1)[parts.join(\"\")](\"x\")()", A_FORBIDDEN},
        {"const a = \"constr\"; const b = a + \"uctor\"; Object.defineProperty({}, b, {})",
         A_FORBIDDEN},
        {"const a = \"1+\"; const b = a + \"1\"; setTimeout(b, 1)", SG_RULE_CALL_FORBIDDEN},
        /* a name rebound later: any binding that spells a forbidden name counts */
        {"let k = \"x\"; k = \"constr\" + \"uctor\"; (()=>1)[k](\"x\")()", A_FORBIDDEN},
        /* a cycle or a chain past the folding bounds fails closed */
        {"const a = b + \"x\"; const b = a + \"y\"; ({})[a]", DYNAMIC},
        {"const a = b + \"x\"; const b = a + \"y\"; ({})[a + \"z\"]", DYNAMIC},
    };
    expect_cases("default", JS, cases, N(cases));
}

Test(redteam_js, string_methods_fold)
{
    static const struct rt_case cases[] = {
        {"(()=>1)[\"xconstructor\".slice(1)](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"xconstructorx\".substring(12, 1)](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"xconstructorzz\".substr(1, 11)](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"conXtructor\".replace(\"X\", \"s\")](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"cXnstructXr\".replaceAll(\"X\", \"o\")](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"\" || \"constructor\"](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[\"a\" && \"constructor\"](\"x\")()", A_FORBIDDEN},
        {"(()=>1)[null ?? \"constructor\"](\"x\")()", A_FORBIDDEN},
        {"({})[\"__proto_X\".replace(\"X\", \"_\")]", A_FORBIDDEN},
    };
    expect_cases("default", JS, cases, N(cases));
}

Test(redteam_js, ordinary_programs_stay_accepted)
{
    static const struct rt_case cases[] = {
        {"const s = \"hello world\"; console.log(s.slice(0, 5), s.replace(\"o\", \"0\"))", NULL},
        {"const key = \"name\"; const o = {name: 1}; console.log(o[key], o[key + \"x\"])", NULL},
        {"const p = require(\"path\"); const k = \"join\"; p[k](\"a\", \"b\")", NULL},
        {"function tick() {} setTimeout(tick, 1); setTimeout(() => 1, 2)", NULL},
        {"const rows = [{a: 1, b: \"x\"}, {a: 2, b: \"y\"}];\n"
         "const byB = rows.reduce((acc, r) => { acc[r.b] = (acc[r.b] || 0) + r.a; return acc; }, {});\n"
         "const cols = Object.keys(rows[0]); const out = {};\n"
         "for (const c of cols) out[c] = rows.map((r) => r[c]);\n"
         "const text = JSON.stringify(out).toUpperCase().split(\",\").join(\";\");\n"
         "module.exports = { main: () => [byB, text] };",
         NULL},
        {"async function fetchAll(ids) {\n"
         "  const results = await Promise.all(ids.map(async (id) => ({ id, v: id * 2 })));\n"
         "  return results.filter((r) => r.v > 2).sort((a, b) => b.v - a.v);\n"
         "}\n"
         "class Acc { constructor() { this.total = 0 } add(x) { this.total += x; return this } }\n"
         "const { createHash } = require(\"crypto\");\n"
         "const h = createHash(\"sha256\").update(JSON.parse('\"x\"')).digest(\"hex\");\n"
         "exports.main = async () => [await fetchAll([1, 2, 3]), new Acc().add(2).total, h];",
         NULL},
        {"const prefix = \"col_\"; const names = [\"a\", \"b\"].map((n) => prefix + n);\n"
         "const t = {}; for (let i = 0; i < names.length; i++) t[names[i]] = i;\n"
         "const label = `${prefix}${names.length}`; t[label] = \"x\".padStart(3, \"-\");",
         NULL},
    };
    expect_cases("default", JS, cases, N(cases));
}
