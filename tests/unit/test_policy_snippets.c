/* Real code-component snippets against the shipped default policy: RAGFlow's
 * template and code-tool examples, Dify's default code-node code, and the
 * data-job idioms reviewed for allow-list gaps (policies/README.md,
 * "Reviewed snippets") are accepted; the modules added for them do not open
 * a way to os, subprocess or the interpreter's internals. */
#include <criterion/criterion.h>
#include <string.h>

#include "analyze.h"
#include "rules.h"
#include "test_helpers.h"

static void expect_verdict(const struct sg_policy *p, enum sg_lang lang, const char *src,
                           int accepted, const char *rule)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), &a, &err), 0, "%s", err.msg);
    char got[512] = "";
    for (size_t i = 0; i < a.violations.count; i++) {
        size_t n = strlen(got);
        snprintf(got + n, sizeof(got) - n, " [%s %s]", a.violations.items[i].rule,
                 a.violations.items[i].message);
    }
    cr_expect_eq(a.accepted, accepted, "%s:\n%s\n got:%s", accepted ? "rejected" : "accepted", src,
                 got);
    if (rule && !accepted)
        cr_expect(strstr(got, rule), "expected %s for:\n%s\n got:%s", rule, src, got);
    sg_analysis_free(&a);
}

/* RAGFlow: the code tool's prompt examples (agent/tools/code_exec.py), its
 * default script, and the code of its stock-market template. */
static const char *const ragflow_ok[] = {
    "def main() -> dict:\n"
    "    \"\"\"\n    Generate Fibonacci numbers within 100.\n    \"\"\"\n"
    "    def fibonacci_recursive(n):\n        if n <= 1:\n            return n\n"
    "        else:\n            return fibonacci_recursive(n-1) + fibonacci_recursive(n-2)\n"
    "    return {\n        \"result\": fibonacci_recursive(100),\n    }\n",
    "def main() -> dict:\n    import matplotlib\n    matplotlib.use(\"Agg\")\n"
    "    import matplotlib.pyplot as plt\n    import pandas as pd\n\n"
    "    df = pd.DataFrame({\"x\": [1, 2, 3, 4], \"y\": [10, 20, 25, 30]})\n"
    "    fig, ax = plt.subplots()\n    ax.plot(df[\"x\"], df[\"y\"])\n"
    "    ax.set_title(\"Sample Chart\")\n"
    "    fig.savefig(\"artifacts/chart.png\", dpi=150, bbox_inches=\"tight\")\n"
    "    plt.close(fig)\n    return {\"summary\": \"Chart saved to artifacts/chart.png\"}\n",
    "def main(arg1: str, arg2: str) -> dict: return {\"result\": arg1 + arg2}\n",
    "import re\n\ndef format_number(value: str) -> str:\n    try:\n        num = float(value)\n"
    "        if num.is_integer():\n            return f\"{int(num):,}\"\n"
    "        else:\n            return f\"{num:,.2f}\"\n    except:\n        return value\n\n"
    "def main(input_text: str):\n    date_pattern = r\"\\d{4}-\\d{2}-\\d{2}\"\n"
    "    dates = re.findall(date_pattern, input_text)\n"
    "    return format_number(dates[0] if dates else \"0\")\n",
};

/* Dify's code node: its default Python and JavaScript code. */
static const char *const dify_py = "\ndef main(arg1: str, arg2: str):\n    return {\n"
                                   "        \"result\": arg1 + arg2,\n    }\n";
static const char *const dify_js = "\nfunction main({arg1, arg2}) {\n    return {\n"
                                   "        result: arg1 + arg2\n    }\n}\n";

/* Data-job idioms the review added to the default allow-list. */
static const char *const data_ok[] = {
    /* pathlib inside the workspace */
    "from pathlib import Path\n\ndef main(rows):\n    out = Path('artifacts')\n"
    "    out.mkdir(exist_ok=True)\n    (out / 'rows.csv').write_text('\\n'.join(rows))\n"
    "    return sorted(p.name for p in Path('.').iterdir())\n",
    /* input files listed with glob, compressed payloads */
    "import glob, gzip, zlib, base64\n\ndef main(blob):\n"
    "    names = sorted(glob.glob('*.csv'))\n"
    "    raw = gzip.decompress(base64.b64decode(blob))\n"
    "    return {'files': names, 'crc': zlib.crc32(raw)}\n",
    /* XML from an upstream tool, dates in any format and time zone */
    "import xml.etree.ElementTree as ET\nfrom dateutil import parser\nimport pytz\n\n"
    "def main(xml):\n    root = ET.fromstring(xml)\n"
    "    return [parser.parse(e.text).astimezone(pytz.utc).isoformat() for e in root]\n",
};

/* What the added modules must not open. */
static const struct {
    const char *src, *rule;
} escapes[] = {
    {"import pathlib\n\ndef main():\n    pathlib.os.system('id')\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"from pathlib import os\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"from glob import os as o\no.system('x')\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import gzip\ngzip.os.popen('id')\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import xml.etree.ElementTree as ET\nET.os\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"from dateutil import tz\ntz.os\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import xml.sax\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import xml\nxml.dom.minidom\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import pathlib\nP = pathlib.Path\nP.__init__.__globals__\n", SG_RULE_ATTRIBUTE_FORBIDDEN},
    {"import shutil\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import sqlite3\n", SG_RULE_IMPORT_NOT_ALLOWED},
    {"import tempfile\n", SG_RULE_IMPORT_NOT_ALLOWED},
};

Test(policy_snippets, ragflow_examples_and_data_idioms_are_accepted)
{
    struct sg_policy *p = test_load_policy("default");
    for (size_t i = 0; i < sizeof(ragflow_ok) / sizeof(*ragflow_ok); i++)
        expect_verdict(p, SG_LANG_PYTHON, ragflow_ok[i], 1, NULL);
    for (size_t i = 0; i < sizeof(data_ok) / sizeof(*data_ok); i++)
        expect_verdict(p, SG_LANG_PYTHON, data_ok[i], 1, NULL);
    expect_verdict(p, SG_LANG_PYTHON, dify_py, 1, NULL);
    expect_verdict(p, SG_LANG_JAVASCRIPT, dify_js, 1, NULL);
    sg_policy_free(p);
}

Test(policy_snippets, the_added_modules_open_no_escape)
{
    struct sg_policy *p = test_load_policy("default");
    for (size_t i = 0; i < sizeof(escapes) / sizeof(*escapes); i++)
        expect_verdict(p, SG_LANG_PYTHON, escapes[i].src, 0, escapes[i].rule);
    sg_policy_free(p);
}

Test(policy_snippets, strict_stays_without_file_io)
{
    struct sg_policy *p = test_load_policy("strict");
    expect_verdict(p, SG_LANG_PYTHON, data_ok[0], 0, SG_RULE_IMPORT_NOT_ALLOWED);
    sg_policy_free(p);
}
