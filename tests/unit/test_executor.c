/* Unit tests of the executor's pure logic: configuration (flags, env, ranges),
 * /v1/exec request validation and limit clamping, the job line, outcome
 * classification, the response, the token check and the metrics text. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <unistd.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "exec_config.h"
#include "exec_api.h"
#include "metrics.h"
#include "outcome.h"
#include "exec_server.h"
#include "json_raw.h"

static const char *const env_names[] = {
    "SANDGATE_LANGUAGE",         "SANDBOX_TIMEOUT",          "SANDBOX_MAX_MEMORY",
    "SANDBOX_ENABLE_SECCOMP",    "SANDGATE_SECCOMP_PROFILE", "SANDBOX_EXECUTOR_MANAGER_POOL_SIZE",
    "SANDBOX_BASE_PYTHON_IMAGE", "SANDGATE_LISTEN",          NULL};

static void clean_env(void)
{
    for (size_t i = 0; env_names[i]; i++)
        unsetenv(env_names[i]);
}

static int parse(struct exec_config *c, struct sg_error *e, const char *first, ...)
{
    char *argv[40] = {strdup("sandgate-executor")};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 39; a = va_arg(ap, const char *))
        argv[argc++] = strdup(a); /* getopt wants char *, the literals are const */
    va_end(ap);
    argv[argc] = NULL;
    int r = exec_config_parse(argc, argv, c, e);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r;
}

TestSuite(config, .init = clean_env);

Test(config, secure_defaults)
{
    struct exec_config c;
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    cr_assert_str_eq(c.runtime, "runsc");
    cr_assert_not(c.insecure_runtime);
    cr_assert_eq(c.memory_mb, 256);
    cr_assert_eq(c.pids_limit, 128);
    cr_assert_eq(c.timeout_ms, 10000);
    cr_assert_eq(c.pool_size, 2);
    cr_assert_eq(c.listen_port, 9401);
    cr_assert_str_eq(c.listen_addr, "127.0.0.1");
    cr_assert_str_eq(c.image, "sandgate/sandbox-python:latest");
    cr_assert_str_eq(c.instance, "sandgate-python");
    cr_assert_eq(parse(&c, NULL, "--language", "nodejs", "--seccomp", "none", NULL), 0);
    cr_assert_eq(c.listen_port, 9402);
}

Test(config, language_required_and_checked)
{
    struct exec_config c;
    struct sg_error e = {0};
    cr_assert_eq(parse(&c, &e, "--seccomp", "none", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "--language"));
    cr_assert_eq(parse(&c, &e, "--language", "ruby", NULL), -EINVAL);
}

/* --language takes the API names and RAGFlow's "javascript", exact case
 * (common/sg_lang.h, SG_LANG_NAMES_RAGFLOW); the CLI's other aliases not. */
Test(config, language_spellings)
{
    struct exec_config c;
    const char *js[] = {"nodejs", "javascript"},
               *bad[] = {"js", "node", "python3", "JavaScript", "Python"};
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    cr_assert_eq(c.language, SG_LANG_PYTHON);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(parse(&c, NULL, "--language", js[i], "--seccomp", "none", NULL), 0, "%s",
                     js[i]);
        cr_assert_eq(c.language, SG_LANG_JAVASCRIPT);
        cr_assert_str_eq(c.instance, "sandgate-nodejs");
    }
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(parse(&c, NULL, "--language", bad[i], "--seccomp", "none", NULL), -EINVAL,
                     "%s", bad[i]);
}

Test(config, ragflow_environment)
{
    struct exec_config c;
    setenv("SANDBOX_TIMEOUT", "7s", 1);
    setenv("SANDBOX_MAX_MEMORY", "1g", 1);
    setenv("SANDBOX_EXECUTOR_MANAGER_POOL_SIZE", "5", 1);
    setenv("SANDBOX_BASE_PYTHON_IMAGE", "my/python:1", 1);
    setenv("SANDBOX_ENABLE_SECCOMP", "false", 1);
    cr_assert_eq(parse(&c, NULL, "--language", "python", NULL), 0);
    cr_assert_eq(c.timeout_ms, 7000);
    cr_assert_eq(c.memory_mb, 1024);
    cr_assert_eq(c.pool_size, 5);
    cr_assert_str_eq(c.image, "my/python:1");
    cr_assert(c.seccomp_off);
    cr_assert_str_eq(c.seccomp_path, "");
    /* Flags win over the environment. */
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--timeout-ms", "3000", NULL), 0);
    cr_assert_eq(c.timeout_ms, 3000);
    setenv("SANDBOX_MAX_MEMORY", "lots", 1);
    struct sg_error e = {0};
    cr_assert_eq(parse(&c, &e, "--language", "python", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "SANDBOX_MAX_MEMORY"));
}

Test(config, seccomp_profile_selection)
{
    struct exec_config c;
    setenv("SANDBOX_ENABLE_SECCOMP", "true", 1);
    setenv("SANDGATE_SECCOMP_PROFILE", "/etc/custom.json", 1);
    cr_assert_eq(parse(&c, NULL, "--language", "python", NULL), 0);
    cr_assert_str_eq(c.seccomp_path, "/etc/custom.json");
    unsetenv("SANDGATE_SECCOMP_PROFILE");
    /* The tests run from the source tree, where the shipped profile is. */
    cr_assert_eq(parse(&c, NULL, "--language", "python", NULL), 0);
    cr_assert_str_eq(c.seccomp_path, EXEC_SECCOMP_SOURCE);
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    cr_assert(c.seccomp_off);
}

Test(config, ranges_enforced)
{
    struct exec_config c;
    const char *bad[][2] = {{"--pids-limit", "32"},
                            {"--pool-size", "0"},
                            {"--pool-size", "65"},
                            {"--memory-mb", "16"},
                            {"--cpus", "0"},
                            {"--cpus", "abc"},
                            {"--timeout-ms", "-5"},
                            {"--listen", "nocolon"},
                            {"--listen", "1.2.3.4:99999"},
                            {"--instance", "bad/name"},
                            {"--max-output-bytes", "10"},
                            {"--log-level", "loud"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", bad[i][0],
                           bad[i][1], NULL),
                     -EINVAL, "%s %s", bad[i][0], bad[i][1]);
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", "--timeout-ms",
                       "5000", "--max-timeout-ms", "1000", NULL),
                 -EINVAL);
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", "stray", NULL),
                 -EINVAL);
}

Test(config, runc_only_with_explicit_flag)
{
    struct exec_config c;
    struct sg_error e = {0};
    cr_assert_eq(
        parse(&c, &e, "--language", "python", "--seccomp", "none", "--runtime", "runc", NULL),
        -EINVAL);
    cr_assert(strstr(e.msg, "--insecure-runtime"));
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", "--insecure-runtime",
                       "runc", NULL),
                 0);
    cr_assert(c.insecure_runtime);
    cr_assert_str_eq(c.runtime, "runc");
}

Test(config, listen_and_help)
{
    struct exec_config c;
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", "--listen",
                       "[::1]:7000", NULL),
                 0);
    cr_assert_str_eq(c.listen_addr, "::1");
    cr_assert_eq(c.listen_port, 7000);
    cr_assert_eq(parse(&c, NULL, "--help", NULL), 1);
    cr_assert(strstr(exec_config_usage(), "SANDBOX_TIMEOUT"));
}

Test(config, bare_numbers_mean_the_unit_of_their_name)
{
    /* The grammar is sg_parse.h (tests/unit/test_common.c); what a bare number
     * means depends on where it comes from: --timeout-ms and --memory-mb count
     * ms and MiB, RAGFlow's variables seconds and (Docker's) bytes. */
    struct exec_config c;
    struct sg_error e = {0};
    cr_assert_eq(parse(&c, &e, "--language", "python", "--seccomp", "none", "--timeout-ms", "1500",
                       "--memory-mb", "512", NULL),
                 0, "%s", e.msg);
    cr_assert_eq(c.timeout_ms, 1500);
    cr_assert_eq(c.memory_mb, 512);
    cr_assert_eq(parse(&c, &e, "--language", "python", "--seccomp", "none", "--timeout-ms", "1m30s",
                       "--memory-mb", "1g", "--max-timeout-ms", "2m", NULL),
                 0, "%s", e.msg);
    cr_assert_eq(c.timeout_ms, 90000);
    cr_assert_eq(c.memory_mb, 1024);
    cr_assert_eq(c.max_timeout_ms, 120000);
    setenv("SANDBOX_TIMEOUT", "20", 1);
    setenv("SANDBOX_MAX_MEMORY", "536870912", 1);
    cr_assert_eq(parse(&c, &e, "--language", "python", "--seccomp", "none", NULL), 0, "%s", e.msg);
    cr_assert_eq(c.timeout_ms, 20000);
    cr_assert_eq(c.memory_mb, 512);
    setenv("SANDBOX_MAX_MEMORY", "512", 1);
    cr_assert_eq(parse(&c, &e, "--language", "python", "--seccomp", "none", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "SANDBOX_MAX_MEMORY='512' is invalid: 1 is outside [32, 65536]"), "%s",
              e.msg);
    unsetenv("SANDBOX_MAX_MEMORY");
    setenv("SANDBOX_TIMEOUT", "1m1m", 1);
    cr_assert_eq(parse(&c, &e, "--language", "python", "--seccomp", "none", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "is not a duration"), "%s", e.msg);
    clean_env();
    cr_assert_eq(
        parse(&c, &e, "--language", "python", "--seccomp", "none", "--pool-size", "x", NULL),
        -EINVAL);
    cr_assert(strstr(e.msg, "--pool-size 'x' is invalid: 'x' is not an unsigned integer"), "%s",
              e.msg);
}

static struct exec_config api_config(void)
{
    clean_env();
    struct exec_config c;
    cr_assert_eq(parse(&c, NULL, "--language", "python", "--seccomp", "none", "--max-timeout-ms",
                       "30000", NULL),
                 0);
    return c;
}

static int req(const char *body, struct exec_request *r, struct sg_error *e)
{
    struct exec_config c = api_config();
    return exec_request_parse(body, strlen(body), &c, r, e);
}

Test(exec_api, minimal_request_gets_defaults)
{
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"def main(): pass\"}", &r, NULL), 0);
    cr_assert_eq(strlen(r.job_id), 16, "a job id is made up when absent");
    cr_assert_eq(r.limits.timeout_ms, 10000);
    cr_assert_eq(r.limits.max_output_bytes, 1u << 20);
    cr_assert_eq(r.n_clamped, 0);
    cr_assert(json_is_object(r.arguments));
    exec_request_free(&r);
}

/* The request's language must name this executor's language, in the same
 * spellings as --language. */
Test(exec_api, language_field_spellings)
{
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(req("{\"code\":\"x\",\"language\":\"python\"}", &r, &e), 0, "%s", e.msg);
    exec_request_free(&r);
    const char *bad[] = {"nodejs", "javascript", "python3", "Python", "js"};
    for (size_t i = 0; i < 5; i++) {
        char body[96];
        snprintf(body, sizeof(body), "{\"code\":\"x\",\"language\":\"%s\"}", bad[i]);
        cr_assert_eq(req(body, &r, &e), -EINVAL, "%s", bad[i]);
        cr_assert(strstr(e.msg, "\"python\""), "%s", e.msg);
    }
}

Test(exec_api, limits_clamped_and_listed)
{
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"x\",\"limits\":{\"timeout_ms\":999999,\"memory_mb\":100000,"
                     "\"max_output_bytes\":10}}",
                     &r, NULL),
                 0);
    cr_assert_eq(r.limits.timeout_ms, 30000);
    cr_assert_eq(r.limits.memory_mb, 256);
    cr_assert_eq(r.limits.max_output_bytes, 10);
    cr_assert_eq(r.n_clamped, 2);
    cr_assert_str_eq(r.clamped[0], "timeout_ms");
    cr_assert_str_eq(r.clamped[1], "memory_mb");
    exec_request_free(&r);
}

Test(exec_api, lower_memory_request_is_listed_not_silently_dropped)
{
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"x\",\"limits\":{\"memory_mb\":64}}", &r, NULL), 0);
    cr_assert_eq(r.limits.memory_mb, 256, "the pool's limit applies");
    cr_assert_eq(r.n_clamped, 1);
    cr_assert_str_eq(r.clamped[0], "memory_mb");
    exec_request_free(&r);
}

Test(exec_api, enable_seccomp_fails_closed_without_a_profile)
{
    struct exec_request r;
    struct sg_error e = {0};
    /* api_config() runs with --seccomp none */
    cr_assert_lt(req("{\"code\":\"x\",\"limits\":{\"enable_seccomp\":true}}", &r, &e), 0);
    cr_assert(strstr(e.msg, "seccomp"), "%s", e.msg);
    cr_assert_eq(req("{\"code\":\"x\",\"limits\":{\"enable_seccomp\":false}}", &r, NULL), 0);
    exec_request_free(&r);
    cr_assert_lt(req("{\"code\":\"x\",\"limits\":{\"enable_seccomp\":\"yes\"}}", &r, NULL), 0);
}

Test(exec_api, invalid_requests)
{
    const char *bad[] = {"",
                         "[]",
                         "{\"code\":1}",
                         "{}",
                         "{\"code\":\"x\",\"language\":\"nodejs\"}",
                         "{\"code\":\"x\",\"language\":7}",
                         "{\"code\":\"x\",\"job_id\":\"\"}",
                         "{\"code\":\"x\",\"job_id\":\"a b\"}",
                         "{\"code\":\"x\",\"job_id\":"
                         "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
                         "{\"code\":\"x\",\"arguments\":[]}",
                         "{\"code\":\"x\",\"arguments\":\"s\"}",
                         "{\"code\":\"x\",\"files\":[]}",
                         "{\"code\":\"x\",\"files\":{\"a/b\":\"\"}}",
                         "{\"code\":\"x\",\"files\":{\"..\":\"\"}}",
                         "{\"code\":\"x\",\"files\":{\".env\":\"\"}}",
                         "{\"code\":\"x\",\"files\":{\"a\":5}}",
                         "{\"code\":\"x\",\"files\":{\"a\":\"!!!!\"}}",
                         "{\"code\":\"x\",\"limits\":{\"timeout_ms\":0}}",
                         "{\"code\":\"x\",\"limits\":{\"timeout_ms\":1.5}}",
                         "{\"code\":\"x\",\"limits\":{\"nproc\":1}}",
                         "{\"code\":\"x\",\"limits\":[]}",
                         "{\"code\":\"x\",\"code\":\"y\"}",
                         "{\"code\":\"a\\u0000b\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct exec_request r;
        struct sg_error e = {0};
        cr_assert_lt(req(bad[i], &r, &e), 0, "accepted: %s", bad[i]);
        cr_assert_neq(e.msg[0], '\0');
        cr_assert_null(r.root);
    }
}

Test(exec_api, argument_depth_and_file_caps)
{
    char deep[256] = "{\"code\":\"x\",\"arguments\":{\"a\":";
    for (int i = 0; i < EXEC_ARGS_DEPTH_MAX; i++)
        strcat(deep, "[");
    strcat(deep, "1");
    for (int i = 0; i < EXEC_ARGS_DEPTH_MAX; i++)
        strcat(deep, "]");
    strcat(deep, "}}");
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(req(deep, &r, &e), -EINVAL, "%s", deep);
    cr_assert(strstr(e.msg, "deeper"));
    struct sg_buf b;
    sg_buf_init(&b, 1 << 20);
    sg_buf_printf(&b, "{\"code\":\"x\",\"files\":{");
    for (int i = 0; i <= EXEC_FILES_MAX; i++)
        sg_buf_printf(&b, "%s\"f%d\":\"\"", i ? "," : "", i);
    sg_buf_printf(&b, "}}");
    cr_assert_eq(req(b.data, &r, &e), -E2BIG);
    sg_buf_free(&b);
}

Test(exec_api, arguments_at_the_depth_cap_are_accepted)
{
    /* What the gateway forwards (container nesting <= the cap, scalars not
     * counted) must not be refused here. */
    char deep[256] = "{\"code\":\"x\",\"arguments\":{\"a\":";
    for (int i = 0; i < EXEC_ARGS_DEPTH_MAX - 1; i++)
        strcat(deep, "[");
    strcat(deep, "1");
    for (int i = 0; i < EXEC_ARGS_DEPTH_MAX - 1; i++)
        strcat(deep, "]");
    strcat(deep, "}}");
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(req(deep, &r, &e), 0, "%s", e.msg);
    exec_request_free(&r);
}

Test(exec_api, files_canonicalised_in_job_line)
{
    struct exec_request r;
    cr_assert_eq(req("{\"job_id\":\"j-1\",\"code\":\"print(1)\",\"arguments\":{\"a\":[1]},"
                     "\"files\":{\"d.csv\":\"YWJj\\nZA==\"}}",
                     &r, NULL),
                 0);
    size_t len = 0;
    char *line = exec_job_line(&r, "N0NCE0123456789ab", &len);
    cr_assert_not_null(line);
    cr_assert_eq(line[len - 1], '\n');
    cr_assert_null(memchr(line, '\n', len - 1), "exactly one line");
    json_t *j = json_loadb(line, len - 1, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(j, "nonce")), "N0NCE0123456789ab");
    cr_assert_str_eq(json_string_value(json_object_get(j, "code")), "print(1)");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "files"), "d.csv")),
                     "YWJjZA==");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "limits"), "timeout_ms")),
                 10000);
    json_decref(j);
    free(line);
    exec_request_free(&r);
}

/* A file already in canonical base64 reaches the job as the request's own
 * string (no copy is made); stray bits in the last quantum or whitespace
 * are re-encoded. Once the job is written, the input leaves the request. */
Test(exec_api, canonical_files_are_shared_not_copied_and_the_input_can_go)
{
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"print(1)\",\"arguments\":{\"a\":1},\"files\":"
                     "{\"a.bin\":\"YWJjZA==\",\"b.bin\":\"QR==\",\"c.bin\":\"YW Jj\","
                     "\"d.bin\":\"\",\"e.bin\":\"YWJj\"}}",
                     &r, NULL),
                 0);
    json_t *given = json_object_get(r.root, "files");
    static const char *const shared[] = {"a.bin", "d.bin", "e.bin"};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(json_object_get(r.files, shared[i]), json_object_get(given, shared[i]),
                     "%s is the request's own string", shared[i]);
    cr_assert_str_eq(json_string_value(json_object_get(r.files, "b.bin")), "QQ==");
    cr_assert_str_eq(json_string_value(json_object_get(r.files, "c.bin")), "YWJj");
    cr_assert_neq(json_object_get(r.files, "c.bin"), json_object_get(given, "c.bin"));
    json_t *job = exec_job_json(&r, "N0NCE0123456789ab");
    cr_assert_eq(json_object_get(job, "code"), json_object_get(r.root, "code"), "code shared");
    cr_assert_eq(json_object_get(job, "files"), r.files);
    json_decref(job);
    exec_request_drop_input(&r);
    cr_assert_null(json_object_get(r.root, "files"));
    cr_assert_null(json_object_get(r.root, "code"));
    cr_assert_null(json_object_get(r.root, "arguments"));
    cr_assert_null(r.files);
    cr_assert_str_eq(r.code, "");
    struct exec_outcome o;
    outcome_init(&o);
    char *answer = exec_response(r.job_id, &r, &o, 0, 1);
    cr_assert_not_null(answer, "the request still answers its job");
    free(answer);
    outcome_clear(&o);
    exec_request_free(&r);
}

/* The job's memory: the input part (released once the job is written) and
 * the rest, from the constants. */
Test(exec_api, job_memory_is_its_parts)
{
    cr_assert_eq(exec_job_input_memory(1000, 7), EXEC_JOB_MEMORY_BODY_COPIES * 1000 + 7);
    cr_assert_eq(exec_job_memory(1000, 7, 50), EXEC_JOB_MEMORY_FIXED +
                                                   exec_job_input_memory(1000, 7) +
                                                   EXEC_JOB_MEMORY_OUTPUT_COPIES * 50);
}

/* The parsed body's structures are counted: a megabyte of small values is
 * tens of megabytes of jansson's objects, not a megabyte. */
Test(exec_api, the_parsed_values_are_counted_in_the_input)
{
    cr_assert_eq(exec_json_tree_bytes(NULL), 0);
    json_t *j = json_loads("{\"a\":[0,1,\"x\"],\"b\":{\"c\":null}}", 0, NULL);
    /* 7 values (root, array, 3 items, object, null), 3 members */
    cr_assert_eq(exec_json_tree_bytes(j), 7 * EXEC_JSON_VALUE_BYTES + 3 * EXEC_JSON_MEMBER_BYTES);
    json_decref(j);
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"x\",\"arguments\":{\"a\":[0,0,0,0]}}", &r, NULL), 0);
    cr_assert_eq(r.tree_bytes, exec_json_tree_bytes(r.root));
    cr_assert_geq(r.tree_bytes, 6 * EXEC_JSON_VALUE_BYTES + 2 * EXEC_JSON_MEMBER_BYTES);
    exec_request_free(&r);
}

/* "mode": "script" reaches the runner's job line; "main" (the default)
 * adds nothing; anything else is refused. */
Test(exec_api, script_mode_reaches_the_job_line)
{
    struct exec_request r;
    size_t len = 0;
    cr_assert_eq(req("{\"code\":\"print(1)\",\"mode\":\"script\"}", &r, NULL), 0);
    char *line = exec_job_line(&r, "N0NCE0123456789ab", &len);
    json_t *j = json_loadb(line, len - 1, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(j, "mode")), "script");
    json_decref(j);
    free(line);
    exec_request_free(&r);
    cr_assert_eq(req("{\"code\":\"print(1)\",\"mode\":\"main\"}", &r, NULL), 0);
    line = exec_job_line(&r, "N0NCE0123456789ab", &len);
    cr_assert_null(strstr(line, "\"mode\""));
    free(line);
    exec_request_free(&r);
    cr_assert_eq(req("{\"code\":\"1\",\"flavour\":\"pandas\"}", &r, NULL), 0);
    cr_assert_str_eq(r.flavour, "pandas");
    exec_request_free(&r);
    struct sg_error e;
    cr_assert_eq(req("{\"code\":\"1\",\"flavour\":\"a/b:c\"}", &r, &e), -EINVAL);
    const char *bad[] = {"{\"code\":\"1\",\"mode\":\"eval\"}", "{\"code\":\"1\",\"mode\":1}"};
    for (size_t i = 0; i < 2; i++)
        cr_assert_eq(req(bad[i], &r, &e), -EINVAL, "%s", bad[i]);
}

static void classify(const char *line, struct exec_outcome *o)
{
    outcome_init(o);
    cr_assert_eq(outcome_from_runner(line, strlen(line), o), 0, "%s", line);
}

Test(outcome, runner_outcomes_map_to_ragflow_codes)
{
    struct exec_outcome o;
    classify("{\"sandgate_runner\":1,\"outcome\":\"ok\",\"exit_code\":0,\"stdout\":\"hi\","
             "\"result\":{\"present\":true,\"value\":{\"a\":1}},\"memory_used_kb\":100,"
             "\"time_used_ms\":2.5}",
             &o);
    cr_assert_eq(o.status, EXEC_SUCCESS);
    cr_assert_eq(o.memory_used_kb, 100);
    cr_assert_str_eq(json_string_value(o.out), "hi");
    outcome_clear(&o);
    struct {
        const char *line;
        enum exec_status st;
        int code;
        const char *limit, *rt;
    } cases[] = {
        {"{\"sandgate_runner\":1,\"outcome\":\"exception\",\"exit_code\":1}", EXEC_PROGRAM_ERROR, 1,
         NULL, "nonzero_exit"},
        {"{\"sandgate_runner\":1,\"outcome\":\"exception\",\"exit_code\":3}", EXEC_PROGRAM_ERROR, 3,
         NULL, "nonzero_exit"},
        {"{\"sandgate_runner\":1,\"outcome\":\"no_main\",\"exit_code\":1}", EXEC_PROGRAM_ERROR, 1,
         NULL, "nonzero_exit"},
        {"{\"sandgate_runner\":1,\"outcome\":\"timeout\",\"exit_code\":-124}", EXEC_RESOURCE_LIMIT,
         -124, "time", NULL},
        {"{\"sandgate_runner\":1,\"outcome\":\"output_limit\",\"exit_code\":-125}",
         EXEC_RESOURCE_LIMIT, -125, "output", NULL},
        {"{\"sandgate_runner\":1,\"outcome\":\"killed\",\"exit_code\":-9,\"signal\":9}",
         EXEC_PROGRAM_ERROR, -9, NULL, "signalled"},
        {"{\"sandgate_runner\":1,\"outcome\":\"bad_job\",\"exit_code\":-3}", EXEC_RUNNER_ERROR, -3,
         NULL, NULL},
        {"{\"sandgate_runner\":1,\"outcome\":\"runner_error\",\"exit_code\":-3}", EXEC_RUNNER_ERROR,
         -3, NULL, NULL},
        /* a session cell interrupted on request */
        {"{\"sandgate_runner\":1,\"outcome\":\"cancelled\",\"exit_code\":-130}", EXEC_CANCELLED,
         -130, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        classify(cases[i].line, &o);
        cr_assert_eq(o.status, cases[i].st, "%s", cases[i].line);
        cr_assert_eq(o.exit_code, cases[i].code, "%s", cases[i].line);
        cr_assert_eq(!!o.resource_limit_type, !!cases[i].limit);
        if (cases[i].limit)
            cr_assert_str_eq(o.resource_limit_type, cases[i].limit);
        cr_assert_eq(!!o.runtime_error_type, !!cases[i].rt);
        if (cases[i].rt)
            cr_assert_str_eq(o.runtime_error_type, cases[i].rt);
        outcome_clear(&o);
    }
    cr_assert_str_eq(outcome_status_name(EXEC_CANCELLED), "cancelled");
}

Test(outcome, malformed_runner_lines)
{
    const char *bad[] = {"{}",
                         "[]",
                         "nope",
                         "{\"sandgate_runner\":2,\"outcome\":\"ok\"}",
                         "{\"sandgate_runner\":1,\"outcome\":\"weird\"}",
                         "{\"sandgate_runner\":1,\"outcome\":\"ok\",\"stdout\":5}",
                         "{\"sandgate_runner\":1,\"outcome\":\"ok\",\"exit_code\":100000}",
                         "{\"sandgate_runner\":1,\"outcome\":\"ok\",\"result\":{\"value\":1}}",
                         "{\"sandgate_runner\":1,\"outcome\":\"ok\",\"memory_used_kb\":-1}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct exec_outcome o;
        outcome_init(&o);
        cr_assert_eq(outcome_from_runner(bad[i], strlen(bad[i]), &o), -EPROTO, "%s", bad[i]);
        cr_assert_null(o.out);
    }
}

Test(outcome, dead_sandbox_classification)
{
    struct exec_outcome o;
    struct docker_state oom = {.oom_killed = true, .exit_code = 137};
    outcome_init(&o);
    outcome_from_dead(&oom, NULL, &o);
    cr_assert_eq(o.status, EXEC_RESOURCE_LIMIT);
    cr_assert_str_eq(o.resource_limit_type, "memory");
    cr_assert_eq(o.exit_code, EXEC_CODE_MEMORY);
    struct docker_state bare_kill = {.oom_killed = false, .exit_code = 137};
    outcome_init(&o);
    outcome_from_dead(&bare_kill, NULL, &o);
    /* the program can SIGKILL the runner itself: memory only on the engine's word */
    cr_assert_eq(o.status, EXEC_PROGRAM_ERROR);
    cr_assert_null(o.resource_limit_type);
    cr_assert_str_eq(o.runtime_error_type, "signalled");
    cr_assert_eq(o.exit_code, -9);
    cr_assert(strstr(o.detail, "SIGKILL") && strstr(o.detail, "no out-of-memory"), "%s", o.detail);
    struct docker_state pids = {.exit_code = 2};
    outcome_init(&o);
    outcome_from_dead(&pids, "", &o);
    cr_assert_str_eq(o.resource_limit_type, "pids");
    cr_assert_eq(o.exit_code, EXEC_CODE_PIDS);
    struct docker_state crash = {.exit_code = 134};
    outcome_init(&o);
    const char *tb = "Traceback (most recent call last):\n  File \"/opt/sandgate/runner.py\"";
    outcome_from_dead(&crash, tb, &o);
    cr_assert_eq(o.status, EXEC_RUNNER_ERROR);
    cr_assert_eq(o.exit_code, EXEC_CODE_RUNNER);
    cr_assert(strstr(o.detail, "exit 134"), "%s", o.detail);
    cr_assert_null(strstr(o.detail, "Traceback"), "runner internals stay out of detail: %s",
                   o.detail);
    cr_assert_null(strstr(o.detail, "/opt/"), "%s", o.detail);
    cr_assert_str_eq(o.log_detail, tb, "the executor log gets them");
    outcome_init(&o);
    outcome_from_dead(NULL, NULL, &o);
    cr_assert_eq(o.status, EXEC_RUNNER_ERROR);
    cr_assert(strstr(o.detail, "unknown"));
}

Test(outcome, response_fields)
{
    struct exec_request r;
    cr_assert_eq(
        req("{\"job_id\":\"resp\",\"code\":\"x\",\"limits\":{\"timeout_ms\":99999999}}", &r, NULL),
        0);
    struct exec_outcome o;
    outcome_init(&o);
    outcome_limit(&o, "time", EXEC_CODE_TIME, "time limit exceeded");
    char *s = exec_response(r.job_id, &r, &o, 0.5, 12.0);
    json_t *j = json_loads(s, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "resource_limit_exceeded");
    cr_assert_eq(json_integer_value(json_object_get(j, "exit_code")), -124);
    cr_assert_str_eq(json_string_value(json_object_get(j, "resource_limit_type")), "time");
    cr_assert_str_eq(json_string_value(json_object_get(j, "stdout")), "");
    cr_assert(json_is_null(json_object_get(j, "memory_used_kb")));
    cr_assert_eq(json_real_value(json_object_get(j, "time_used_ms")), 12.0);
    cr_assert(json_is_false(json_object_get(json_object_get(j, "result"), "present")));
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "clamped"), 0)),
                     "timeout_ms");
    json_decref(j);
    free(s);
    exec_request_free(&r);
}

Test(server, bearer_token)
{
    cr_assert(exec_server_token_ok("Bearer s3cret", "s3cret"));
    cr_assert_not(exec_server_token_ok("Bearer s3cre", "s3cret"));
    cr_assert_not(exec_server_token_ok("Bearer s3cret2", "s3cret"));
    cr_assert_not(exec_server_token_ok("s3cret", "s3cret"));
    cr_assert_not(exec_server_token_ok(NULL, "s3cret"));
    cr_assert_not(exec_server_token_ok("Bearer ", "s3cret"));
}

Test(metrics, counts_and_histograms)
{
    struct metrics *m = metrics_new();
    metrics_job(m, EXEC_SUCCESS, NULL, 12.0);
    metrics_job(m, EXEC_RESOURCE_LIMIT, "memory", 500.0);
    metrics_rejected(m, "pool_busy");
    metrics_create(m, 300.0, true);
    metrics_create(m, 10.0, false);
    struct metrics_gauges g = {2, 1, 1, 0, true};
    char *t = metrics_render(m, &g);
    cr_assert(strstr(t, "sandgate_executor_jobs_total{status=\"success\"} 1\n"));
    cr_assert(strstr(t, "sandgate_executor_limit_exceeded_total{type=\"memory\"} 1\n"));
    cr_assert(strstr(t, "sandgate_executor_rejected_total{reason=\"pool_busy\"} 1\n"));
    cr_assert(strstr(t, "sandgate_executor_job_duration_seconds_bucket{le=\"0.015\"} 1\n"));
    cr_assert(strstr(t, "sandgate_executor_job_duration_seconds_count 2\n"));
    cr_assert(strstr(t, "sandgate_executor_container_creates_total{result=\"failed\"} 1\n"));
    cr_assert(strstr(t, "sandgate_executor_pool_idle 1\n"));
    free(t);
    metrics_free(m);
}

Test(metrics, creation_phases_are_summed)
{
    struct metrics *m = metrics_new();
    const double a[METRICS_PHASES] = {10, 20, 300, 40}, b[METRICS_PHASES] = {30, 0, 100, 60};
    metrics_create_phases(m, a);
    metrics_create_phases(m, b);
    struct metrics_gauges g = {0};
    char *t = metrics_render(m, &g);
    cr_assert(
        strstr(t, "sandgate_executor_sandbox_phase_seconds_total{phase=\"create\"} 0.040000\n"));
    cr_assert(
        strstr(t, "sandgate_executor_sandbox_phase_seconds_total{phase=\"attach\"} 0.020000\n"));
    cr_assert(
        strstr(t, "sandgate_executor_sandbox_phase_seconds_total{phase=\"start\"} 0.400000\n"));
    cr_assert(
        strstr(t, "sandgate_executor_sandbox_phase_seconds_total{phase=\"ready\"} 0.100000\n"));
    cr_assert(strstr(t, "sandgate_executor_sandbox_phase_launches_total 2\n"));
    free(t);
    metrics_free(m);
    metrics_free(NULL);
}

Test(outcome, value_json_carries_integers_beyond_64_bits)
{
    const char *line = "{\"sandgate_runner\":1,\"outcome\":\"ok\",\"result\":{\"present\":true,"
                       "\"value_json\":\"[18446744073709551616, 1e20, {\\\"a\\\": -5}]\"}}";
    struct exec_outcome o;
    outcome_init(&o);
    cr_assert_eq(outcome_from_runner(line, strlen(line), &o), 0);
    cr_assert_eq(o.status, EXEC_SUCCESS);
    json_t *j = exec_response_json("id", NULL, &o, 0, 0);
    json_t *res = json_object_get(j, "result");
    cr_assert(json_is_true(json_object_get(res, "present")));
    cr_assert(json_is_null(json_object_get(res, "value")));
    cr_assert_str_eq(json_string_value(json_object_get(res, "value_json")),
                     "[18446744073709551616, 1e20, {\"a\": -5}]");
    json_decref(j);
    outcome_clear(&o);
}

Test(outcome, bad_value_json_is_a_malformed_line)
{
    char deep[2 * (SG_JSON_RESULT_DEPTH_MAX + 1) + 1];
    memset(deep, '[', SG_JSON_RESULT_DEPTH_MAX + 1);
    memset(deep + SG_JSON_RESULT_DEPTH_MAX + 1, ']', SG_JSON_RESULT_DEPTH_MAX + 1);
    deep[sizeof(deep) - 1] = '\0';
    const char *texts[] = {"NaN", "1e400", "[1,", "1 2", "", "-Infinity", "\"\\ud800\"x", deep};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_t *line = json_pack("{s:i,s:s,s:{s:b,s:s}}", "sandgate_runner", 1, "outcome", "ok",
                                 "result", "present", 1, "value_json", texts[i]);
        struct exec_outcome o;
        outcome_init(&o);
        cr_assert_eq(outcome_from_runner_json(line, &o), -EPROTO, "%.20s", texts[i]);
        json_decref(line);
    }
    json_t *line = json_pack("{s:i,s:s,s:{s:b,s:i}}", "sandgate_runner", 1, "outcome", "ok",
                             "result", "present", 1, "value_json", 5);
    struct exec_outcome o;
    outcome_init(&o);
    cr_assert_eq(outcome_from_runner_json(line, &o), -EPROTO);
    json_decref(line);
    deep[0] = ' '; /* one level less: at the cap */
    deep[sizeof(deep) - 2] = ' ';
    cr_assert(sg_json_raw_ok(deep, strlen(deep), SG_JSON_RESULT_DEPTH_MAX));
}

Test(exec_api, names_the_runners_reserve_are_refused)
{
    const char *bodies[] = {"{\"code\":\"x\",\"files\":{\"main.py\":\"eA==\"}}",
                            "{\"code\":\"x\",\"files\":{\"main.js\":\"eA==\"}}",
                            "{\"code\":\"x\",\"files\":{\"artifacts\":\"eA==\"}}"};
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        struct exec_request r;
        struct sg_error e = {0};
        cr_assert_eq(req(bodies[i], &r, &e), -EINVAL, "%s", bodies[i]);
        cr_assert(strstr(e.msg, "reserved"), "%s", e.msg);
    }
    struct exec_request r;
    cr_assert_eq(req("{\"code\":\"x\",\"files\":{\"main.py.csv\":\"eA==\"}}", &r, NULL), 0);
    exec_request_free(&r);
}
