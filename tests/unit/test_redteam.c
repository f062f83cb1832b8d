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
            o += (size_t)snprintf(got + o, sizeof(got) - o, "\n  %u:%u %s: %s", v->line, v->column,
                                  v->rule, v->message);
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
        {"function f(o) { return o[b] }\nconst a = \"__pro\"; const b = a + \"to__\";",
         A_FORBIDDEN},
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

/* Defining the stack-trace hook through an object literal, not a member
 * write: call sites expose the (sloppy) module wrapper and its arguments. */
Test(redteam_js, stack_trace_hook_defined_by_literal)
{
    static const struct rt_case cases[] = {
        {"Object.assign(Error, {prepareStackTrace: (e, s) => s});", A_FORBIDDEN},
        {"Object.defineProperties(Error, {prepareStackTrace: {value: (e, s) => s}});", A_FORBIDDEN},
        {"Object.assign(Error, {prepareStackTrace(e, s) { return s }});", A_FORBIDDEN},
        {"Object.assign(Error, {\"prepareStackTrace\": 1});", A_FORBIDDEN},
        {"Object.assign(Error, {[\"prepare\" + \"StackTrace\"]: 1});", A_FORBIDDEN},
        {"class A { constructor() { this.x = 1 } static create() { return new A() } }\n"
         "const o = {constructor: 1, name: \"x\", toString() { return \"o\" }};",
         NULL},
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
         "const byB = rows.reduce((acc, r) => { acc[r.b] = (acc[r.b] || 0) + r.a; return acc; }, "
         "{});\n"
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

/* ---- Python: attribute paths in string arguments ------------------------ */

Test(redteam_py, attribute_paths_in_string_arguments)
{
    static const struct rt_case cases[] = {
        {"import string\nstring.Formatter().get_field(\"0.__class__\", [1], {})\n", A_DUNDER},
        {"import string\na = \"0.__cla\"\nb = a + \"ss__\"\n"
         "string.Formatter().get_field(b, [1], {})\n",
         A_DUNDER},
        {"import string\nstring.Formatter().get_field(*[\"0.__init__.__globals__\", [1], {}])\n",
         A_FORBIDDEN},
        {"import string\nlist(string.Formatter().parse(\"{0.__class__}\"))\n", A_DUNDER},
        /* pandas reads a string function name with getattr */
        {"import pandas as pd\npd.Series([1]).agg(\"__reduce_ex__\", 2)\n", A_FORBIDDEN},
        {"import pandas as pd\npd.DataFrame().apply(func=\"gi_frame\")\n", A_FORBIDDEN},
        /* a literal too long to fold is read as written */
        {"import string\nstring.Formatter().get_field(\"0.__class__\" \"                    "
         "                                                                                "
         "                                                                                "
         "                                                                                "
         "                                                                                "
         "                                                                                "
         "                                                                      \", [1], {})\n",
         A_DUNDER},
    };
    expect_cases("default", PY, cases, N(cases));
}

Test(redteam_py, ordinary_strings_and_programs_stay_accepted)
{
    static const struct rt_case cases[] = {
        {"1 + 1\nx = 'a' * 1024\ny = 60 * 60\n", NULL},
        {"import re\nre.compile(r\"\\d+\")\nopen(\"artifacts/out.csv\", \"w\")\n", NULL},
        {"class O:\n    name = 1\nobj = O()\nprint(getattr(obj, \"name\", None))\n", NULL},
        /* bare dunders in text are not attribute steps; f-string fields are code */
        {"if __name__ == \"__main__\":\n    print(\"running __main__; see __init__\")\n", NULL},
        {"class A:\n    def __init__(self):\n        self.v = 1\n"
         "print(f\"{type(A()).__name__} has {A().v}\", \"the mro\")\n",
         NULL},
        {"async def f(n):\n    return n\nasync def g():\n    return [await f(i) for i in "
         "range(3)]\n"
         "def h(v):\n    match v:\n        case {\"k\": x}:\n            return f\"{x!r:>10}\"\n"
         "        case [a, *rest]:\n            return a\n        case _:\n            return "
         "None\n",
         NULL},
        {"import pandas as pd\nimport numpy as np\nimport matplotlib\nmatplotlib.use(\"Agg\")\n"
         "import matplotlib.pyplot as plt\n"
         "df = pd.DataFrame({\"city\": [\"a\", \"b\", \"a\"], \"sales\": [1.0, 2.5, 3.0]})\n"
         "g = df.groupby(\"city\", as_index=False).agg(total=(\"sales\", \"sum\"))\n"
         "m = df.merge(g, on=\"city\", how=\"left\").rename(columns={\"sales\": \"s\"})\n"
         "m[\"pct\"] = m[\"s\"] / m[\"total\"]\n"
         "ax = m.plot(kind=\"bar\", x=\"city\", y=\"pct\", title=\"Share\")\n"
         "plt.style.use(\"ggplot\"); plt.tight_layout(); plt.savefig(\"artifacts/share.png\")\n"
         "a = np.arange(12).reshape(3, 4); w, v = np.linalg.eigh((a.T @ a).astype(float))\n"
         "m.to_csv(\"artifacts/out.csv\", index=False)\n"
         "print(\"{:.2f}\".format(float(np.mean(a))), \"%s-%d\" % (\"a\", 1), w.round(3))\n",
         NULL},
        {"import json\nfrom collections import Counter, defaultdict\n"
         "data = json.loads('{\"items\": [{\"k\": \"a\", \"v\": 1}]}')\n"
         "by = defaultdict(list)\nfor it in data[\"items\"]:\n    by[it[\"k\"]].append(it[\"v\"])\n"
         "print(json.dumps({k: sum(v) for k, v in by.items()}, indent=2), "
         "Counter(\"abca\").most_common(1))\n",
         NULL},
    };
    expect_cases("default", PY, cases, N(cases));
}

/* Library functions of allowed packages that start programs or unpickle:
 * matplotlib's movie writers run rcParams["animation.ffmpeg_path"] (or any
 * argv a MovieWriter subclass returns), numpy.testing.runstring execs. */
Test(redteam_py, library_sinks_in_allowed_packages)
{
    static const struct rt_case cases[] = {
        {"import matplotlib.animation as animation\n", SG_RULE_CALL_FORBIDDEN},
        {"from matplotlib.animation import FFMpegWriter\n", SG_RULE_CALL_FORBIDDEN},
        {"import matplotlib.pyplot as plt\nplt.matplotlib.animation.FuncAnimation\n",
         SG_RULE_CALL_FORBIDDEN},
        {"import matplotlib\nmatplotlib.cbook._check_and_log_subprocess([\"id\"], None)\n",
         SG_RULE_CALL_FORBIDDEN},
        {"import matplotlib.texmanager\n", SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nnp.testing.runstring(\"x = 1\", {})\n", SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nnp.testing.extbuild.build_and_import_extension(\"m\", [])\n",
         SG_RULE_CALL_FORBIDDEN},
        {"import pandas as pd\npd.DataFrame().style.from_custom_template(\".\", \"t.tpl\")\n",
         A_FORBIDDEN},
        {"import numpy as np\nnp.load(\"x.npy\", allow_pickle=True)\n", SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nnp.load(\"x.npy\", None, True)\n", SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nkw = {\"allow_pickle\": True}\nnp.load(\"x.npy\", **kw)\n",
         SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nnp.lib.format.read_array(open(\"x\", \"rb\"), True)\n",
         SG_RULE_CALL_FORBIDDEN},
        {"import numpy as np\nnp.load(\"x.npy\")\nnp.load(\"y.npy\", allow_pickle=False)\n", NULL},
        /* the testing package holds runstring/extbuild: denied as a whole */
        {"import numpy as np\nnp.testing.assert_allclose([1.0], [1.0])\n",
         SG_RULE_ATTRIBUTE_CAPABILITY},
        {"import matplotlib.pyplot as plt\nplt.style.use(\"ggplot\")\nplt.plot([1, 2])\n"
         "plt.savefig(\"artifacts/p.png\")\n",
         NULL},
    };
    expect_cases("default", PY, cases, N(cases));
}
