/* The policy's "runtime" section: strict validation, closed defaults, and the
 * JSON the gateway sends with each job (import list from the static section). */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define IMPORTS "\"imports\": {\"mode\": \"allow\", \"modules\": [\"json\", \"math\"]}"

static char *policy_text(const char *py_runtime, const char *js_runtime)
{
    char *s = NULL;
    cr_assert(asprintf(&s,
                       "{\"name\": \"t\", \"python\": {" IMPORTS "%s%s}, "
                       "\"javascript\": {\"imports\": {\"mode\": \"deny\", \"modules\": "
                       "[\"fs\"]}%s%s}}",
                       py_runtime ? ", \"runtime\": " : "", py_runtime ? py_runtime : "",
                       js_runtime ? ", \"runtime\": " : "", js_runtime ? js_runtime : "") > 0);
    return s;
}

static struct sg_policy *load_ok(const char *py, const char *js)
{
    char *s = policy_text(py, js);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    int r = sg_policy_load_buf(s, strlen(s), "t.json", &p, &err);
    cr_assert_eq(r, 0, "load failed: %s (%s)", err.msg, s);
    free(s);
    return p;
}

static void load_bad(const char *py, const char *js, const char *want)
{
    char *s = policy_text(py, js);
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    int r = sg_policy_load_buf(s, strlen(s), "t.json", &p, &err);
    cr_assert_eq(r, -EINVAL, "expected an error for %s", s);
    cr_assert_null(p);
    cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
    free(s);
}

Test(policy_runtime, absent_section_is_closed)
{
    struct sg_policy *p = load_ok(NULL, NULL);
    const struct sg_runtime_policy *rt = &p->python.runtime;
    cr_expect(!rt->processes && !rt->network && !rt->native_code && !rt->unpickle &&
              !rt->reflection);
    cr_expect(rt->enforce_imports);
    cr_expect_eq(rt->files, SG_RT_FILES_SANDBOX);
    cr_expect(p->javascript.runtime.enforce_imports && !p->javascript.runtime.processes);
    sg_policy_free(p);
}

Test(policy_runtime, values_are_read)
{
    struct sg_policy *p = load_ok(
        "{\"processes\": true, \"network\": true, \"imports\": \"off\", \"files\": \"any\", "
        "\"read_paths\": [\"/usr/share/fonts\", \"/etc/matplotlibrc\"], \"native_code\": true, "
        "\"unpickle\": true, \"reflection\": true}",
        "{\"processes\": false, \"process_properties\": [\"nextTick\", \"hrtime\"]}");
    const struct sg_runtime_policy *rt = &p->python.runtime;
    cr_expect(rt->processes && rt->network && rt->native_code && rt->unpickle && rt->reflection);
    cr_expect(!rt->enforce_imports);
    cr_expect_eq(rt->files, SG_RT_FILES_ANY);
    cr_expect(sg_strset_has(&rt->read_paths, "/usr/share/fonts"));
    cr_expect(sg_strset_has(&p->javascript.runtime.process_properties, "hrtime"));
    sg_policy_free(p);
}

Test(policy_runtime, strict_validation)
{
    load_bad("{\"procs\": true}", NULL, "python.runtime.procs: unknown key");
    load_bad("{\"processes\": 1}", NULL, "python.runtime.processes: expected true or false");
    load_bad("{\"imports\": \"allow\"}", NULL, "python.runtime.imports: expected \"off\" or");
    load_bad("{\"files\": \"all\"}", NULL, "python.runtime.files: expected \"sandbox\" or");
    load_bad("{\"read_paths\": [\"usr\"]}", NULL, "python.runtime.read_paths: entry 0");
    load_bad("{\"read_paths\": [\"/usr/../etc\"]}", NULL, "read_paths: entry 0");
    load_bad("{\"read_paths\": [\"/usr//x\"]}", NULL, "read_paths: entry 0");
    load_bad("{\"read_paths\": [\"/a\", \"/a\"]}", NULL, "duplicate entry \"/a\"");
    load_bad("{\"read_paths\": \"/a\"}", NULL, "expected an array of strings");
    load_bad("[]", NULL, "python.runtime: expected an object");
    /* Python-only keys are unknown for JavaScript and the other way round */
    load_bad(NULL, "{\"native_code\": true}", "javascript.runtime.native_code: unknown key");
    load_bad("{\"process_properties\": []}", NULL, "python.runtime.process_properties: unknown");
    load_bad(NULL, "{\"process_properties\": [\"a.b\"]}", "expected an identifier");
}

Test(policy_runtime, job_json_carries_the_static_import_list)
{
    struct sg_policy *p = load_ok("{\"read_paths\": [\"/usr/share/fonts\"]}", NULL);
    json_t *j = sg_policy_runtime_json(&p->python, 0);
    cr_assert_not_null(j);
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(text, "{\"files\":\"sandbox\",\"imports\":{\"mode\":\"allow\",\"modules\":"
                           "[\"json\",\"math\"]},\"native_code\":false,\"network\":false,"
                           "\"processes\":false,\"read_paths\":[\"/usr/share/fonts\"],"
                           "\"reflection\":false,\"unpickle\":false}");
    free(text);
    json_decref(j);
    j = sg_policy_runtime_json(&p->javascript, 1);
    text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(text, "{\"imports\":{\"mode\":\"deny\",\"modules\":[\"fs\"]},\"network\":"
                           "false,\"process_properties\":[],\"processes\":false}");
    free(text);
    json_decref(j);
    sg_policy_free(p);
    p = load_ok("{\"imports\": \"off\"}", NULL);
    j = sg_policy_runtime_json(&p->python, 0);
    cr_expect(json_is_null(json_object_get(j, "imports")));
    json_decref(j);
    sg_policy_free(p);
}

Test(policy_runtime, shipped_policies_load)
{
    const char *names[] = {"policies/default.json", "policies/strict.json",
                           "policies/permissive.json"};
    for (size_t i = 0; i < 3; i++) {
        struct sg_policy *p = NULL;
        struct sg_error err = {0};
        cr_assert_eq(sg_policy_load_file(names[i], &p, &err), 0, "%s: %s", names[i], err.msg);
        cr_expect(!p->python.runtime.processes && !p->python.runtime.network, "%s", names[i]);
        cr_expect(p->python.runtime.enforce_imports && p->javascript.runtime.enforce_imports);
        sg_policy_free(p);
    }
}
