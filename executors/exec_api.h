/* exec_api.h - the POST /v1/exec request and its response (PROTOCOL.md).
 *
 * The request body is untrusted: every size, depth and count is capped, file
 * names are checked, limits are clamped to the executor's maxima (and the
 * response lists which ones were). Pure functions; fuzzed in
 * tests/fuzz/fuzz_exec_request.c.
 */
#ifndef SG_EXEC_API_H
#define SG_EXEC_API_H

#include <jansson.h>
#include <stddef.h>

#include "exec_config.h"
#include "outcome.h"
#include "sg_error.h"

#define EXEC_JOB_ID_MAX 64
#define EXEC_CODE_MAX (4u * 1024u * 1024u)
#define EXEC_ARGS_MAX (1u * 1024u * 1024u) /* arguments, serialised */
#define EXEC_ARGS_DEPTH_MAX 32
#define EXEC_FILES_MAX 32
#define EXEC_FILES_BYTES_MAX (8u * 1024u * 1024u) /* decoded, all files */
/* imports: the modules the job imports, from the gateway's analysis; they
 * only choose a warm pool flavour (a wrong list costs speed, not safety) */
#define EXEC_IMPORTS_MAX 64
#define EXEC_IMPORT_NAME_MAX 128
/* "runtime" (the job's run-time policy, from the gateway): list caps. */
#define EXEC_RT_LIST_MAX 1024
#define EXEC_RT_ITEM_MAX 256

struct exec_limits {
    unsigned timeout_ms;
    unsigned memory_mb; /* the pool's: containers exist before the job */
    size_t max_output_bytes;
};

struct exec_request {
    char job_id[EXEC_JOB_ID_MAX + 1];
    const char *code; /* borrowed from root */
    size_t code_len;
    json_t *root;      /* owned: the parsed body */
    json_t *arguments; /* borrowed from root (an object) */
    json_t *files;     /* owned: {name: canonical base64} */
    json_t *runtime;   /* borrowed from root: the run-time policy, or NULL (none) */
    struct exec_limits limits;
    const char *clamped[3]; /* static names of the limits that were lowered */
    unsigned n_clamped;
    const char *imports[EXEC_IMPORTS_MAX]; /* borrowed from root */
    size_t n_imports;
    json_t *network_allow; /* owned: the job's allow-list, canonical; NULL: no network */
    int stream;            /* "stream": true: answer as Server-Sent Events (PROTOCOL.md) */
    int script;            /* "mode": "script": the code is the program, no main() call */
    const char *flavour;   /* borrowed from root: the warm pool flavour to try first, or NULL */
    const char *pool;      /* static: the flavour that served the job (NULL: none yet) */
    int pool_fallback;     /* 1: not the job's ideal flavour */
    size_t tree_bytes;     /* the parsed body's values and members (exec_json_tree_bytes) */
};

/* Parse and validate. On error (-EINVAL, -E2BIG) err says what is wrong in a
 * message fit for a 400 answer and *ret holds nothing to free. On success
 * free with exec_request_free(). */
int exec_request_parse(const char *body, size_t len, const struct exec_config *cfg,
                       struct exec_request *ret, struct sg_error *err);
void exec_request_free(struct exec_request *req);

/* Let the request's input go once the job is written: its code, arguments
 * and files leave the parsed body (req->code becomes "", the others NULL);
 * what answers the job (ids, limits, pool) stays. */
void exec_request_drop_input(struct exec_request *req);

/* The same rules for a session's requests (sessions.h): the start of a
 * session (runtime, limits, imports; no code) and a cell (code, limits).
 * "code" may be absent (then ""); the session's own keys are read from
 * ret->root by the caller. */
int exec_session_request_parse(const char *body, size_t len, const struct exec_config *cfg,
                               struct exec_request *ret, struct sg_error *err);

/* True when id matches [A-Za-z0-9._-]{1,64}. */
int exec_job_id_valid(const char *id);

/* An import name the executor accepts: 1..EXEC_IMPORT_NAME_MAX bytes of
 * [A-Za-z0-9_.@/:-] (Python dotted names, Node specifiers). */
int exec_import_name_valid(const char *name, size_t len);

/* What one job may hold in the executor's memory beyond its request body
 * (which the HTTP server reserved) and its result line (which the job
 * reserves as it grows: job.h, JOB_LINE_MEMORY_COPIES): the job's input
 * (exec_job_input_memory: the parsed body, whose strings the job object
 * shares, its values' structures, and a decoded file while the files are
 * checked), output in flight
 * to a streaming client (up to max_output), and a fixed part for the rest
 * (diagnostics, tables, the 64 KiB the job is written through). Reserved in
 * the memory budget before the job takes a sandbox; the input part is
 * released once the job is written to the sandbox (exec_request_drop_input),
 * before its result is read. The job line itself is never built: it is
 * encoded into the sandbox's stream (json_out.h). Pure. */
#define EXEC_JOB_MEMORY_FIXED (256u * 1024u)
#define EXEC_JOB_MEMORY_BODY_COPIES 2u
#define EXEC_JOB_MEMORY_OUTPUT_COPIES 1u
size_t exec_job_input_memory(size_t body_len, size_t tree_bytes);

/* What a parsed JSON value holds beyond its strings' bytes (which the body
 * copies count): EXEC_JSON_VALUE_BYTES for each value and
 * EXEC_JSON_MEMBER_BYTES more for each object member (jansson's structures
 * and the allocator's overhead, measured: 1 MiB of arguments "[0,0,...]"
 * held 22 MB). Pure; j NULL: 0. */
#define EXEC_JSON_VALUE_BYTES 48u
#define EXEC_JSON_MEMBER_BYTES 96u
size_t exec_json_tree_bytes(json_t *j);
size_t exec_job_memory(size_t body_len, size_t tree_bytes, size_t max_output);

/* The job for the runner with its nonce, as a JSON object (caller decrefs).
 * Its code, arguments, files and runtime are the request's own values,
 * shared, not copied (a code string not parsed from req->root is copied): the object lives no
 * longer than req. Sent with job_exchange_json(), which encodes it into the stream. */
json_t *exec_job_json(const struct exec_request *req, const char *nonce);

/* The same as one '\n'-terminated line (its bytes are what
 * job_exchange_json() writes). Caller frees with free(). */
char *exec_job_line(const struct exec_request *req, const char *nonce, size_t *ret_len);

/* The response body for a job that ran (or was answered by the executor
 * itself, e.g. pool_busy with req possibly NULL and job_id given). Caller
 * frees with free(). run_ms is the executor's measured run time. */
char *exec_response(const char *job_id, const struct exec_request *req,
                    const struct exec_outcome *o, double wait_ms, double run_ms);

/* The same as a JSON object (caller owns the reference). */
json_t *exec_response_json(const char *job_id, const struct exec_request *req,
                           const struct exec_outcome *o, double wait_ms, double run_ms);

#endif
