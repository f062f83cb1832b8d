/* exec_server.h - the executor's HTTP handlers: POST /v1/exec, GET /healthz,
 * GET /metrics, GET /v1/runtime (PROTOCOL.md). */
#ifndef SG_EXEC_SERVER_H
#define SG_EXEC_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "exec_config.h"
#include "docker.h"
#include "exec_jobs.h"
#include "httpsrv.h"
#include "metrics.h"
#include "pools.h"
#include "runsc_info.h"
#include "sessions.h"
#include "sg_token.h"

struct exec_server {
    const struct exec_config *cfg;  /* borrowed */
    struct pool_set *pools;         /* borrowed: one warm pool per flavour */
    struct sessions *sessions;      /* borrowed: the session table */
    struct pool *net_pool;          /* borrowed: networked sandboxes; NULL: none */
    struct docker_client *dc;       /* borrowed */
    struct metrics *metrics;        /* borrowed */
    char token[SG_TOKEN_MAX];       /* empty: no token required */
    const char *runtime_json;       /* borrowed; GET /v1/runtime, NULL = unknown */
    const struct runsc_info *runsc; /* borrowed: the gVisor read at start; NULL = unknown */
    struct exec_jobs *jobs;         /* borrowed: running jobs, for cancel */
    struct sg_membudget *budget;    /* borrowed: the daemon's memory budget; NULL: none */
    atomic_int in_flight;           /* /v1/exec handlers running */
    atomic_bool draining;           /* SIGTERM: new jobs get 503 */
};

/* The sg_httpsrv handler; ctx is a struct exec_server. */
void exec_server_handle(void *ctx, const struct sg_http_request *req,
                        struct sg_http_response *resp);

/* The sg_httpsrv get_on_worker hook: GETs of /v1/sessions talk to a
 * sandbox's runner, so a worker answers them, never an event thread. */
bool exec_server_get_on_worker(void *ctx, const struct sg_http_request *req);
/* The sg_httpsrv head hook: POST /v1/exec/{job_id}/cancel is answered here,
 * on the event thread, so that a cancel gets through however many jobs hold
 * the workers. */
enum sg_http_head exec_server_head(void *ctx, const struct sg_http_request *req,
                                   struct sg_http_response *resp);

/* Constant-time check of an Authorization header against "Bearer <token>". */
bool exec_server_token_ok(const char *header, const char *token);

#endif
