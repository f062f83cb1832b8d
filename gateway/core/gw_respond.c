#include "gw_respond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json_raw.h"

#define STDERR_MAX (256u * 1024u)

char *gw_violation_lines(const struct sg_violations *vs)
{
    struct sg_buf b;
    sg_buf_init(&b, STDERR_MAX);
    for (size_t i = 0; i < vs->count; i++) {
        const struct sg_violation *v = &vs->items[i];
        if (sg_buf_printf(&b, "%sLine %u: %s [%s]", i ? "\n" : "", v->line, v->message, v->rule) <
            0)
            break; /* capped: the violations array still has them all */
    }
    if (vs->dropped)
        sg_buf_printf(&b, "\n(%zu more violations not shown)", vs->dropped);
    if (!b.data)
        sg_buf_append(&b, "", 0);
    size_t len;
    return sg_buf_steal(&b, &len);
}

static json_t *empty_result(void)
{
    return json_pack("{s:b,s:n,s:s}", "present", 0, "value", "type", "json");
}

json_t *gw_result_rejected(const struct sg_violations *vs)
{
    char *lines = gw_violation_lines(vs);
    if (!lines)
        return NULL;
    json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:s,s:i,s:n,s:n,s:n,s:n,s:[],s:o,s:o}", "status",
                          "program_runner_error", "stdout", "", "stderr", lines, "exit_code",
                          GW_UNSAFE_EXIT_CODE, "detail", "Code is unsafe", "time_used_ms", 0,
                          "memory_used_kb", "resource_limit_type", "unauthorized_access_type",
                          "runtime_error_type", "artifacts", "result", empty_result(), "violations",
                          sg_violations_to_json(vs));
    free(lines);
    return o;
}

json_t *gw_result_runner_error(int exit_code, const char *stderr_text, const char *detail)
{
    return json_pack("{s:s,s:s,s:s,s:i,s:s,s:i,s:n,s:n,s:n,s:n,s:[],s:o}", "status",
                     "program_runner_error", "stdout", "", "stderr", stderr_text, "exit_code",
                     exit_code, "detail", detail, "time_used_ms", 0, "memory_used_kb",
                     "resource_limit_type", "unauthorized_access_type", "runtime_error_type",
                     "artifacts", "result", empty_result());
}

json_t *gw_result_pool_busy(void)
{
    return gw_result_runner_error(GW_POOL_BUSY_EXIT_CODE, "Container pool is busy",
                                  "no_available_container");
}

/* Copy key from exec when it has one of the accepted JSON types, else def. */
static void copy_field(json_t *dst, json_t *exec, const char *key, int types, json_t *def)
{
    json_t *v = json_object_get(exec, key);
    int ok = v && (((types & 1) && json_is_string(v)) || ((types & 2) && json_is_number(v)) ||
                   ((types & 4) && json_is_null(v)) || ((types & 8) && json_is_array(v)) ||
                   ((types & 16) && json_is_object(v)));
    json_object_set_new(dst, key, ok ? json_incref(v) : def);
    if (ok)
        json_decref(def); /* the default was not needed */
}

enum { T_STR = 1, T_NUM = 2, T_NULL = 4, T_ARR = 8, T_OBJ = 16 };

json_t *gw_result_from_executor(json_t *exec)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    copy_field(o, exec, "status", T_STR, json_string("program_runner_error"));
    copy_field(o, exec, "stdout", T_STR, json_string(""));
    copy_field(o, exec, "stderr", T_STR, json_string(""));
    copy_field(o, exec, "exit_code", T_NUM, json_integer(-3));
    copy_field(o, exec, "detail", T_STR | T_NULL, json_null());
    copy_field(o, exec, "time_used_ms", T_NUM, json_integer(0));
    copy_field(o, exec, "memory_used_kb", T_NUM | T_NULL, json_null()); /* null: unknown */
    copy_field(o, exec, "resource_limit_type", T_STR | T_NULL, json_null());
    copy_field(o, exec, "unauthorized_access_type", T_STR | T_NULL, json_null());
    copy_field(o, exec, "runtime_error_type", T_STR | T_NULL, json_null());
    copy_field(o, exec, "artifacts", T_ARR, json_array());
    json_t *res = json_object_get(exec, "result");
    json_t *raw = json_object_get(res, "value_json");
    if (json_is_object(res) && json_is_boolean(json_object_get(res, "present"))) {
        json_t *value = json_object_get(res, "value");
        json_object_set_new(o, "result",
                            json_pack("{s:O,s:O,s:s}", "present", json_object_get(res, "present"),
                                      "value", value ? value : json_null(), "type", "json"));
        /* Kept for gw_respond_json(), which writes this text as the value. */
        if (json_is_string(raw) && sg_json_raw_ok(json_string_value(raw), json_string_length(raw),
                                                  SG_JSON_RESULT_DEPTH_MAX))
            json_object_set(json_object_get(o, "result"), "value_json", raw);
        else if (raw)
            json_object_set_new(o, "result", empty_result());
    } else {
        json_object_set_new(o, "result", empty_result());
    }
    return o;
}

void gw_result_ragflow_shape(json_t *o)
{
    /* RAGFlow knows time, memory and output. A process limit is the sandbox
     * running out of room for processes, each of which is memory to it; the
     * exit code (-126) and detail still say which limit it was. */
    const char *t = json_string_value(json_object_get(o, "resource_limit_type"));
    if (t && strcmp(t, "pids") == 0)
        json_object_set_new(o, "resource_limit_type", json_string("memory"));
    /* RAGFlow has no "cancelled": a stopped program is its program_error. */
    const char *st = json_string_value(json_object_get(o, "status"));
    if (st && strcmp(st, "cancelled") == 0) {
        json_object_set_new(o, "status", json_string("program_error"));
        json_object_set_new(o, "detail", json_string("cancelled"));
    }
}

/* o's text with result.value_json (checked JSON text, see json_raw.h) written
 * as result.value: jansson cannot hold integers beyond 64 bits, so the body is
 * written without "result" and the result object appended by hand. */
static char *dump_with_raw_value(json_t *o, json_t *res, json_t *raw)
{
    json_incref(res);
    json_object_del(o, "result");
    char *head = json_dumps(o, GW_JSON_FLAGS);
    struct sg_buf b;
    size_t len = 0;
    /* no smaller cap than what went in: o holds at most one executor answer
     * (GW_EXEC_RESPONSE_MAX) plus the gateway's own fields */
    sg_buf_init(&b, SIZE_MAX);
    if (head && strlen(head) >= 2 &&
        sg_buf_printf(&b, "%.*s%s\"result\":{\"present\":%s,\"value\":", (int)strlen(head) - 1,
                      head, strlen(head) > 2 ? "," : "",
                      json_is_true(json_object_get(res, "present")) ? "true" : "false") == 0 &&
        sg_buf_append(&b, json_string_value(raw), json_string_length(raw)) == 0 &&
        sg_buf_printf(&b, ",\"type\":\"json\"}}") == 0) {
        free(head);
        json_decref(res);
        return sg_buf_steal(&b, &len);
    }
    free(head);
    json_decref(res);
    sg_buf_free(&b);
    return NULL;
}

#define GW_RUNTIME_VIOLATIONS_MAX 16
#define GW_RUNTIME_TARGET_MAX 256

static int runtime_rule_known(const char *rule)
{
    static const char *const rules[] = {
        "runtime.process", "runtime.network",     "runtime.process_or_network",
        "runtime.import",  "runtime.native_code", "runtime.unpickle",
        "runtime.file",    "runtime.reflection"};
    for (size_t i = 0; rule && i < sizeof(rules) / sizeof(rules[0]); i++)
        if (strcmp(rule, rules[i]) == 0)
            return 1;
    return 0;
}

json_t *gw_runtime_violations(json_t *exec)
{
    json_t *out = json_array(), *d;
    size_t i;
    json_array_foreach(json_object_get(exec, "denials"), i, d)
    {
        const char *rule = json_string_value(json_object_get(d, "rule"));
        const char *target = json_string_value(json_object_get(d, "target"));
        if (!out || i >= GW_RUNTIME_VIOLATIONS_MAX || !runtime_rule_known(rule))
            continue;
        json_t *v = json_pack("{s:s,s:s,s:s+,s:s,s:s}", "rule", rule, "severity", "error",
                              "message", "stopped at run time: ", target ? target : "", "phase",
                              "runtime", "target", target ? target : "");
        if (v)
            json_array_append_new(out, v);
    }
    return out;
}

void gw_respond_json(struct sg_http_response *resp, int status, json_t *o)
{
    json_t *res = json_object_get(o, "result");
    json_t *raw = json_object_get(res, "value_json");
    char *text = !o                    ? NULL
                 : json_is_string(raw) ? dump_with_raw_value(o, res, raw)
                                       : json_dumps(o, GW_JSON_FLAGS);
    json_decref(o);
    if (!text)
        return sg_http_error(resp, 500, "internal", "out of memory");
    free(resp->body);
    resp->body = text;
    resp->body_len = 0;
    resp->status = status;
}
