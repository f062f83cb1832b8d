/* Unit tests for policy inheritance ("extends"): a child is its parent plus
 * additions, validated like any policy; missing parents, cycles, depth and a
 * changed import mode are refused naming the file; the child's identity
 * covers its parent's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "policy.h"
#include "rules.h"

static char dir[64];

static void put(const char *name, const char *content)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
}

static void copy_shipped(const char *name)
{
    char src[64], *buf = malloc(1 << 20);
    snprintf(src, sizeof(src), "policies/%s.json", name);
    FILE *f = fopen(src, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char dst[64];
    snprintf(dst, sizeof(dst), "%s.json", name);
    put(dst, buf);
    free(buf);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sg-extends-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    copy_shipped("default");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#define DATA                                                                                       \
    "{\"name\": \"data\", \"extends\": \"default\", \"description\": \"default + tabulate\","      \
    " \"python\": {\"imports\": {\"modules\": [\"tabulate\", \"json\"]},"                          \
    " \"forbidden_names\": [\"breakpoint\"]},"                                                     \
    " \"javascript\": {\"imports\": {\"modules\": [\"lodash\"]}}}"

TestSuite(policy_extends, .init = setup, .fini = teardown);

Test(policy_extends, child_is_parent_plus_additions)
{
    put("data.json", DATA);
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(dir, &set, &err), 0, "%s", err.msg);
    const struct sg_policy *def = sg_policy_set_find(set, "default");
    const struct sg_policy *data = sg_policy_set_find(set, "data");
    cr_assert_not_null(data);
    cr_assert(sg_strset_has(&data->python.modules, "tabulate"));
    cr_assert(sg_strset_has(&data->python.modules, "pandas"), "the parent's list stays");
    cr_assert(!sg_strset_has(&def->python.modules, "tabulate"), "the parent is unchanged");
    cr_assert_eq(data->python.modules.count, def->python.modules.count + 1,
                 "json was already there: no duplicate");
    cr_assert(sg_strset_has(&data->python.forbidden_names, "eval"));
    cr_assert(sg_strset_has(&data->python.forbidden_names, "breakpoint"));
    cr_assert(sg_strset_has(&data->javascript.modules, "lodash"));
    cr_assert(sg_strset_has(&data->javascript.modules, "crypto"));
    cr_assert_eq(data->python.deny_dynamic_imports, def->python.deny_dynamic_imports);
    cr_assert_eq(data->python.max_nodes, def->python.max_nodes);
    cr_assert_str_eq(data->description, "default + tabulate");
    char first[65];
    memcpy(first, data->sha256, sizeof(first));
    sg_policy_set_free(set);

    /* a changed parent changes the child's identity (verdict caches key on it) */
    put("default.json", "{\"name\": \"default\", \"python\": {\"enabled\": true, \"imports\": "
                        "{\"mode\": \"allow\", \"modules\": [\"json\"]}}, \"javascript\": "
                        "{\"enabled\": false, \"imports\": {\"mode\": \"allow\", \"modules\": "
                        "[]}}}");
    cr_assert_eq(sg_policy_set_load_dir(dir, &set, &err), 0, "%s", err.msg);
    data = sg_policy_set_find(set, "data");
    cr_assert_str_neq(data->sha256, first);
    cr_assert_eq(data->python.modules.count, 2, "json + tabulate");
    cr_assert(!data->javascript.enabled, "scalars come from the parent unless overridden");
    sg_policy_set_free(set);
}

Test(policy_extends, a_grandchild_and_overrides)
{
    put("data.json", DATA);
    put("data2.json", "{\"name\": \"data2\", \"extends\": \"data\", \"python\": "
                      "{\"deny_dynamic_attributes\": false, \"limits\": {\"max_depth\": 100}}}");
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(dir, &set, &err), 0, "%s", err.msg);
    const struct sg_policy *p = sg_policy_set_find(set, "data2");
    cr_assert(sg_strset_has(&p->python.modules, "tabulate"));
    cr_assert_eq(p->python.deny_dynamic_attributes, 0);
    cr_assert_eq(p->python.max_depth, 100);
    sg_policy_set_free(set);
}

Test(policy_extends, refused_with_a_clear_message)
{
    static const struct {
        const char *file, *json, *needle;
    } cases[] = {
        {"a.json", "{\"name\": \"a\", \"extends\": \"nosuch\"}", "no policy named \"nosuch\""},
        {"a.json", "{\"name\": \"a\", \"extends\": 3}", "expected the name of a policy"},
        {"a.json", "{\"name\": \"a\", \"extends\": \"a\"}", "cycle"},
        {"a.json",
         "{\"name\": \"a\", \"extends\": \"default\", \"python\": {\"imports\": "
         "{\"mode\": \"deny\"}}}",
         "cannot change \"allow\""},
        {"a.json",
         "{\"name\": \"a\", \"extends\": \"default\", \"python\": {\"imports\": "
         "{\"modules\": [\"os;rm\"]}}}",
         "python.imports.modules"},
        {"a.json", "{\"name\": \"a\", \"extends\": \"default\", \"python\": {\"colour\": 1}}",
         "colour"},
        {"a.json", "{\"name\": \"a\", \"extends\": \"default\", \"python\": {\"enabled\": 1}}",
         "python.enabled"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        put(cases[i].file, cases[i].json);
        struct sg_policy_set *set = NULL;
        struct sg_error err = {0};
        cr_assert_lt(sg_policy_set_load_dir(dir, &set, &err), 0, "case %zu loaded", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].needle);
        cr_assert(strstr(err.msg, "a.json"), "case %zu names the file: %s", i, err.msg);
    }
}

Test(policy_extends, cycle_between_two_and_depth_limit)
{
    put("a.json", "{\"name\": \"a\", \"extends\": \"b\"}");
    put("b.json", "{\"name\": \"b\", \"extends\": \"a\"}");
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_lt(sg_policy_set_load_dir(dir, &set, &err), 0);
    cr_assert(strstr(err.msg, "cycle"), "%s", err.msg);
    char path[160];
    snprintf(path, sizeof(path), "%s/a.json", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/b.json", dir);
    unlink(path);
    /* p0 extends default, p1 extends p0, ... p9: ten levels */
    for (int i = 0; i < 10; i++) {
        char name[16], json[128];
        snprintf(name, sizeof(name), "p%d.json", i);
        snprintf(json, sizeof(json), "{\"name\": \"p%d\", \"extends\": \"%s%d\"}", i,
                 i ? "p" : "default", i - 1);
        if (i == 0)
            snprintf(json, sizeof(json), "{\"name\": \"p0\", \"extends\": \"default\"}");
        put(name, json);
    }
    memset(&err, 0, sizeof(err));
    cr_assert_lt(sg_policy_set_load_dir(dir, &set, &err), 0);
    cr_assert(strstr(err.msg, "more than 8 levels"), "%s", err.msg);
}

Test(policy_extends, a_single_file_needs_its_directory)
{
    put("data.json", DATA);
    char path[160];
    snprintf(path, sizeof(path), "%s/data.json", dir);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_lt(sg_policy_load_file(path, &p, &err), 0);
    cr_assert(strstr(err.msg, "policies directory"), "%s", err.msg);
    struct sg_policy_set *set = NULL;
    char defdir[160];
    snprintf(defdir, sizeof(defdir), "%s", dir);
    unlink(path);
    cr_assert_eq(sg_policy_set_load_dir(defdir, &set, &err), 0, "%s", err.msg);
    put("../data-outside.json", DATA);
    char outside[200];
    snprintf(outside, sizeof(outside), "%s/../data-outside.json", dir);
    cr_assert_eq(sg_policy_load_file_with(outside, set, &p, &err), 0, "%s", err.msg);
    cr_assert(sg_strset_has(&p->python.modules, "tabulate"));
    sg_policy_free(p);
    unlink(outside);
    sg_policy_set_free(set);
}

static const struct sg_violation *first(const struct sg_policy *p, enum sg_lang lang,
                                        const char *src, struct sg_analysis *a)
{
    struct sg_error err = {0};
    cr_assert_eq(sg_analyze(p, lang, src, strlen(src), a, &err), 0, "%s", err.msg);
    return a->violations.count ? &a->violations.items[0] : NULL;
}

Test(policy_extends, an_installed_module_stays_rejected_naming_the_policy)
{
    put("data.json", DATA);
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(dir, &set, &err), 0, "%s", err.msg);
    const struct sg_policy *def = sg_policy_set_find(set, "default");
    const struct sg_policy *data = sg_policy_set_find(set, "data");
    struct sg_analysis a;
    const struct sg_violation *v = first(def, SG_LANG_PYTHON, "import tabulate\n", &a);
    cr_assert_not_null(v);
    cr_assert_str_eq(v->rule, SG_RULE_IMPORT_NOT_ALLOWED);
    cr_assert_str_eq(v->message, "import of module 'tabulate' is not allowed by policy "
                                 "'default' (python.imports.modules)");
    sg_analysis_free(&a);
    v = first(def, SG_LANG_JAVASCRIPT, "const _ = require('lodash');\n", &a);
    cr_assert_str_eq(v->message, "require of module 'lodash' is not allowed by policy "
                                 "'default' (javascript.imports.modules)");
    sg_analysis_free(&a);
    v = first(def, SG_LANG_PYTHON, "from . import x\n", &a);
    cr_assert(strstr(v->message, "a job is a single file"), "not an allow-list gap: %s",
              v->message);
    cr_assert_null(strstr(v->message, "by policy"));
    sg_analysis_free(&a);
    cr_assert_null(first(data, SG_LANG_PYTHON, "import tabulate\n", &a), "the extension allows it");
    sg_analysis_free(&a);
    cr_assert_null(first(data, SG_LANG_JAVASCRIPT, "const _ = require('lodash');\n", &a));
    sg_analysis_free(&a);
    sg_policy_set_free(set);
}
