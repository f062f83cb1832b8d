/* Fuzz target: the MCP endpoint's JSON-RPC framing (gw_rpc_parse), the pure
 * function every POST /mcp body goes through before any method runs.
 *
 * Properties besides "no crash, leak or sanitizer report": a refused body is
 * -32700 or -32600 and leaves nothing allocated; an accepted one has 1 to
 * GW_RPC_BATCH_MAX messages, requests and notifications have a method of
 * bounded length and object params, requests and responses have a string or
 * integer id, invalid messages say why; and every answer built from it
 * serialises. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_mcp_rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msg(const struct gw_rpc_msg *m)
{
    switch (m->kind) {
    case GW_RPC_REQUEST:
    case GW_RPC_NOTIFICATION:
        if (!m->method || !*m->method || strlen(m->method) > GW_RPC_METHOD_MAX)
            abort();
        if (m->params && !json_is_object(m->params))
            abort();
        if ((m->kind == GW_RPC_REQUEST) != (m->id != NULL))
            abort();
        break;
    case GW_RPC_RESPONSE:
        if (!m->id || m->method)
            abort();
        break;
    case GW_RPC_INVALID:
        if (!m->error || m->method)
            abort();
        break;
    default:
        abort();
    }
    if (m->id && !json_is_integer(m->id) && !json_is_string(m->id))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_rpc_batch b;
    struct gw_rpc_error e;
    if (gw_rpc_parse((const char *)data, size, &b, &e) < 0) {
        if ((e.code != GW_RPC_PARSE_ERROR && e.code != GW_RPC_INVALID_REQUEST) || b.root || b.count)
            abort();
        json_t *err = gw_rpc_error_json(NULL, e.code, e.message);
        char *s = err ? json_dumps(err, JSON_COMPACT) : NULL;
        if (!s)
            abort();
        free(s);
        json_decref(err);
        return 0;
    }
    if (b.count < 1 || b.count > GW_RPC_BATCH_MAX || !b.root)
        abort();
    for (size_t i = 0; i < b.count; i++) {
        check_msg(&b.msgs[i]);
        json_t *ans = b.msgs[i].kind == GW_RPC_REQUEST
                          ? gw_rpc_result(b.msgs[i].id, json_object())
                          : gw_rpc_error_json(b.msgs[i].id, GW_RPC_INVALID_REQUEST, "x");
        char *s = ans ? json_dumps(ans, JSON_COMPACT) : NULL;
        if (!s)
            abort();
        free(s);
        json_decref(ans);
    }
    gw_rpc_batch_free(&b);
    return 0;
}
