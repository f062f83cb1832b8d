/* gw_dify.h - the Dify front door: dify-sandbox's API on its own listener
 * (README "Dify integration", docs/api.md).
 *
 * Off unless dify_port is set. Routes, exactly as dify-sandbox answers them:
 *   GET  /health                                  200 "ok" (no key)
 *   POST /v1/sandbox/run                          {language: "python3"|"nodejs",
 *                                                 code, preload?, enable_network?}
 *   GET  /v1/sandbox/dependencies?language=python3   the image's packages
 *   GET  /v1/sandbox/dependencies/refresh?language=python3
 * The X-Api-Key header is a tenant's token (tokens file) or, without a tokens
 * file, dify_api_key; wrong or missing: 401 with an empty body. Each run
 * goes through admission (gw_admit.h) and the job pipeline (gw_jobs_door):
 * rate limit, caps, the policy (dify_policy when the tenant may use it, else
 * its default), network (enable_network: the tenant's default list, never a
 * refusal), analysis of the code Dify sends (its driver included, preload
 * first), audit line (endpoint "dify") and metrics. The code runs in script
 * mode: the program itself, no main() call, stdout byte-exact.
 *
 * Answers: every job outcome is 200 {"code": 0, "message": "success",
 * "data": {"stdout", "stderr", "error", "exit_code"}}, error empty unless
 * the program failed ("process exited with code N" then the details, as
 * dify-sandbox builds it; a timeout adds "error: timeout"; a policy
 * rejection names rule, line and column); a malformed body 200 {"code":
 * -400}; an unknown language 400 {"code": -400, "message": "unsupported
 * language"}; more than dify_max_requests at once 503 {"code": -503,
 * "message": "Too many requests"}; over the tenant's rate 429 {"code": -429}
 * with Retry-After; other refusals 200 {"code": -400 | -500, "message"}.
 */
#ifndef SG_GW_DIFY_H
#define SG_GW_DIFY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "gw_admit.h"
#include "httpsrv.h"

#define GW_DIFY_BODY_MAX (8u << 20)

/* A parsed POST /v1/sandbox/run body. */
struct gw_dify_run {
    enum sg_lang lang;
    char *code; /* owned: the preload, "\n", the code (or the code alone), NUL-terminated */
    size_t code_len;
    uint32_t preload_lines; /* lines before the code (0: no preload) */
    bool enable_network;
};

/* Why a body was refused: HTTP status and dify-sandbox's code and message;
 * sg_code set for a refusal admission audits under its own code (413
 * code_too_large). */
struct gw_dify_error {
    int http;
    int code;
    const char *sg_code;
    char message[256];
};

/* Parse a run body (pure; fuzzed): 0 with *ret (free ret->code), or
 * -EINVAL / -ENOMEM with *err. The code with its preload is at most
 * max_code bytes. */
int gw_dify_parse(const char *body, size_t len, size_t max_code, struct gw_dify_run *ret,
                  struct gw_dify_error *err);

struct gw_dify {
    const struct gw_services *s; /* borrowed from the server */
    atomic_uint running;         /* runs in flight, for dify_max_requests */
    struct sg_httpsrv *http;
};

/* Start the listener on cfg->listen:cfg->dify_port (the server's services
 * must outlive it). */
int gw_dify_start(struct gw_dify *d, const struct gw_services *s, struct sg_error *err);

/* The port bound (tests start it on port 0: see gw_dify_start). */
uint16_t gw_dify_port(const struct gw_dify *d);

/* Stop accepting (drain), then stop. NULL http is a no-op. */
void gw_dify_quiesce(struct gw_dify *d);
void gw_dify_stop(struct gw_dify *d);

/* The handler (exposed for tests). */
void gw_dify_handle(void *ctx, const struct sg_http_request *req, struct sg_http_response *resp);

#endif
