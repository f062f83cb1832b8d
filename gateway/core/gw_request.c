#include "gw_request.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "gw_egress.h"
#include "json_nesting.h"
#include "sg_file_name.h"

#define LANG_NAME_MAX 16

static int fail(struct gw_req_error *e, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct gw_req_error *e, int status, const char *code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->message, sizeof(e->message), fmt, ap);
        va_end(ap);
        e->status = status;
        e->code = code;
    }
    return -EINVAL;
}

int gw_request_language(json_t *v, enum sg_lang *ret, struct gw_req_error *e)
{
    if (!json_is_string(v))
        return fail(e, 400, "bad_type", "language: expected a string");
    const char *s = json_string_value(v);
    char low[LANG_NAME_MAX + 1];
    size_t n = json_string_length(v);
    if (n > LANG_NAME_MAX)
        return fail(e, 400, "unknown_language", "language: unsupported (python or nodejs)");
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)s[i]); /* for the message */
    if (sg_lang_parse(s, SG_LANG_NAMES_ALL | SG_LANG_ANY_CASE, ret) < 0)
        return fail(e, 400, "unknown_language",
                    "language: '%s' is not supported (python or "
                    "nodejs)",
                    low);
    return 0;
}

static int parse_code(json_t *code, json_t *code_b64, const struct gw_caps *caps,
                      struct gw_request *r, struct gw_req_error *e)
{
    if (code && code_b64)
        return fail(e, 400, "bad_request", "code, code_b64: give exactly one");
    if (!code && !code_b64)
        return fail(e, 400, "bad_request", "code_b64: missing");
    if (code) {
        if (!json_is_string(code))
            return fail(e, 400, "bad_type", "code: expected a string");
        if (json_string_length(code) > caps->max_code_bytes)
            return fail(e, 413, "code_too_large", "code: %zu bytes exceeds the cap of %llu",
                        json_string_length(code), (unsigned long long)caps->max_code_bytes);
        r->code_len = json_string_length(code);
        r->code = malloc(r->code_len + 1);
        if (!r->code)
            return fail(e, 500, "internal", "out of memory");
        memcpy(r->code, json_string_value(code), r->code_len + 1);
        return 0;
    }
    if (!json_is_string(code_b64))
        return fail(e, 400, "bad_type", "code_b64: expected a string");
    struct sg_error err;
    unsigned char *out = NULL;
    int rc = sg_b64_decode(json_string_value(code_b64), json_string_length(code_b64),
                           caps->max_code_bytes, &out, &r->code_len, &err);
    if (rc == -E2BIG)
        return fail(e, 413, "code_too_large",
                    "code_b64: decoded code exceeds the cap of %llu "
                    "bytes",
                    (unsigned long long)caps->max_code_bytes);
    if (rc < 0)
        return fail(e, 400, "bad_base64", "code_b64: %s", err.msg);
    r->code = (char *)out;
    return 0;
}

static int parse_arguments(json_t *v, const struct gw_caps *caps, struct gw_request *r,
                           struct gw_req_error *e, int null_ok)
{
    if (!v || (null_ok && json_is_null(v))) {
        r->arguments = json_object();
        return r->arguments ? 0 : fail(e, 500, "internal", "out of memory");
    }
    if (!json_is_object(v))
        return fail(e, 400, "bad_type", "arguments: expected an object");
    if (sg_json_nesting_exceeds(v, caps->max_arguments_depth))
        return fail(e, 400, "arguments_too_deep", "arguments: nested deeper than %llu levels",
                    (unsigned long long)caps->max_arguments_depth);
    size_t size = json_dumpb(v, NULL, 0, JSON_COMPACT);
    if (size > caps->max_arguments_bytes)
        return fail(e, 413, "arguments_too_large", "arguments: %zu bytes exceeds the cap of %llu",
                    size, (unsigned long long)caps->max_arguments_bytes);
    r->arguments = json_incref(v);
    return 0;
}

static int parse_files(json_t *v, const struct gw_caps *caps, struct gw_request *r,
                       struct gw_req_error *e)
{
    if (!json_is_object(v))
        return fail(e, 400, "bad_type", "files: expected an object of name -> base64");
    if (json_object_size(v) > caps->max_files)
        return fail(e, 413, "too_many_files", "files: %zu files exceeds the cap of %llu",
                    json_object_size(v), (unsigned long long)caps->max_files);
    uint64_t total = 0;
    const char *name;
    json_t *c;
    json_object_foreach(v, name, c)
    {
        if (!sg_file_name_ok(name, strlen(name)))
            return fail(e, 400, "bad_file_name",
                        "files: '%.64s' is not a valid file name (" SG_FILE_NAME_RULE ")", name);
        if (sg_file_name_reserved(name, strlen(name)))
            return fail(e, 400, "bad_file_name",
                        "files: '%s' is reserved (the runners write "
                        "main.py, main.js and artifacts themselves)",
                        name);
        if (!json_is_string(c))
            return fail(e, 400, "bad_type", "files.%s: expected a base64 string", name);
        unsigned char *out = NULL;
        size_t n = 0;
        struct sg_error err;
        int rc = sg_b64_decode(json_string_value(c), json_string_length(c),
                               caps->max_files_bytes - total, &out, &n, &err);
        free(out);
        if (rc == -E2BIG)
            return fail(e, 413, "files_too_large",
                        "files: decoded size exceeds the cap of %llu "
                        "bytes",
                        (unsigned long long)caps->max_files_bytes);
        if (rc < 0)
            return fail(e, 400, "bad_base64", "files.%s: %s", name, err.msg);
        total += n;
    }
    r->files = json_incref(v);
    return 0;
}

/* name: the field as the message shows it ("limits.timeout_ms"). */
static int parse_limit(json_t *v, const char *name, uint64_t max, uint64_t *ret,
                       struct gw_req_error *e)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return fail(e, 400, "bad_type", "%s: expected a positive integer", name);
    if ((uint64_t)json_integer_value(v) > max)
        return fail(e, 400, "limit_too_high", "%s: %lld exceeds the maximum %llu", name,
                    json_integer_value(v), (unsigned long long)max);
    *ret = (uint64_t)json_integer_value(v);
    return 0;
}

static int parse_limits(json_t *v, const struct gw_caps *caps, struct gw_request *r,
                        struct gw_req_error *e)
{
    if (!json_is_object(v))
        return fail(e, 400, "bad_type", "limits: expected an object");
    const char *k;
    json_t *c;
    json_object_foreach(v, k, c)
    {
        int rc;
        if (strcmp(k, "timeout_ms") == 0)
            rc = parse_limit(c, "limits.timeout_ms", caps->max_timeout_ms, &r->timeout_ms, e);
        else if (strcmp(k, "memory_mb") == 0)
            rc = parse_limit(c, "limits.memory_mb", caps->max_memory_mb, &r->memory_mb, e);
        else
            rc = fail(e, 400, "unknown_field",
                      "limits.%.64s: unknown field (timeout_ms, "
                      "memory_mb)",
                      k);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int parse_policy(json_t *v, struct gw_request *r, struct gw_req_error *e)
{
    if (!json_is_string(v))
        return fail(e, 400, "bad_type", "policy: expected a string");
    if (json_string_length(v) == 0 || json_string_length(v) >= sizeof(r->policy))
        return fail(e, 400, "unknown_policy", "policy: not a policy name");
    memcpy(r->policy, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* Keys each native endpoint accepts; /run ignores unknown keys like RAGFlow. */
static int check_keys(enum gw_req_kind kind, json_t *root, struct gw_req_error *e)
{
    static const char *const run_keys[] = {"language", "code",  "code_b64", "arguments", "policy",
                                           "limits",   "files", "stream",   "network",   NULL};
    static const char *const analyze_keys[] = {"language", "code",    "code_b64",
                                               "policy",   "network", NULL};
    static const char *const cell_keys[] = {"code", "code_b64", "timeout_ms", "stream", NULL};
    if (kind == GW_REQ_RAGFLOW_RUN)
        return 0;
    const char *const *allowed = kind == GW_REQ_RUN       ? run_keys
                                 : kind == GW_REQ_ANALYZE ? analyze_keys
                                                          : cell_keys;
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        size_t i = 0;
        while (allowed[i] && strcmp(allowed[i], k) != 0)
            i++;
        if (!allowed[i])
            return fail(e, 400, "unknown_field", "%.64s: unknown field", k);
    }
    return 0;
}

/* RAGFlow's optional base_image: a warm pool flavour's name picks that
 * flavour (the executors try it first); anything else is ignored, as RAGFlow
 * ignores what it does not know. */
static int parse_base_image(json_t *v, struct gw_request *r)
{
    size_t n = json_string_length(v);
    if (json_is_string(v) && n >= 1 && n < sizeof(r->flavour) &&
        strspn(json_string_value(v), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-") == n)
        memcpy(r->flavour, json_string_value(v), n + 1);
    return 0;
}

static int parse_stream(json_t *v, struct gw_request *r, struct gw_req_error *e)
{
    if (v && !json_is_boolean(v))
        return fail(e, 400, "bad_type", "stream: expected a boolean");
    r->stream = json_is_true(v);
    return 0;
}

/* A session cell: the session holds the language, policy and limits. */
static int parse_cell(json_t *root, const struct gw_caps *caps, struct gw_request *r,
                      struct gw_req_error *e)
{
    json_t *v = json_object_get(root, "timeout_ms");
    int rc =
        parse_code(json_object_get(root, "code"), json_object_get(root, "code_b64"), caps, r, e);
    if (rc == 0 && v)
        rc = parse_limit(v, "timeout_ms", caps->max_timeout_ms, &r->timeout_ms, e);
    return rc < 0 ? rc : parse_stream(json_object_get(root, "stream"), r, e);
}

static int parse_root(enum gw_req_kind kind, json_t *root, const struct gw_caps *caps,
                      struct gw_request *r, struct gw_req_error *e)
{
    if (!json_is_object(root))
        return fail(e, 400, "bad_json", "body: expected a JSON object");
    int rc = check_keys(kind, root, e);
    if (rc < 0)
        return rc;
    if (kind == GW_REQ_CELL)
        return parse_cell(root, caps, r, e);
    json_t *lang = json_object_get(root, "language");
    if (!lang && kind != GW_REQ_RAGFLOW_RUN)
        return fail(e, 400, "bad_request", "language: missing");
    if (lang && (rc = gw_request_language(lang, &r->lang, e)) < 0)
        return rc;
    json_t *code = kind == GW_REQ_RAGFLOW_RUN ? NULL : json_object_get(root, "code");
    if ((rc = parse_code(code, json_object_get(root, "code_b64"), caps, r, e)) < 0)
        return rc;
    if (kind == GW_REQ_ANALYZE)
        r->arguments = NULL;
    else if ((rc = parse_arguments(json_object_get(root, "arguments"), caps, r, e,
                                   kind == GW_REQ_RAGFLOW_RUN)) < 0)
        return rc;
    if (kind == GW_REQ_RAGFLOW_RUN)
        return parse_base_image(json_object_get(root, "base_image"), r);
    json_t *v;
    if ((v = json_object_get(root, "policy")) && (rc = parse_policy(v, r, e)) < 0)
        return rc;
    if ((v = json_object_get(root, "network")) && !json_is_null(v)) {
        struct sg_error ne = {0};
        if (gw_egress_request_check(v, &ne) < 0)
            return fail(e, 400, "bad_network", "%s", ne.msg);
        r->network = json_incref(v);
    }
    if ((v = json_object_get(root, "limits")) && (rc = parse_limits(v, caps, r, e)) < 0)
        return rc;
    if ((v = json_object_get(root, "files")) && (rc = parse_files(v, caps, r, e)) < 0)
        return rc;
    return parse_stream(json_object_get(root, "stream"), r, e);
}

int gw_request_parse(enum gw_req_kind kind, const char *body, size_t len,
                     const struct gw_caps *caps, struct gw_request *ret, struct gw_req_error *err)
{
    memset(ret, 0, sizeof(*ret));
    ret->lang = SG_LANG_PYTHON; /* RAGFlow's default language */
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return fail(err, 400, "bad_json", "body: invalid JSON at line %d column %d: %s", jerr.line,
                    jerr.column, jerr.text);
    int rc = parse_root(kind, root, caps, ret, err);
    json_decref(root);
    if (rc < 0)
        gw_request_free(ret);
    return rc;
}

void gw_request_free(struct gw_request *r)
{
    if (!r)
        return;
    free(r->code);
    json_decref(r->arguments);
    json_decref(r->files);
    json_decref(r->network);
    r->network = NULL;
    r->code = NULL;
    r->arguments = NULL;
    r->files = NULL;
}
