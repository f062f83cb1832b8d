/* Policy loading: schema validation with key paths, defaults, sha256,
 * directory sets (all or nothing), strset lookups. ASan checks that no
 * error path leaks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "sha256.h"

#define LANG_MIN "{\"imports\": {\"mode\": \"allow\", \"modules\": [\"json\"]}}"
#define POLICY_MIN "{\"name\": \"t\", \"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}"

static int load(const char *json, struct sg_policy **ret, struct sg_error *err)
{
    return sg_policy_load_buf(json, strlen(json), "t.json", ret, err);
}

/* Loading must fail with -EINVAL and a message containing want. */
static void expect_error(const char *json, const char *want)
{
    struct sg_policy *p = (struct sg_policy *)0x1;
    struct sg_error err = {0};
    int r = load(json, &p, &err);
    cr_assert_eq(r, -EINVAL, "expected -EINVAL for %s, got %d (%s)", json, r, err.msg);
    cr_assert_null(p);
    cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
    cr_assert(strstr(err.msg, "t.json"), "message \"%s\" lacks the origin", err.msg);
}

/* POLICY_MIN with the python section replaced. */
static char *with_python(const char *lang)
{
    char *s = NULL;
    cr_assert(
        asprintf(&s, "{\"name\": \"t\", \"python\": %s, \"javascript\": " LANG_MIN "}", lang) > 0);
    return s;
}

static void expect_python_error(const char *lang, const char *want)
{
    char *s = with_python(lang);
    expect_error(s, want);
    free(s);
}

Test(policy, minimal_policy_gets_defaults)
{
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(load(POLICY_MIN, &p, &err), 0, "%s", err.msg);
    cr_assert_str_eq(p->name, "t");
    cr_assert_str_eq(p->description, "");
    for (int i = 0; i < 2; i++) {
        const struct sg_lang_policy *lp = i ? &p->javascript : &p->python;
        cr_assert_eq(lp->enabled, 1);
        cr_assert_eq(lp->import_mode, SG_IMPORTS_ALLOW);
        cr_assert_eq(lp->modules.count, 1);
        cr_assert_eq(lp->forbidden_names.count, 0);
        cr_assert_eq(lp->deny_dunder_attributes, 1);
        cr_assert_eq(lp->allowed_dunders.count, 0);
        cr_assert_eq(lp->deny_private_attributes, 0);
        cr_assert_eq(lp->capability_attributes.count, 0);
        cr_assert_eq(lp->deny_dynamic_imports, 1);
        cr_assert_eq(lp->deny_dynamic_attributes, 1);
        cr_assert_eq(lp->max_source_bytes, 262144);
        cr_assert_eq(lp->max_depth, 256);
        cr_assert_eq(lp->max_nodes, 200000);
    }
    sg_policy_free(p);
}

Test(policy, full_lang_section_is_read)
{
    char *s = with_python(
        "{\"enabled\": false, \"imports\": {\"mode\": \"deny\", \"modules\": [\"os\", \"sys\"]},"
        " \"forbidden_names\": [\"eval\"], \"forbidden_calls\": [\"os.system\"],"
        " \"forbidden_attributes\": [\"gi_frame\"],"
        " \"dunder_attributes\": {\"deny\": false, \"allow\": [\"__name__\"]},"
        " \"private_attributes\": {\"deny\": true, \"allow\": [\"_asdict\"]},"
        " \"capability_attributes\": [\"system\"],"
        " \"deny_dynamic_imports\": false, \"deny_dynamic_attributes\": false,"
        " \"limits\": {\"max_source_bytes\": 1000, \"max_depth\": 10, \"max_nodes\": 20}}");
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(load(s, &p, &err), 0, "%s", err.msg);
    const struct sg_lang_policy *lp = &p->python;
    cr_assert_eq(lp->enabled, 0);
    cr_assert_eq(lp->import_mode, SG_IMPORTS_DENY);
    cr_assert(sg_strset_has(&lp->modules, "os") && sg_strset_has(&lp->modules, "sys"));
    cr_assert(sg_strset_has(&lp->forbidden_names, "eval"));
    cr_assert(sg_strset_has(&lp->forbidden_calls, "os.system"));
    cr_assert(sg_strset_has(&lp->forbidden_attributes, "gi_frame"));
    cr_assert_eq(lp->deny_dunder_attributes, 0);
    cr_assert(sg_strset_has(&lp->allowed_dunders, "__name__"));
    cr_assert_eq(lp->deny_private_attributes, 1);
    cr_assert(sg_strset_has(&lp->allowed_privates, "_asdict"));
    cr_assert(sg_strset_has(&lp->capability_attributes, "system"));
    cr_assert_eq(lp->deny_dynamic_imports, 0);
    cr_assert_eq(lp->deny_dynamic_attributes, 0);
    cr_assert_eq(lp->max_source_bytes, 1000);
    cr_assert_eq(lp->max_depth, 10);
    cr_assert_eq(lp->max_nodes, 20);
    sg_policy_free(p);
    free(s);
}

Test(policy, unknown_keys_name_their_path)
{
    expect_error("{\"name\": \"t\", \"extra\": 1, \"python\": " LANG_MIN
                 ", \"javascript\": " LANG_MIN "}",
                 "extra: unknown key");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"forbidden\": []}",
                        "python.forbidden: unknown key");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": [], \"x\": 1}}",
                        "python.imports.x: unknown key");
    expect_python_error(
        "{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"limits\": {\"max_time\": 1}}",
        "python.limits.max_time: unknown key");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []},"
                        " \"dunder_attributes\": {\"deny\": true, \"permit\": []}}",
                        "python.dunder_attributes.permit: unknown key");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []},"
                        " \"private_attributes\": {\"deny\": true, \"except\": []}}",
                        "python.private_attributes.except: unknown key");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []},"
                        " \"capability_attributes\": [\"a.b\"]}",
                        "python.capability_attributes");
}

Test(policy, wrong_types_are_errors)
{
    expect_error("[]", "expected a JSON object");
    expect_error("{\"name\": 5, \"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}",
                 "name: expected");
    expect_error("{\"name\": \"t\", \"description\": 1, \"python\": " LANG_MIN
                 ", \"javascript\": " LANG_MIN "}",
                 "description: expected a string");
    expect_error("{\"name\": \"t\", \"python\": [], \"javascript\": " LANG_MIN "}",
                 "python: expected an object");
    expect_python_error(
        "{\"enabled\": \"yes\", \"imports\": {\"mode\": \"allow\", \"modules\": []}}",
        "python.enabled: expected true or false");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": \"json\"}}",
                        "python.imports.modules: expected an array");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": [1]}}",
                        "python.imports.modules: entry 0: expected a string");
    expect_python_error(
        "{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"limits\": {\"max_depth\": 12.5}}",
        "python.limits.max_depth: expected an integer");
    expect_python_error(
        "{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"deny_dynamic_imports\": 1}",
        "python.deny_dynamic_imports: expected true or false");
}

Test(policy, required_keys_and_bad_values)
{
    expect_error("{\"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}",
                 "name: required key missing");
    expect_error("{\"name\": \"t\", \"python\": " LANG_MIN "}", "javascript: required key missing");
    expect_python_error("{}", "python.imports: required key missing");
    expect_python_error("{\"imports\": {\"modules\": []}}",
                        "python.imports.mode: required key missing");
    expect_python_error("{\"imports\": {\"mode\": \"block\", \"modules\": []}}",
                        "python.imports.mode: expected \"allow\" or \"deny\"");
    expect_python_error("{\"imports\": {\"mode\": \"allow\"}}",
                        "python.imports.modules: required key missing");
    expect_error("{\"name\": \"Bad Name\", \"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}",
                 "name: expected a string of 1..64");
    expect_error("{\"name\": \"\", \"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}",
                 "name:");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": [\"os..path\"]}}",
                        "expected a dotted module name");
    expect_python_error(
        "{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"forbidden_names\": [\"a.b\"]}",
        "python.forbidden_names: entry 0 (\"a.b\"): expected an identifier");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": [\"json\", \"json\"]}}",
                        "duplicate entry \"json\"");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"limits\": "
                        "{\"max_source_bytes\": 0}}",
                        "python.limits.max_source_bytes: 0 is out of range");
    expect_python_error("{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"limits\": "
                        "{\"max_nodes\": 99999999999}}",
                        "python.limits.max_nodes: 99999999999 is out of range");
    expect_error("{\"name\": \"t\", \"name\": \"u\", \"python\": " LANG_MIN
                 ", \"javascript\": " LANG_MIN "}",
                 "duplicate");
    expect_error("{\"name\": ", "line 1");
}

Test(policy, js_identifiers_and_specifiers)
{
    const char *js = "{\"imports\": {\"mode\": \"allow\", \"modules\": [\"fs/promises\", "
                     "\"node:path\", \"@scope/pkg\"]},"
                     " \"forbidden_names\": [\"$eval\"]}";
    char *s = NULL;
    cr_assert(asprintf(&s, "{\"name\": \"t\", \"python\": " LANG_MIN ", \"javascript\": %s}", js) >
              0);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(load(s, &p, &err), 0, "%s", err.msg);
    cr_assert(sg_strset_has(&p->javascript.modules, "fs/promises"));
    cr_assert(sg_strset_has(&p->javascript.forbidden_names, "$eval"));
    sg_policy_free(p);
    free(s);
    /* '$' is not a Python identifier character */
    expect_python_error(
        "{\"imports\": {\"mode\": \"allow\", \"modules\": []}, \"forbidden_names\": [\"$x\"]}",
        "expected an identifier");
}

Test(policy, oversize_buffer_and_lists)
{
    size_t n = SG_POLICY_FILE_MAX + 1;
    char *big = malloc(n);
    memset(big, ' ', n);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_buf(big, n, "big.json", &p, &err), -E2BIG);
    cr_assert_null(p);
    free(big);

    /* a list one entry over the cap, and an entry one byte over its cap */
    char *list = calloc(1, (SG_POLICY_LIST_MAX + 1) * 16 + 256);
    char *w = list + sprintf(list, "{\"imports\": {\"mode\": \"allow\", \"modules\": [");
    for (int i = 0; i <= SG_POLICY_LIST_MAX; i++)
        w += sprintf(w, "%s\"m%d\"", i ? "," : "", i);
    strcpy(w, "]}}");
    expect_python_error(list, "1025 entries, at most 1024");
    free(list);
    char longname[SG_POLICY_ITEM_MAX + 2];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    char *lang = NULL;
    cr_assert(asprintf(&lang, "{\"imports\": {\"mode\": \"allow\", \"modules\": [\"%s\"]}}",
                       longname) > 0);
    expect_python_error(lang, "length must be 1..128");
    free(lang);
}

Test(policy, sha256_is_of_the_file_bytes)
{
    struct sg_policy *a = NULL, *b = NULL;
    cr_assert_eq(load(POLICY_MIN, &a, NULL), 0);
    cr_assert_eq(load(POLICY_MIN, &b, NULL), 0);
    char want[65];
    sg_sha256_hex(POLICY_MIN, strlen(POLICY_MIN), want);
    cr_assert_str_eq(a->sha256, want);
    cr_assert_str_eq(a->sha256, b->sha256);
    sg_policy_free(b);
    /* one more byte of whitespace: same policy, different identity */
    char *s = NULL;
    cr_assert(asprintf(&s, "%s\n", POLICY_MIN) > 0);
    cr_assert_eq(load(s, &b, NULL), 0);
    cr_assert_str_neq(a->sha256, b->sha256);
    sg_policy_free(a);
    sg_policy_free(b);
    free(s);
    sg_policy_free(NULL);
}

Test(strset, lookup_and_prefix)
{
    struct sg_policy *p = NULL;
    const char *json =
        "{\"name\": \"t\", \"python\": {\"imports\": {\"mode\": \"allow\", \"modules\": "
        "[\"urllib.parse\", \"os\", \"json\", \"collections\"]}}, \"javascript\": " LANG_MIN "}";
    cr_assert_eq(load(json, &p, NULL), 0);
    const struct sg_strset *s = &p->python.modules;
    cr_assert_eq(s->count, 4);
    for (size_t i = 1; i < s->count; i++)
        cr_assert_lt(strcmp(s->items[i - 1], s->items[i]), 0, "set is sorted");
    cr_assert(sg_strset_has(s, "json"));
    cr_assert_not(sg_strset_has(s, "jso"));
    cr_assert_not(sg_strset_has(s, "urllib"));
    cr_assert(sg_strset_has_prefix(s, "os.path", '.'));
    cr_assert(sg_strset_has_prefix(s, "os.path.join", '.'));
    cr_assert(sg_strset_has_prefix(s, "collections.abc", '.'));
    cr_assert(sg_strset_has_prefix(s, "urllib.parse", '.'));
    cr_assert_not(sg_strset_has_prefix(s, "urllib.request", '.'));
    cr_assert_not(sg_strset_has_prefix(s, "urllib", '.'));
    cr_assert_not(sg_strset_has_prefix(s, "osx", '.'));
    cr_assert_not(sg_strset_has_prefix(s, ".os", '.'));
    cr_assert_not(sg_strset_has_prefix(s, "os.path", '/'));
    cr_assert_not(sg_strset_has(NULL, "x"));
    sg_policy_free(p);
}

/* --- directory sets --- */

static char tmpdir[64];

static void write_file(const char *name, const char *content)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
}

static char *named_policy(const char *name)
{
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"name\": \"%s\", \"python\": " LANG_MIN ", \"javascript\": " LANG_MIN "}",
                       name) > 0);
    return s;
}

static void write_policy(const char *file, const char *name)
{
    char *s = named_policy(name);
    write_file(file, s);
    free(s);
}

static void mk_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/sg-policy-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

Test(policy_set, loads_every_json_file, .init = mk_tmpdir, .fini = rm_tmpdir)
{
    write_policy("a.json", "alpha");
    write_policy("b.json", "beta");
    write_file("README.md", "not a policy");
    write_file(".hidden.json", "{broken");
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(tmpdir, &set, &err), 0, "%s", err.msg);
    cr_assert_eq(set->count, 2);
    cr_assert_not_null(sg_policy_set_find(set, "alpha"));
    cr_assert_str_eq(sg_policy_set_find(set, "beta")->name, "beta");
    cr_assert_null(sg_policy_set_find(set, "gamma"));
    sg_policy_set_free(set);
    sg_policy_set_free(NULL);
}

Test(policy_set, one_bad_file_fails_the_set, .init = mk_tmpdir, .fini = rm_tmpdir)
{
    write_policy("a.json", "alpha");
    write_policy("c.json", "gamma");
    write_file("b.json", "{\"name\": \"beta\", \"python\": {}}");
    struct sg_policy_set *set = (struct sg_policy_set *)0x1;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(tmpdir, &set, &err), -EINVAL);
    cr_assert_null(set);
    cr_assert(strstr(err.msg, "b.json") && strstr(err.msg, "python.imports"), "%s", err.msg);
}

Test(policy_set, duplicate_names_fail, .init = mk_tmpdir, .fini = rm_tmpdir)
{
    write_policy("a.json", "same");
    write_policy("b.json", "same");
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(tmpdir, &set, &err), -EEXIST);
    cr_assert_null(set);
    cr_assert(strstr(err.msg, "\"same\""), "%s", err.msg);
}

Test(policy_set, empty_missing_and_too_many, .init = mk_tmpdir, .fini = rm_tmpdir)
{
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir(tmpdir, &set, &err), -ENOENT);
    cr_assert_eq(sg_policy_set_load_dir("/nonexistent/sg", &set, &err), -ENOENT);
    for (int i = 0; i <= SG_POLICY_SET_MAX; i++) {
        char f[32], n[32];
        snprintf(f, sizeof(f), "p%d.json", i);
        snprintf(n, sizeof(n), "p%d", i);
        write_policy(f, n);
    }
    cr_assert_eq(sg_policy_set_load_dir(tmpdir, &set, &err), -E2BIG);
    cr_assert_null(set);
}

Test(policy_set, file_errors, .init = mk_tmpdir, .fini = rm_tmpdir)
{
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_load_file("/nonexistent/x.json", &p, &err), -ENOENT);
    cr_assert_eq(sg_policy_load_file(tmpdir, &p, &err), -EINVAL, "a directory is not a policy");
    char path[128];
    snprintf(path, sizeof(path), "%s/big.json", tmpdir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i <= SG_POLICY_FILE_MAX / 1024; i++)
        fprintf(f, "%1024s", "");
    fclose(f);
    cr_assert_eq(sg_policy_load_file(path, &p, &err), -E2BIG);
    cr_assert_null(p);
}

Test(policy, shipped_policies_load)
{
    struct sg_policy_set *set = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_policy_set_load_dir("policies", &set, &err), 0, "%s", err.msg);
    const struct sg_policy *d = sg_policy_set_find(set, "default");
    const struct sg_policy *s = sg_policy_set_find(set, "strict");
    const struct sg_policy *p = sg_policy_set_find(set, "permissive");
    cr_assert(d && s && p);
    cr_assert(sg_strset_has_prefix(&d->python.modules, "matplotlib.pyplot", '.'));
    cr_assert_not(sg_strset_has_prefix(&d->python.modules, "os", '.'));
    cr_assert(sg_strset_has(&d->python.forbidden_names, "eval"));
    cr_assert(sg_strset_has(&s->python.forbidden_names, "open"));
    cr_assert_not(sg_strset_has(&d->python.forbidden_names, "open"));
    cr_assert_eq(p->python.import_mode, SG_IMPORTS_DENY);
    cr_assert(sg_strset_has(&p->python.modules, "subprocess"));
    cr_assert(sg_strset_has(&p->javascript.modules, "child_process"));
    cr_assert_lt(s->python.max_source_bytes, d->python.max_source_bytes);
    sg_policy_set_free(set);
}

Test(policy, error_messages_are_clean_text)
{
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    /* an unknown key with a newline and a bidi control; a raw control byte in the JSON */
    const char *j = "{\"name\": \"t\", \"a\\nb\\u202e\": 1, \"python\": " LANG_MIN
                    ", \"javascript\": " LANG_MIN "}";
    cr_assert_eq(load(j, &p, &err), -EINVAL);
    cr_assert_null(strchr(err.msg, '\n'), "%s", err.msg);
    cr_assert_null(strstr(err.msg, "\xe2\x80\xae"), "%s", err.msg);
    cr_assert(strstr(err.msg, "a\xef\xbf\xbd"
                              "b\xef\xbf\xbd: unknown key"),
              "%s", err.msg);
    cr_assert_eq(load("{\"name\": \"\x01\x1b[2J\"}", &p, &err), -EINVAL);
    cr_assert_null(strchr(err.msg, '\x1b'), "%s", err.msg);
}
