/* gw_request.h - parsing and validation of the public request bodies.
 *
 * Everything a client sends is checked here, before any analysis or
 * forwarding: JSON well-formedness (duplicate keys rejected), field types,
 * base64, language, the `arguments` object (depth and size caps), optional
 * input `files` (names and a total decoded size cap), `limits`, and the code
 * size cap. A failure fills a gw_req_error with the HTTP status, a stable
 * error code and a message naming the field; such a request never reaches
 * the analyzer or an executor.
 *
 * /run keeps RAGFlow's leniency (unknown keys ignored, language defaults to
 * python, "arguments": null means {}); the native endpoints reject unknown
 * keys so typos do not pass silently.
 */
#ifndef SG_GW_REQUEST_H
#define SG_GW_REQUEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze.h"

/* GW_REQ_CELL: a session cell's body ({"code" | "code_b64", "timeout_ms"?,
 * "stream"?}; the language is the session's, so ret->lang is not set). */
enum gw_req_kind {
    GW_REQ_RAGFLOW_RUN = 0,
    GW_REQ_RUN = 1,
    GW_REQ_ANALYZE = 2,
    GW_REQ_CELL = 3,
    GW_REQ_KIND_COUNT
};

struct gw_caps {
    uint64_t max_code_bytes;
    uint64_t max_arguments_bytes;
    uint64_t max_arguments_depth;
    uint64_t max_files;
    uint64_t max_files_bytes;
    uint64_t max_timeout_ms;
    uint64_t max_memory_mb;
};

struct gw_request {
    enum sg_lang lang;
    char *code; /* owned, decoded source, NUL-terminated (code may contain NUL) */
    size_t code_len;
    json_t *arguments;   /* owned reference; {} when absent */
    json_t *files;       /* owned reference to the validated object, or NULL */
    char policy[65];     /* requested policy name, "" when none */
    json_t *network;     /* owned: the job's "network": {"allow": [...]} (shape checked), or NULL */
    uint64_t timeout_ms; /* requested, 0 = not set */
    uint64_t memory_mb;
    int stream;       /* "stream": true (POST /v1/run): answer as Server-Sent Events */
    int script;       /* run the code as the program itself, no main() call (Dify) */
    char flavour[32]; /* /run's base_image when it is a flavour name ([A-Za-z0-9_-]), else "" */
};

struct gw_req_error {
    int status;       /* 400 or 413 */
    const char *code; /* static: bad_json, bad_type, bad_base64, unknown_language, ... */
    char message[256];
};

/* Parse body[0..len) for kind under caps. On success fills *ret (release with
 * gw_request_free()) and returns 0; on failure returns -EINVAL and fills err. */
int gw_request_parse(enum gw_req_kind kind, const char *body, size_t len,
                     const struct gw_caps *caps, struct gw_request *ret, struct gw_req_error *err);

/* The "language" value v (a string naming a language or an alias, any case)
 * into *ret; -EINVAL with 400 bad_type / unknown_language in err. */
int gw_request_language(json_t *v, enum sg_lang *ret, struct gw_req_error *err);

/* Release what the request holds; NULL is a no-op. */
void gw_request_free(struct gw_request *req);

#endif
