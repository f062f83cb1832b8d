/* Unit tests of the import list the analysis hands the gateway (which sends
 * it to the executor to choose a warm pool flavour): top-level names, each
 * once, only what the executor accepts, bounded. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "imports.h"

static struct sg_policy *deny_policy(void)
{
    /* a deny-list policy: every module is allowed unless listed */
    const char *s = "{\"name\": \"t\", \"python\": {\"imports\": {\"mode\": \"deny\", \"modules\": "
                    "[\"ctypes\"]}}, \"javascript\": {\"imports\": {\"mode\": \"deny\", "
                    "\"modules\": [\"child_process\"]}}}";
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_buf(s, strlen(s), "t", &p, &err), 0, "%s", err.msg);
    return p;
}

static const char *imports_of(enum sg_lang lang, const char *src)
{
    static char out[SG_IMPORTS_TEXT_MAX];
    struct sg_policy *p = deny_policy();
    struct sg_analysis a;
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), &a, NULL), 0);
    cr_assert(a.accepted, "rejected: %s", a.violations.count ? a.violations.items[0].message : "");
    snprintf(out, sizeof(out), "%s", a.stats.imports.text);
    sg_analysis_free(&a);
    sg_policy_free(p);
    return out;
}

Test(imports, python_top_level_names_once_in_order)
{
    cr_assert_str_eq(imports_of(SG_LANG_PYTHON,
                                "import pandas as pd\nimport numpy.linalg\nfrom matplotlib "
                                "import pyplot\nimport json, pandas.io\nimport numpy\n"),
                     "pandas,numpy,matplotlib,json");
    cr_assert_str_eq(imports_of(SG_LANG_PYTHON, "x = 1\n"), "");
}

Test(imports, python_resolved_dynamic_imports)
{
    cr_assert_str_eq(
        imports_of(SG_LANG_PYTHON, "import importlib\nm = importlib.import_module('pandas')\n"),
        "importlib,pandas");
}

Test(imports, javascript_specifiers)
{
    cr_assert_str_eq(imports_of(SG_LANG_JAVASCRIPT,
                                "const a = require('axios');\nconst fs = require('node:fs');\n"
                                "const x = require('lodash/fp');\nimport y from '@scope/pkg/sub';\n"
                                "const b = require('axios/lib/x');\n"),
                     "axios,fs,lodash,@scope/pkg");
}

static void add(struct sg_imports *im, const char *name)
{
    sg_imports_add(im, name, strlen(name));
}

Test(imports, add_bounds_and_filters)
{
    struct sg_imports im = {0};
    add(&im, "");
    sg_imports_add(NULL, "pandas", 6); /* no-op */
    add(&im, "p\xc3\xa4ndas");
    add(&im, "a b");
    add(&im, "a,b");
    char longname[SG_IMPORT_NAME_MAX + 2];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[SG_IMPORT_NAME_MAX + 1] = '\0';
    add(&im, longname);
    cr_assert_str_eq(im.text, "");
    cr_assert_eq(im.count, 0);
    cr_assert_eq(im.dropped, 4, "non-ASCII, space, comma, too long");
    longname[SG_IMPORT_NAME_MAX] = '\0';
    add(&im, longname);
    cr_assert_eq(im.count, 1, "exactly the maximum length fits");
    add(&im, longname);
    cr_assert_eq(im.count, 1, "each name once");
    memset(&im, 0, sizeof(im));
    char name[16];
    for (int i = 0; i < SG_IMPORTS_MAX + 10; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        add(&im, name);
    }
    cr_assert_eq(im.count, SG_IMPORTS_MAX);
    cr_assert_eq(im.dropped, 10);
    cr_assert_lt(strlen(im.text), SG_IMPORTS_TEXT_MAX);
    memset(&im, 0, sizeof(im));
    memset(longname, 'y', SG_IMPORT_NAME_MAX);
    for (int i = 0; i < 20; i++) { /* 20 x 64 bytes > the text cap */
        longname[0] = (char)('a' + i);
        add(&im, longname);
    }
    cr_assert_lt(strlen(im.text), SG_IMPORTS_TEXT_MAX);
    cr_assert_gt(im.dropped, 0);
    cr_assert_eq(im.count + im.dropped, 20);
}
