/* gw_mcp_rpc.h - JSON-RPC 2.0 framing for the MCP endpoint.
 *
 * gw_rpc_parse() is a pure function of the request body (no I/O, no global
 * state) so a fuzz target can drive it: it splits a body into messages and
 * classifies each one as the MCP base protocol defines them (a request has a
 * string or integer id, never null; a notification has none; a response
 * answers a server request and has result or error). A body that is not JSON
 * is -32700; a body that is JSON but not a message or a non-empty batch is
 * -32600 for the whole body; a bad message inside a batch is marked invalid
 * on its own so the rest of the batch still gets answers.
 */
#ifndef SG_GW_MCP_RPC_H
#define SG_GW_MCP_RPC_H

#include <jansson.h>
#include <stddef.h>

#define GW_RPC_PARSE_ERROR (-32700)
#define GW_RPC_INVALID_REQUEST (-32600)
#define GW_RPC_METHOD_NOT_FOUND (-32601)
#define GW_RPC_INVALID_PARAMS (-32602)
#define GW_RPC_INTERNAL_ERROR (-32603)
/* Implementation-defined server error: the session is gone (the code the
 * reference SDKs use with HTTP 404). */
#define GW_RPC_SESSION_NOT_FOUND (-32001)

#define GW_RPC_BATCH_MAX 32   /* messages in one batch */
#define GW_RPC_METHOD_MAX 128 /* bytes of a method name */
#define GW_RPC_ID_MAX 256     /* bytes of a string id */

enum gw_rpc_kind { GW_RPC_REQUEST = 0, GW_RPC_NOTIFICATION, GW_RPC_RESPONSE, GW_RPC_INVALID };

struct gw_rpc_msg {
    enum gw_rpc_kind kind;
    json_t *id;         /* borrowed from the batch; NULL when absent or unusable */
    const char *method; /* borrowed; requests and notifications */
    json_t *params;     /* borrowed; NULL when absent (always an object otherwise) */
    const char *error;  /* GW_RPC_INVALID: static text of the -32600 answer */
};

struct gw_rpc_batch {
    json_t *root; /* owned: the parsed body */
    int is_batch; /* the body was an array */
    size_t count;
    struct gw_rpc_msg msgs[GW_RPC_BATCH_MAX];
};

struct gw_rpc_error {
    int code; /* GW_RPC_PARSE_ERROR or GW_RPC_INVALID_REQUEST */
    char message[160];
};

/* Parse body[0..len). 0: *ret is filled (release with gw_rpc_batch_free());
 * -EINVAL: the whole body is refused, *err says why and *ret holds nothing. */
int gw_rpc_parse(const char *body, size_t len, struct gw_rpc_batch *ret, struct gw_rpc_error *err);

/* Release what the batch holds; NULL is a no-op. */
void gw_rpc_batch_free(struct gw_rpc_batch *b);

/* {"jsonrpc":"2.0","id":id,"result":result}; takes over result, borrows id.
 * NULL on out of memory. */
json_t *gw_rpc_result(json_t *id, json_t *result);

/* {"jsonrpc":"2.0","id":id|null,"error":{"code","message"}}; borrows id. */
json_t *gw_rpc_error_json(json_t *id, int code, const char *message);

#endif
