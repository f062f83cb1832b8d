#include "gw_mcp_stools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "b64.h"
#include "gw_mcp_rpc.h"
#include "gw_sessions.h"
#include "sg_file_name.h"

enum stool { S_CREATE, S_EXEC, S_UPLOAD, S_DOWNLOAD, S_CLOSE, S_COUNT };

static const char *const tool_names[S_COUNT] = {"session_create", "session_exec", "session_upload",
                                                "session_download", "session_close"};

static int tool_index(const char *name)
{
    for (int i = 0; i < S_COUNT; i++)
        if (strcmp(name, tool_names[i]) == 0)
            return i;
    return -1;
}

bool gw_mcp_stools_has(const char *name)
{
    return tool_index(name) >= 0;
}

/* One tool entry; props and required are taken over. The hint is true except
 * openWorldHint: the sandbox reaches no outside world. */
static json_t *tool_entry(const char *name, const char *desc, json_t *props, json_t *required,
                          const char *hint)
{
    return json_pack("{s:s,s:s,s:{s:s,s:o,s:o,s:b},s:{s:b}}", "name", name, "description", desc,
                     "inputSchema", "type", "object", "properties", props, "required", required,
                     "additionalProperties", 0, "annotations", hint, hint[0] != 'o');
}

static json_t *string_prop(const char *desc)
{
    return json_pack("{s:s,s:s}", "type", "string", "description", desc);
}

json_t *gw_mcp_stools_list(const struct gw_mcp_caller *c, const struct sg_policy *def)
{
    char create[512], upload[512];
    snprintf(create, sizeof(create),
             "Open a Python session: a sandbox whose variables, functions, imports and files "
             "persist between session_exec calls, like a notebook. Every cell is checked "
             "against the policy (default '%s') together with the cells before it. Close it "
             "with session_close when done; it also ends after 10 minutes idle.",
             def->name);
    snprintf(upload, sizeof(upload),
             "Put a file into a session's working directory, where its code opens it by name. "
             "name: %s, not main.py, main.js or artifacts. content_b64: the bytes in base64, at "
             "most %llu bytes decoded. An existing file of that name is replaced.",
             SG_FILE_NAME_RULE, (unsigned long long)c->jobs->cfg->max_files_bytes);
    const char *sid = "the session_id session_create returned";
    const char *name = "the file's name in the session's working directory";
    json_t *tools = json_pack(
        "[o,o,o,o,o]",
        tool_entry("session_create", create,
                   json_pack("{s:{s:s,s:[s]},s:{s:s,s:o}}", "language", "type", "string", "enum",
                             "python", "policy", "type", "string", "enum",
                             gw_mcp_policy_enum(c, def)),
                   json_array(), "openWorldHint"),
        tool_entry("session_exec",
                   "Run Python code in an open session. The value of a final expression is the "
                   "result (as a notebook shows it); no main() is needed. Files the code writes "
                   "under artifacts/ come back. Names from earlier calls are still defined.",
                   json_pack("{s:o,s:{s:s,s:s},s:{s:s,s:i}}", "session_id", string_prop(sid),
                             "code", "type", "string", "description", "the code to run",
                             "timeout_ms", "type", "integer", "minimum", 1),
                   json_pack("[s,s]", "session_id", "code"), "openWorldHint"),
        tool_entry("session_upload", upload,
                   json_pack("{s:o,s:o,s:o}", "session_id", string_prop(sid), "name",
                             string_prop(name), "content_b64",
                             string_prop("the file's bytes, base64")),
                   json_pack("[s,s,s]", "session_id", "name", "content_b64"), "openWorldHint"),
        tool_entry(
            "session_download",
            "Get a file from a session's working directory, such as one its code wrote. "
            "PNG, JPEG and SVG files come back as images, others as a resource with the "
            "bytes in base64.",
            json_pack("{s:o,s:o}", "session_id", string_prop(sid), "name", string_prop(name)),
            json_pack("[s,s]", "session_id", "name"), "readOnlyHint"),
        tool_entry(
            "session_close",
            "Close a session: its sandbox is destroyed and its variables and files are gone.",
            json_pack("{s:o}", "session_id", string_prop(sid)), json_pack("[s]", "session_id"),
            "destructiveHint"));
    return tools;
}

/* ------------------------------------------------------------ the calls */

static bool session_id_ok(json_t *v)
{
    size_t n = json_string_length(v);
    return json_is_string(v) && n > 0 && n <= GW_SESSION_PUBLIC_ID_LEN &&
           strspn(json_string_value(v), "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static bool arg_ok(int t, const char *k, json_t *v)
{
    if (t == S_CREATE)
        return (!strcmp(k, "language") || !strcmp(k, "policy")) && json_is_string(v);
    if (!strcmp(k, "session_id"))
        return session_id_ok(v);
    if (!strcmp(k, "code"))
        return t == S_EXEC && json_is_string(v);
    if (!strcmp(k, "timeout_ms"))
        return t == S_EXEC && json_is_integer(v) && json_integer_value(v) > 0;
    if (!strcmp(k, "name"))
        return (t == S_UPLOAD || t == S_DOWNLOAD) && json_is_string(v);
    if (!strcmp(k, "content_b64"))
        return t == S_UPLOAD && json_is_string(v);
    return false;
}

/* The schema check: known keys of the right types, the required ones there. */
static int check_args(int t, json_t *args, char *msg)
{
    static const char *const need[S_COUNT] = {"", "session_id and code",
                                              "session_id, name and content_b64",
                                              "session_id and name", "session_id"};
    const char *k;
    json_t *v;
    json_object_foreach(args, k, v)
    {
        if (!arg_ok(t, k, v))
            return snprintf(msg, 256,
                            "arguments.%.64s: not an argument of %s, or of the wrong type", k,
                            tool_names[t]),
                   GW_RPC_INVALID_PARAMS;
    }
    bool named = t == S_UPLOAD || t == S_DOWNLOAD;
    if ((t != S_CREATE && !json_object_get(args, "session_id")) ||
        (t == S_EXEC && !json_object_get(args, "code")) ||
        (named && !json_object_get(args, "name")) ||
        (t == S_UPLOAD && !json_object_get(args, "content_b64")))
        return snprintf(msg, 256, "arguments: %s needs %s", tool_names[t], need[t]),
               GW_RPC_INVALID_PARAMS;
    return 0;
}

/* One /v1/sessions call for the caller, answered as that endpoint would. */
static void sessions_raw(const struct gw_mcp_caller *c, int t, const char *method, const char *url,
                         const char *body, size_t len, struct sg_http_response *resp)
{
    struct sg_http_request req = *c->req;
    req.method = method;
    req.url = url;
    req.body = body ? body : "";
    req.body_len = body ? len : 0;
    *resp = (struct sg_http_response){.status = 200};
    gw_sessions_handle_tool(c->code_sessions, &req, resp, tool_names[t]);
}

static size_t resp_len(const struct sg_http_response *resp)
{
    return resp->body_len ? resp->body_len : (resp->body ? strlen(resp->body) : 0);
}

/* The same with a JSON body (NULL: none) and answer (NULL if none). */
static json_t *sessions_call(const struct gw_mcp_caller *c, int t, const char *method,
                             const char *url, json_t *body, int *ret_status, char rid[17])
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct sg_http_response resp;
    sessions_raw(c, t, method, url, text, text ? strlen(text) : 0, &resp);
    free(text);
    size_t len = resp_len(&resp);
    json_t *o = resp.body && len ? json_loadb(resp.body, len, 0, NULL) : NULL;
    free(resp.body);
    snprintf(rid, 17, "%s", gw_mcp_request_id(&resp));
    *ret_status = resp.status;
    return o;
}

/* session_create, session_exec, session_close: JSON in, JSON out. */
static json_t *json_tool(const struct gw_mcp_caller *c, int t, json_t *args, const char *sid)
{
    char url[128], rid[17], text[512];
    int status = 0;
    json_t *body = t == S_CLOSE ? NULL : json_deep_copy(args), *o;
    if (t == S_CREATE) {
        if (body && !json_object_get(body, "language"))
            json_object_set_new(body, "language", json_string("python"));
        o = sessions_call(c, t, "POST", "/v1/sessions", body, &status, rid);
    } else {
        snprintf(url, sizeof(url), "/v1/sessions/%s%s", sid, t == S_EXEC ? "/exec" : "");
        json_object_del(body, "session_id");
        o = sessions_call(c, t, t == S_EXEC ? "POST" : "DELETE", url, body, &status, rid);
    }
    json_decref(body);
    json_t *ret;
    if (status >= 300)
        ret = gw_mcp_error_result(status, o, rid);
    else if (t == S_EXEC)
        ret = json_is_object(o) ? gw_mcp_run_result(o)
                                : gw_mcp_text_result("internal: unreadable answer", 1);
    else {
        const char *id = json_string_value(json_object_get(o, "session_id"));
        const char *pol = json_string_value(json_object_get(json_object_get(o, "policy"), "name"));
        if (t == S_CREATE)
            snprintf(text, sizeof(text),
                     "session_id: %s (python, policy '%s'); pass it to session_exec, "
                     "session_upload and session_download, and close it with session_close "
                     "when done [request %s]",
                     id ? id : "?", pol ? pol : "?", rid);
        else
            snprintf(text, sizeof(text), "session %s closed [request %s]", sid, rid);
        ret = gw_mcp_text_result(text, 0);
    }
    json_decref(o);
    return ret;
}

/* A tool error in the session API's words, with no call made. */
static json_t *refuse(const char *code, const char *message)
{
    json_t *o = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message);
    json_t *r = o ? gw_mcp_error_result(400, o, "-") : NULL;
    json_decref(o);
    return r;
}

static json_t *upload(const struct gw_mcp_caller *c, const char *url, const char *name, json_t *b64)
{
    unsigned char *bytes = NULL;
    size_t n = 0;
    struct sg_error err = {0};
    uint64_t cap = c->jobs->cfg->max_files_bytes;
    int rc = sg_b64_decode(json_string_value(b64), json_string_length(b64), cap, &bytes, &n, &err);
    if (rc == -E2BIG) {
        char m[160];
        snprintf(m, sizeof(m), "content_b64: the file exceeds the cap of %llu bytes",
                 (unsigned long long)cap);
        return refuse("file_too_large", m);
    }
    if (rc < 0)
        return refuse("bad_base64", err.msg);
    struct sg_http_response resp;
    sessions_raw(c, S_UPLOAD, "PUT", url, (const char *)bytes, n, &resp);
    free(bytes);
    size_t len = resp_len(&resp);
    json_t *o = resp.body && len ? json_loadb(resp.body, len, 0, NULL) : NULL;
    free(resp.body);
    const char *rid = gw_mcp_request_id(&resp);
    json_t *ret;
    if (resp.status >= 300) {
        ret = gw_mcp_error_result(resp.status, o, rid);
    } else {
        char text[256];
        snprintf(text, sizeof(text), "uploaded %s (%zu bytes) [request %s]", name, n, rid);
        ret = gw_mcp_text_result(text, 0);
    }
    json_decref(o);
    return ret;
}

/* The MIME type of a downloaded file by its extension: the image types shown
 * inline, anything else opaque bytes. */
static const char *mime_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return "application/octet-stream";
    if (!strcasecmp(dot, ".png"))
        return "image/png";
    if (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"))
        return "image/jpeg";
    if (!strcasecmp(dot, ".svg"))
        return "image/svg+xml";
    return "application/octet-stream";
}

/* A file's bytes as content: a line naming it, then the image or resource. */
static json_t *file_result(const char *sid, const char *name, const char *data, size_t n,
                           const char *rid)
{
    char *b64 = NULL, text[256], uri[256];
    size_t b64_len;
    if (sg_b64_encode((const unsigned char *)data, n, &b64, &b64_len) < 0)
        return NULL;
    const char *mime = mime_of(name);
    snprintf(text, sizeof(text), "%s: %zu bytes, %s [request %s]", name, n, mime, rid);
    snprintf(uri, sizeof(uri), "sandgate://sessions/%s/files/%s", sid, name);
    json_t *shown = gw_mcp_is_image(mime)
                        ? json_pack("{s:s,s:s,s:s}", "type", "image", "data", b64, "mimeType", mime)
                        : json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "resource", "resource", "uri",
                                    uri, "mimeType", mime, "blob", b64);
    free(b64);
    json_t *r = shown ? json_pack("{s:[{s:s,s:s},o],s:b}", "content", "type", "text", "text", text,
                                  shown, "isError", 0)
                      : NULL;
    return r;
}

static json_t *download(const struct gw_mcp_caller *c, const char *url, const char *sid,
                        const char *name)
{
    struct sg_http_response resp;
    sessions_raw(c, S_DOWNLOAD, "GET", url, NULL, 0, &resp);
    size_t len = resp_len(&resp);
    const char *rid = gw_mcp_request_id(&resp);
    json_t *ret;
    if (resp.status >= 300) {
        json_t *o = resp.body && len ? json_loadb(resp.body, len, 0, NULL) : NULL;
        ret = gw_mcp_error_result(resp.status, o, rid);
        json_decref(o);
    } else if (len > GW_MCP_DOWNLOAD_MAX) {
        char m[160];
        snprintf(m, sizeof(m), "%s: %zu bytes, over the %u bytes a download may return", name, len,
                 GW_MCP_DOWNLOAD_MAX);
        ret = refuse("file_too_large", m);
    } else {
        ret = file_result(sid, name, resp.body ? resp.body : "", len, rid);
    }
    free(resp.body);
    return ret;
}

int gw_mcp_stools_call(const struct gw_mcp_caller *c, const char *name, json_t *args, json_t **ret,
                       char msg[256])
{
    int t = tool_index(name);
    if (t < 0)
        return snprintf(msg, 256, "unknown tool '%.64s'", name), GW_RPC_INVALID_PARAMS;
    int r = check_args(t, args, msg);
    if (r < 0)
        return r;
    const char *sid = json_string_value(json_object_get(args, "session_id"));
    const char *file = json_string_value(json_object_get(args, "name"));
    if (t != S_UPLOAD && t != S_DOWNLOAD) {
        *ret = json_tool(c, t, args, sid);
    } else if (!sg_file_name_ok(file, json_string_length(json_object_get(args, "name"))) ||
               sg_file_name_reserved(file, strlen(file))) {
        /* checked here too: the name goes into the session API's URL as it is */
        *ret = refuse("bad_file_name",
                      "name: " SG_FILE_NAME_RULE ", not main.py, main.js or artifacts");
    } else {
        char url[GW_SESSION_PUBLIC_ID_LEN + SG_FILE_NAME_MAX + 64];
        snprintf(url, sizeof(url), "/v1/sessions/%s/files/%s", sid, file);
        *ret = t == S_UPLOAD ? upload(c, url, file, json_object_get(args, "content_b64"))
                             : download(c, url, sid, file);
    }
    return *ret ? 0 : (snprintf(msg, 256, "out of memory"), GW_RPC_INTERNAL_ERROR);
}
