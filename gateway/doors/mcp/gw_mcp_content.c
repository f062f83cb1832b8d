#include "gw_mcp_content.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw_respond.h"
#include "policy.h"

#define TEXT_MAX (1024u * 1024u) /* bytes of one text content block */

json_t *gw_mcp_policy_enum(const struct gw_mcp_caller *c, const struct sg_policy *def)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < c->rs->policies->count; i++) {
        const struct sg_policy *p = c->rs->policies->items[i];
        if (!c->tenant || p == def || gw_tenant_may_use(c->tenant, p->name))
            json_array_append_new(a, json_string(p->name));
    }
    return a;
}

static json_t *text_content(const char *text)
{
    return json_pack("{s:s,s:s}", "type", "text", "text", text);
}

static json_t *tool_result(json_t *content, int is_error)
{
    return json_pack("{s:o,s:b}", "content", content, "isError", is_error);
}

static void violation_lines(struct sg_buf *b, json_t *violations)
{
    size_t i;
    json_t *v;
    json_array_foreach(violations, i, v)
    {
        const char *rule = json_string_value(json_object_get(v, "rule"));
        const char *m = json_string_value(json_object_get(v, "message"));
        json_t *line = json_object_get(v, "line");
        if (line)
            sg_buf_printf(b, "\n- line %lld, column %lld: %s [rule %s]",
                          (long long)json_integer_value(line),
                          (long long)json_integer_value(json_object_get(v, "column")), m ? m : "",
                          rule ? rule : "?");
        else
            sg_buf_printf(b, "\n- at run time: %s [rule %s]", m ? m : "", rule ? rule : "?");
    }
}

static json_t *buf_text(struct sg_buf *b)
{
    size_t len;
    char *t = sg_buf_steal(b, &len);
    json_t *c = text_content(t ? t : "(output too large to show)");
    free(t);
    return c;
}

/* check_code: the /v1/analyze answer as text. */
json_t *gw_mcp_analysis_result(json_t *o, const char *rid)
{
    const char *verdict = json_string_value(json_object_get(o, "verdict"));
    const char *pol = json_string_value(json_object_get(json_object_get(o, "policy"), "name"));
    int reject = !verdict || strcmp(verdict, "accept") != 0;
    struct sg_buf b;
    sg_buf_init(&b, TEXT_MAX);
    sg_buf_printf(&b, "%s under policy '%s' [job %s]", reject ? "reject" : "accept",
                  pol ? pol : "?", rid);
    if (reject)
        sg_buf_printf(&b, ": fix these and check again:");
    violation_lines(&b, json_object_get(o, "violations"));
    return tool_result(json_pack("[o]", buf_text(&b)), reject);
}

bool gw_mcp_is_image(const char *mime)
{
    return mime && (strcmp(mime, "image/png") == 0 || strcmp(mime, "image/jpeg") == 0 ||
                    strcmp(mime, "image/svg+xml") == 0);
}

/* Artifacts as content: images inline, anything else an embedded resource. */
static void add_artifacts(json_t *content, json_t *artifacts, const char *job_id)
{
    size_t i;
    json_t *a;
    json_array_foreach(artifacts, i, a)
    {
        const char *name = json_string_value(json_object_get(a, "name"));
        const char *mime = json_string_value(json_object_get(a, "mime_type"));
        const char *data = json_string_value(json_object_get(a, "content_b64"));
        if (!name || !data)
            continue;
        if (gw_mcp_is_image(mime)) {
            json_array_append_new(content, json_pack("{s:s,s:s,s:s}", "type", "image", "data", data,
                                                     "mimeType", mime));
            continue;
        }
        char uri[512];
        snprintf(uri, sizeof(uri), "sandgate://jobs/%s/artifacts/%s", job_id, name);
        json_array_append_new(
            content, json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "resource", "resource", "uri", uri,
                               "mimeType", mime ? mime : "application/octet-stream", "blob", data));
    }
}

static void add_text(json_t *content, const char *label, const char *text)
{
    if (!text || !*text)
        return;
    struct sg_buf b;
    sg_buf_init(&b, TEXT_MAX);
    sg_buf_printf(&b, "%s:\n%s", label, text);
    json_array_append_new(content, buf_text(&b));
}

static void outcome_line(struct sg_buf *b, json_t *o, const char *status)
{
    sg_buf_printf(b, "status: %s, exit code %lld, %.1f ms", status,
                  (long long)json_integer_value(json_object_get(o, "exit_code")),
                  json_number_value(json_object_get(o, "time_used_ms")));
    static const char *const why[] = {"detail", "resource_limit_type", "unauthorized_access_type",
                                      "runtime_error_type"};
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++) {
        const char *w = json_string_value(json_object_get(o, why[i]));
        if (w)
            sg_buf_printf(b, "; %s: %s", why[i], w);
    }
}

/* run_code: the /v1/run answer as content. */
json_t *gw_mcp_run_result(json_t *o)
{
    const char *status = json_string_value(json_object_get(o, "status"));
    const char *job_id = json_string_value(json_object_get(o, "job_id"));
    const char *pol = json_string_value(json_object_get(json_object_get(o, "policy"), "name"));
    json_t *violations = json_object_get(o, "violations");
    int failed = !status || strcmp(status, "success") != 0;
    json_t *content = json_array();
    struct sg_buf b;
    sg_buf_init(&b, TEXT_MAX);
    if (json_object_get(o, "exit_code") &&
        json_integer_value(json_object_get(o, "exit_code")) == GW_UNSAFE_EXIT_CODE)
        sg_buf_printf(&b, "rejected by policy '%s' before running; fix these and run again:",
                      pol ? pol : "?");
    else
        outcome_line(&b, o, status ? status : "unknown");
    sg_buf_printf(&b, " [job %s]", job_id ? job_id : "-");
    violation_lines(&b, violations);
    json_array_append_new(content, buf_text(&b));
    add_text(content, "stdout", json_string_value(json_object_get(o, "stdout")));
    if (json_integer_value(json_object_get(o, "exit_code")) != GW_UNSAFE_EXIT_CODE)
        add_text(content, "stderr", json_string_value(json_object_get(o, "stderr")));
    json_t *res = json_object_get(o, "result");
    if (json_is_true(json_object_get(res, "present"))) {
        char *t = json_dumps(json_object_get(res, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
        add_text(content, "result (JSON)", t ? t : "null");
        free(t);
    }
    add_artifacts(content, json_object_get(o, "artifacts"), job_id ? job_id : "-");
    return tool_result(content, failed);
}

/* An HTTP error answer of the pipeline (rate limit, bad base64, no executor,
 * ...) as a tool error the model can read. */
json_t *gw_mcp_error_result(int status, json_t *o, const char *rid)
{
    json_t *e = json_object_get(o, "error");
    const char *code = json_string_value(json_object_get(e, "code"));
    const char *m = json_string_value(json_object_get(e, "message"));
    char text[512];
    snprintf(text, sizeof(text), "%s (HTTP %d): %s [job %s]", code ? code : "error", status,
             m ? m : "no message", rid);
    return tool_result(json_pack("[o]", text_content(text)), 1);
}

/* The id gw_jobs gave the call (its audit line's request_id), so a tool
 * result can be matched with the audit log; "-" if absent. */
const char *gw_mcp_request_id(const struct sg_http_response *resp)
{
    for (int i = 0; i < resp->header_count; i++)
        if (strcmp(resp->header_names[i], "X-Request-Id") == 0)
            return resp->header_values[i];
    return "-";
}

json_t *gw_mcp_text_result(const char *text, int is_error)
{
    return tool_result(json_pack("[o]", text_content(text)), is_error);
}
