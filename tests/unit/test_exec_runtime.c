/* The executor's side of the run-time policy: the "runtime" object of
 * POST /v1/exec (shape per language, caps), its way into the job line, and
 * the runner's "unauthorized" outcome (types checked, denials rebuilt). */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_config.h"
#include "exec_api.h"
#include "outcome.h"

#define PY_RT                                                                                      \
    "{\"processes\": false, \"network\": false, \"imports\": {\"mode\": \"allow\", "               \
    "\"modules\": [\"json\"]}, \"files\": \"sandbox\", \"read_paths\": [\"/usr/lib/python3\"], "   \
    "\"native_code\": false, \"unpickle\": false, \"reflection\": false}"
#define JS_RT                                                                                      \
    "{\"processes\": false, \"network\": false, \"imports\": null, \"process_properties\": "       \
    "[\"nextTick\"]}"

static int parse_lang(const char *lang, const char *runtime, struct exec_request *r,
                      struct sg_error *e)
{
    char *argv[] = {strdup("sandgate-executor"), strdup("--language"), strdup(lang),
                    strdup("--seccomp"),         strdup("none"),       NULL};
    struct exec_config c;
    cr_assert_eq(exec_config_parse(5, argv, &c, e), 0);
    for (int i = 0; i < 5; i++)
        free(argv[i]);
    char body[4096];
    snprintf(body, sizeof(body), "{\"code\": \"x\"%s%s}", runtime ? ", \"runtime\": " : "",
             runtime ? runtime : "");
    return exec_request_parse(body, strlen(body), &c, r, e);
}

static void bad(const char *lang, const char *runtime, const char *want)
{
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(parse_lang(lang, runtime, &r, &e), -EINVAL, "accepted %s", runtime);
    cr_assert(strstr(e.msg, want), "\"%s\" lacks \"%s\"", e.msg, want);
}

Test(exec_runtime, accepted_and_forwarded_in_the_job_line)
{
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(parse_lang("python", PY_RT, &r, &e), 0, "%s", e.msg);
    size_t len = 0;
    char *line = exec_job_line(&r, "n0nce0000000000000", &len);
    json_t *j = json_loadb(line, len, 0, NULL);
    json_t *rt = json_object_get(j, "runtime");
    cr_assert(json_is_object(rt), "%s", line);
    cr_assert_str_eq(json_string_value(json_object_get(rt, "files")), "sandbox");
    json_decref(j);
    free(line);
    exec_request_free(&r);

    cr_assert_eq(parse_lang("nodejs", JS_RT, &r, &e), 0, "%s", e.msg);
    exec_request_free(&r);
    /* absent: no run-time enforcement, and no key in the job line */
    cr_assert_eq(parse_lang("python", NULL, &r, &e), 0);
    line = exec_job_line(&r, "n0nce0000000000000", &len);
    cr_assert_null(strstr(line, "\"runtime\""));
    free(line);
    exec_request_free(&r);
}

Test(exec_runtime, shape_is_checked)
{
    bad("python", "[]", "runtime must be an object");
    bad("python", "{\"processes\": false}", "runtime.network is required");
    bad("python", JS_RT, "runtime.files is required");
    bad("nodejs", PY_RT, "runtime.process_properties is required");
    bad("python",
        "{\"processes\": 0, \"network\": false, \"imports\": null, \"files\": \"sandbox\", "
        "\"read_paths\": [], \"native_code\": false, \"unpickle\": false, \"reflection\": false}",
        "runtime.processes has the wrong type");
    bad("python",
        "{\"processes\": false, \"network\": false, \"imports\": null, \"files\": \"all\", "
        "\"read_paths\": [], \"native_code\": false, \"unpickle\": false, \"reflection\": false}",
        "runtime.files has the wrong type or value");
    bad("python",
        "{\"processes\": false, \"network\": false, \"imports\": {\"mode\": \"x\", \"modules\": "
        "[]}, \"files\": \"any\", \"read_paths\": [], \"native_code\": false, \"unpickle\": "
        "false, \"reflection\": false}",
        "runtime.imports must be null or");
    bad("python",
        "{\"processes\": false, \"network\": false, \"imports\": null, \"files\": \"any\", "
        "\"read_paths\": [\"/a\\u0001\"], \"native_code\": false, \"unpickle\": false, "
        "\"reflection\": false}",
        "printable ASCII only");
    bad("nodejs",
        "{\"processes\": false, \"network\": false, \"imports\": null, \"process_properties\": "
        "[], \"extra\": 1}",
        "keys this executor's language does not know");
}

Test(exec_runtime, list_caps)
{
    size_t n = EXEC_RT_LIST_MAX + 1, cap = n * 6 + 512;
    char *rt = malloc(cap), *p = rt;
    p += sprintf(p, "{\"processes\": false, \"network\": false, \"imports\": null, "
                    "\"process_properties\": [");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s\"a\"", i ? "," : "");
    sprintf(p, "]}");
    struct exec_request r;
    struct sg_error e = {0};
    char *argv[] = {strdup("x"), strdup("--language"), strdup("nodejs"), NULL};
    struct exec_config c;
    cr_assert_eq(exec_config_parse(3, argv, &c, &e), 0);
    for (int i = 0; i < 3; i++)
        free(argv[i]);
    char *full = malloc(cap + 64);
    sprintf(full, "{\"code\": \"x\", \"runtime\": %s}", rt);
    cr_assert_eq(exec_request_parse(full, strlen(full), &c, &r, &e), -EINVAL);
    cr_assert(strstr(e.msg, "at most 1024"), "%s", e.msg);
    free(full);
    free(rt);
}

static int from_runner(const char *line, struct exec_outcome *o)
{
    outcome_init(o);
    return outcome_from_runner(line, strlen(line), o);
}

Test(exec_runtime, unauthorized_outcome)
{
    struct exec_outcome o;
    cr_assert_eq(from_runner("{\"sandgate_runner\": 1, \"outcome\": \"unauthorized\", "
                             "\"exit_code\": 0, \"stdout\": \"caught\", \"result\": "
                             "{\"present\": true, \"value\": 1}, \"denials\": [{\"type\": "
                             "\"process\", \"target\": \"os.system ('id',)\"}, {\"type\": "
                             "\"file\", \"target\": \"read /etc/hostname\"}]}",
                             &o),
                 0);
    cr_expect_eq(o.status, EXEC_UNAUTHORIZED);
    cr_expect_eq(o.exit_code, EXEC_CODE_UNAUTHORIZED);
    cr_expect_str_eq(o.unauthorized_access_type, "process");
    cr_expect_str_eq(o.detail, "runtime.process: os.system ('id',) (and more: see denials)");
    cr_expect_null(o.result, "a stopped job has no result");
    cr_expect_eq(json_array_size(o.denials), 2);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(o.denials, 1), "rule")),
                     "runtime.file");
    json_t *resp = exec_response_json("j", NULL, &o, 0, 1);
    cr_expect_str_eq(json_string_value(json_object_get(resp, "status")), "unauthorized_access");
    cr_expect_str_eq(json_string_value(json_object_get(resp, "unauthorized_access_type")),
                     "process");
    cr_expect_eq(json_array_size(json_object_get(resp, "denials")), 2);
    json_decref(resp);
    outcome_clear(&o);
}

Test(exec_runtime, unauthorized_outcome_is_checked)
{
    struct exec_outcome o;
    /* a type outside the list, no denials, or a non-array: malformed */
    cr_expect_eq(from_runner("{\"sandgate_runner\": 1, \"outcome\": \"unauthorized\", "
                             "\"denials\": [{\"type\": \"root\", \"target\": \"x\"}]}",
                             &o),
                 -EPROTO);
    cr_expect_eq(from_runner("{\"sandgate_runner\": 1, \"outcome\": \"unauthorized\", "
                             "\"denials\": []}",
                             &o),
                 -EPROTO);
    cr_expect_eq(from_runner("{\"sandgate_runner\": 1, \"outcome\": \"unauthorized\"}", &o),
                 -EPROTO);
    /* a long multi-byte target is cut on a character boundary */
    char line[2048], target[700] = "x"; /* odd: the cut falls inside a character */
    for (int i = 0; i < 150; i++)
        strcat(target, "\xc3\xa9"); /* 300 bytes of é */
    snprintf(line, sizeof(line),
             "{\"sandgate_runner\": 1, \"outcome\": \"unauthorized\", "
             "\"denials\": [{\"type\": \"file\", \"target\": \"%s\"}]}",
             target);
    cr_assert_eq(from_runner(line, &o), 0);
    const char *t = json_string_value(json_object_get(json_array_get(o.denials, 0), "target"));
    cr_assert_not_null(t, "the target must survive as valid UTF-8");
    cr_expect_eq(strlen(t), OUTCOME_TARGET_MAX - 1);
    outcome_clear(&o);
    cr_expect_str_eq(outcome_denial_type("native_code"), "native_code");
    cr_expect_str_eq(outcome_denial_type("process_or_network"), "process_or_network");
    cr_expect_null(outcome_denial_type("Process"));
}
