/* Unit tests for request validation: every 400/413 path of the public
 * request bodies, and the accepted shapes (RAGFlow's /run and the native ones). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_request.h"

static const struct gw_caps caps = {
    .max_code_bytes = 64,
    .max_arguments_bytes = 100,
    .max_arguments_depth = 3,
    .max_files = 2,
    .max_files_bytes = 8,
    .max_timeout_ms = 10000,
    .max_memory_mb = 512,
};

static struct gw_request req;
static struct gw_req_error rerr;

static int parse(enum gw_req_kind kind, const char *body)
{
    memset(&rerr, 0, sizeof(rerr));
    return gw_request_parse(kind, body, strlen(body), &caps, &req, &rerr);
}

static void teardown(void)
{
    gw_request_free(&req);
}

TestSuite(gw_request, .fini = teardown);

/* "def main(): return 1" */
#define B64_MAIN "ZGVmIG1haW4oKTogcmV0dXJuIDE="

Test(gw_request, ragflow_run_shape)
{
    cr_assert_eq(parse(GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"" B64_MAIN "\", \"language\": "
                                           "\"python\", \"arguments\": {\"a\": [1, 2]}}"),
                 0, "%s", rerr.message);
    cr_assert_eq(req.lang, SG_LANG_PYTHON);
    cr_assert_eq(req.code_len, strlen("def main(): return 1"));
    cr_assert_str_eq(req.code, "def main(): return 1");
    cr_assert(json_is_object(req.arguments));
    cr_assert_eq(json_object_size(req.arguments), 1);
}

Test(gw_request, ragflow_defaults_and_leniency)
{
    cr_assert_eq(parse(GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"" B64_MAIN "\", \"arguments\": "
                                           "null, \"extra\": 1}"),
                 0, "%s", rerr.message);
    cr_assert_eq(req.lang, SG_LANG_PYTHON, "language defaults to python");
    cr_assert_eq(json_object_size(req.arguments), 0, "null arguments are {}");
    gw_request_free(&req);
    cr_assert_eq(parse(GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"\", \"language\": \"JavaScript\"}"), 0,
                 "%s", rerr.message);
    cr_assert_eq(req.lang, SG_LANG_JAVASCRIPT, "javascript alias, any case");
    cr_assert_eq(req.code_len, 0);
    gw_request_free(&req);
    cr_assert_eq(parse(GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"\", \"language\": \"nodejs\"}"), 0);
    cr_assert_eq(req.lang, SG_LANG_JAVASCRIPT);
}

Test(gw_request, native_run_with_everything)
{
    cr_assert_eq(parse(GW_REQ_RUN,
                       "{\"language\": \"nodejs\", \"code\": \"x\", \"policy\": "
                       "\"strict\", \"limits\": {\"timeout_ms\": 500, \"memory_mb\": 64}, "
                       "\"files\": {\"data.csv\": \"YWJj\", \"b-1_x\": \"\"}}"),
                 0, "%s", rerr.message);
    cr_assert_eq(req.lang, SG_LANG_JAVASCRIPT);
    cr_assert_str_eq(req.code, "x");
    cr_assert_str_eq(req.policy, "strict");
    cr_assert_eq(req.timeout_ms, 500);
    cr_assert_eq(req.memory_mb, 64);
    cr_assert_eq(json_object_size(req.files), 2);
    cr_assert_eq(json_object_size(req.arguments), 0);
}

Test(gw_request, analyze_shape)
{
    cr_assert_eq(
        parse(GW_REQ_ANALYZE, "{\"language\": \"python\", \"code_b64\": \"" B64_MAIN "\"}"), 0,
        "%s", rerr.message);
    cr_assert_null(req.arguments);
    gw_request_free(&req);
    cr_assert_eq(parse(GW_REQ_ANALYZE, "{\"language\": \"python\", \"code\": \"x\", "
                                       "\"arguments\": {}}"),
                 -EINVAL, "analyze takes no arguments");
    cr_assert_str_eq(rerr.code, "unknown_field");
}

struct bad_case {
    enum gw_req_kind kind;
    const char *body;
    int status;
    const char *code;
    const char *needle; /* the field the message must name */
};

static const struct bad_case bad_cases[] = {
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": ", 400, "bad_json", "invalid JSON"},
    {GW_REQ_RAGFLOW_RUN, "[]", 400, "bad_json", "object"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"code_b64\": \"YQ==\"}", 400, "bad_json",
     "duplicate"},
    {GW_REQ_RAGFLOW_RUN, "{}", 400, "bad_request", "code_b64"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": 5}", 400, "bad_type", "code_b64"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"a$==\"}", 400, "bad_base64", "code_b64"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ\"}", 400, "bad_base64", "code_b64"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"language\": \"ruby\"}", 400,
     "unknown_language", "language"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"language\": 3}", 400, "bad_type", "language"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"language\": \"pythonpythonpythonpython\"}",
     400, "unknown_language", "language"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"arguments\": [1]}", 400, "bad_type",
     "arguments"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"arguments\": \"x\"}", 400, "bad_type",
     "arguments"},
    {GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"arguments\": {\"a\": {\"b\": {\"c\": {}}}}}",
     400, "arguments_too_deep", "arguments"},
    {GW_REQ_RAGFLOW_RUN,
     "{\"code_b64\": \"YQ==\", \"arguments\": {\"a\": \"xxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}",
     413, "arguments_too_large", "arguments"},
    {GW_REQ_RUN,
     "{\"language\": \"python\", \"code\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
     413, "code_too_large", "code"},
    {GW_REQ_RAGFLOW_RUN,
     "{\"code_b64\": \"eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4"
     "eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4\"}",
     413, "code_too_large", "code_b64"},
    {GW_REQ_RUN, "{\"code\": \"x\"}", 400, "bad_request", "language"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"code_b64\": \"YQ==\"}", 400,
     "bad_request", "exactly one"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": 1}", 400, "bad_type", "code"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"colour\": 1}", 400, "unknown_field",
     "colour"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"policy\": 1}", 400, "bad_type",
     "policy"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"policy\": \"\"}", 400,
     "unknown_policy", "policy"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"limits\": []}", 400, "bad_type",
     "limits"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"limits\": {\"timeout_ms\": 0}}",
     400, "bad_type", "limits.timeout_ms"},
    {GW_REQ_RUN,
     "{\"language\": \"python\", \"code\": \"x\", \"limits\": {\"timeout_ms\": "
     "10001}}",
     400, "limit_too_high", "limits.timeout_ms"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"limits\": {\"memory_mb\": 1.5}}",
     400, "bad_type", "limits.memory_mb"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"limits\": {\"cpus\": 1}}", 400,
     "unknown_field", "limits.cpus"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": []}", 400, "bad_type",
     "files"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"../x\": \"\"}}", 400,
     "bad_file_name", "../x"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": {\".env\": \"\"}}", 400,
     "bad_file_name", ".env"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"a/b\": \"\"}}", 400,
     "bad_file_name", "a/b"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"a\": 1}}", 400,
     "bad_type", "files.a"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"a\": \"!!\"}}", 400,
     "bad_base64", "files.a"},
    {GW_REQ_RUN,
     "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"a\": \"\", \"b\": "
     "\"\", \"c\": \"\"}}",
     413, "too_many_files", "files"},
    {GW_REQ_RUN,
     "{\"language\": \"python\", \"code\": \"x\", \"files\": {\"a\": \"YWJjZGVm\", "
     "\"b\": \"YWJjZGVm\"}}",
     413, "files_too_large", "files"},
    {GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"a\\u0000b\"}", 400, "bad_json", "NUL"},
    /* a session cell: the same codes as /v1/run's code */
    {GW_REQ_CELL, "{}", 400, "bad_request", "code_b64"},
    {GW_REQ_CELL, "{\"code\": \"1\", \"code_b64\": \"MQ==\"}", 400, "bad_request", "code"},
    {GW_REQ_CELL, "{\"code_b64\": \"!!!\"}", 400, "bad_base64", "code_b64"},
    {GW_REQ_CELL, "{\"code\": 1}", 400, "bad_type", "code"},
    {GW_REQ_CELL, "{\"code\": \"1\", \"language\": \"python\"}", 400, "unknown_field", "language"},
    {GW_REQ_CELL, "{\"code\": \"1\", \"timeout_ms\": 0}", 400, "bad_type", "timeout_ms"},
    {GW_REQ_CELL, "{\"code\": \"1\", \"timeout_ms\": 10001}", 400, "limit_too_high", "timeout_ms"},
    {GW_REQ_CELL, "{\"code\": \"1\", \"stream\": \"yes\"}", 400, "bad_type", "stream"},
    {GW_REQ_CELL,
     "{\"code\": \"0123456789012345678901234567890123456789012345678901234567890123456789\"}", 413,
     "code_too_large", "code"},
};

Test(gw_request, every_bad_request_is_refused_with_its_field)
{
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        const struct bad_case *c = &bad_cases[i];
        cr_assert_eq(parse(c->kind, c->body), -EINVAL, "case %zu accepted: %s", i, c->body);
        cr_assert_eq(rerr.status, c->status, "case %zu: status %d", i, rerr.status);
        cr_assert_str_eq(rerr.code, c->code, "case %zu: code %s", i, rerr.code);
        cr_assert(strstr(rerr.message, c->needle), "case %zu: '%s' lacks '%s'", i, rerr.message,
                  c->needle);
        cr_assert_null(req.code, "case %zu: nothing kept after a failure", i);
        cr_assert_null(req.arguments);
    }
}

Test(gw_request, cell_shape)
{
    cr_assert_eq(
        parse(GW_REQ_CELL, "{\"code_b64\": \"eD0x\", \"timeout_ms\": 500, \"stream\": true}"), 0,
        "%s", rerr.message);
    cr_assert_str_eq(req.code, "x=1");
    cr_assert_eq(req.timeout_ms, 500);
    cr_assert(req.stream);
}

Test(gw_request, depth_and_size_at_the_caps_pass)
{
    cr_assert_eq(parse(GW_REQ_RAGFLOW_RUN, "{\"code_b64\": \"YQ==\", \"arguments\": {\"a\": "
                                           "{\"b\": [1]}}}"),
                 0, "depth 3 is allowed: %s", rerr.message);
    gw_request_free(&req);
    cr_assert_eq(parse(GW_REQ_RUN, "{\"language\": \"python\", \"code\": \"x\", \"files\": "
                                   "{\"a\": \"YWJjZA==\", \"b\": \"YWJjZA==\"}}"),
                 0, "8 decoded bytes is the cap: %s", rerr.message);
}
