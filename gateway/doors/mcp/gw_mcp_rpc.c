#include "gw_mcp_rpc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int usable_id(json_t *id)
{
    if (json_is_integer(id))
        return 1;
    return json_is_string(id) && json_string_length(id) <= GW_RPC_ID_MAX;
}

static void invalid(struct gw_rpc_msg *m, const char *why)
{
    m->kind = GW_RPC_INVALID;
    m->method = NULL;
    m->params = NULL;
    m->error = why;
}

/* One message object, classified; never fails as a whole. */
static void classify(json_t *o, struct gw_rpc_msg *m)
{
    memset(m, 0, sizeof(*m));
    if (!json_is_object(o))
        return invalid(m, "a message must be a JSON object");
    json_t *id = json_object_get(o, "id");
    m->id = usable_id(id) ? id : NULL;
    if (id && !m->id)
        return invalid(m, "id: must be a string or an integer");
    const char *v = json_string_value(json_object_get(o, "jsonrpc"));
    if (!v || strcmp(v, "2.0") != 0)
        return invalid(m, "jsonrpc: must be \"2.0\"");
    json_t *method = json_object_get(o, "method");
    if (!method) {
        int has_result = json_object_get(o, "result") != NULL;
        int has_error = json_object_get(o, "error") != NULL;
        if (m->id && has_result != has_error) {
            m->kind = GW_RPC_RESPONSE;
            return;
        }
        return invalid(m, "method: missing");
    }
    if (!json_is_string(method) || json_string_length(method) == 0 ||
        json_string_length(method) > GW_RPC_METHOD_MAX)
        return invalid(m, "method: must be a non-empty string of at most 128 bytes");
    json_t *params = json_object_get(o, "params");
    if (params && !json_is_object(params))
        return invalid(m, "params: must be an object");
    m->method = json_string_value(method);
    m->params = params;
    m->kind = m->id ? GW_RPC_REQUEST : GW_RPC_NOTIFICATION;
}

static int fail(struct gw_rpc_error *err, int code, const char *msg)
{
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof(err->message), "%s", msg);
    }
    return -EINVAL;
}

int gw_rpc_parse(const char *body, size_t len, struct gw_rpc_batch *ret, struct gw_rpc_error *err)
{
    memset(ret, 0, sizeof(*ret));
    json_error_t je;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!root) {
        char msg[160];
        snprintf(msg, sizeof(msg), "parse error at line %d column %d: %.100s", je.line, je.column,
                 je.text);
        return fail(err, GW_RPC_PARSE_ERROR, msg);
    }
    if (json_is_object(root)) {
        classify(root, &ret->msgs[0]);
        ret->count = 1;
    } else if (json_is_array(root)) {
        size_t n = json_array_size(root);
        if (n == 0 || n > GW_RPC_BATCH_MAX) {
            json_decref(root);
            return fail(err, GW_RPC_INVALID_REQUEST,
                        n ? "batch: more than 32 messages" : "batch: empty");
        }
        for (size_t i = 0; i < n; i++)
            classify(json_array_get(root, i), &ret->msgs[i]);
        ret->count = n;
        ret->is_batch = 1;
    } else {
        json_decref(root);
        return fail(err, GW_RPC_INVALID_REQUEST, "body: expected a JSON-RPC message or batch");
    }
    ret->root = root;
    return 0;
}

void gw_rpc_batch_free(struct gw_rpc_batch *b)
{
    if (!b)
        return;
    json_decref(b->root);
    memset(b, 0, sizeof(*b));
}

json_t *gw_rpc_result(json_t *id, json_t *result)
{
    if (!result)
        return NULL;
    return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

json_t *gw_rpc_error_json(json_t *id, int code, const char *message)
{
    return json_pack("{s:s,s:O?,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code,
                     "message", message);
}
