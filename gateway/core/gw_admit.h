/* gw_admit.h - admission: the one pipeline every front door goes through.
 *
 * A front door (RAGFlow's /run, the native /v1/run and /v1/analyze, the
 * session cells, the MCP tools, Dify's /v1/sandbox/run) only translates its
 * request into these steps and the decision into its own answer shape. The
 * steps, in order, each filling resp and returning < 0 when it refuses:
 *
 *   gw_admit_begin      request id, clock, the ruleset this request keeps
 *   gw_admit_caller     authentication (tokens or trusted network; the
 *                       header hook already refused what it could), and the
 *                       caller's caps (config maxima within the tenant's)
 *   gw_admit_rate       the tenant's token bucket: 429 rate_limited with
 *                       Retry-After (whole seconds)
 *   gw_admit_code       the code's language, length and sha256 (audit)
 *   gw_admit_policy     the requested policy if the tenant may use it
 *                       (403 policy_not_allowed, 400 unknown_policy), else
 *                       the tenant's default
 *   gw_admit_network    the job's egress list within the tenant's (403
 *                       network_not_allowed); the analysis then uses the
 *                       policy's networked variant
 *   gw_admit_analyze    verdict cache, else the analyzer; verdict and
 *                       per-rule metrics
 *   gw_admit_runtime    run-time stops the sandbox reported: rules for the
 *                       audit line and the per-rule metric
 *   gw_admit_finish     X-Request-Id, the audit line (the same fields for
 *                       every front door), the total-time histogram
 *   gw_admit_end        releases what the admission holds
 *
 * Nothing reaches the analyzer before the caller, the rate and the body were
 * admitted, and nothing reaches an executor unless the analysis accepted.
 */
#ifndef SG_GW_ADMIT_H
#define SG_GW_ADMIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyze.h"
#include "gw_audit.h"
#include "gw_config.h"
#include "gw_jobtab.h"
#include "gw_metrics.h"
#include "gw_ratelimit.h"
#include "gw_request.h"
#include "gw_router.h"
#include "gw_ruleset.h"
#include "gw_tenants.h"
#include "httpsrv.h"
#include "sha256.h"
#include "verdict_cache.h"

#define GW_ADMIT_ANONYMOUS "anonymous"
#define GW_ADMIT_SESSION_ID_MAX 64

/* What admission and the front doors use, all borrowed from the server. */
struct gw_services {
    const struct gw_config *cfg;
    struct gw_ruleset_slot *rules;
    struct gw_router *router;
    struct gw_audit *audit;
    struct gw_metrics *metrics;
    struct gw_ratelimit *ratelimit;
    struct sg_vcache *vcache;    /* NULL: no verdict cache */
    struct gw_jobtab *jobtab;    /* jobs in flight, for cancel */
    struct sg_membudget *budget; /* the daemon's memory budget (membudget.h); NULL: none */
};

/* One request's admission. The front door reads the fields; only the
 * functions below write them, except the run's fields it fills itself
 * (executor, exec_us, net_result, session_id). */
struct gw_adm {
    const struct gw_services *s;
    enum gw_endpoint ep;
    const char *tool;   /* the MCP tool, or NULL */
    const char *method; /* the HTTP method (audit) */
    char id[17];        /* request id = job id */
    const char *peer;
    uint64_t t0;
    struct gw_ruleset *rs; /* a reference, dropped by gw_admit_end */
    const struct gw_tenant *tenant;
    struct gw_caps caps; /* set by gw_admit_caller */
    /* the code (gw_admit_code) */
    bool has_code;
    enum sg_lang lang;
    size_t code_len;
    /* The code's first bytes, as much as the audit line may keep (owned:
     * the request's code may be freed before the audit line is written). */
    char *code_head;
    size_t code_head_len;
    char sha[SG_SHA256_HEX_LEN + 1];
    /* the decision */
    const struct sg_policy *policy; /* as chosen (its networked variant: gw_admit_job_policy) */
    json_t *net_allow;              /* the job's canonical allow-list, or NULL: offline */
    struct sg_analysis an;
    bool analyzed, cached;
    uint64_t analysis_us;
    json_t *rt_rules; /* run-time rules reported, or NULL */
    /* the run, filled by the front door */
    char executor[GW_URL_MAX];
    uint64_t exec_us;
    json_t *net_result; /* owned: the executor's {allowed, denied}, or NULL */
    json_t *sandbox;    /* owned: the executor's sandbox facts (runtime, runsc), or NULL */
    char session_id[GW_ADMIT_SESSION_ID_MAX + 1];
    const char *outcome; /* static, or outcome_buf */
    char outcome_buf[48];
};

/* Start an admission for ep (tool: the MCP tool or NULL; id: the caller's
 * job id or NULL for a new one). Takes a reference to the current ruleset. */
void gw_admit_begin(struct gw_adm *a, const struct gw_services *s, enum gw_endpoint ep,
                    const char *tool, const struct sg_http_request *req, const char *id);

/* Who asks (401 when unknown) and the caps their limits are held to. */
int gw_admit_caller(struct gw_adm *a, const struct sg_http_request *req,
                    struct sg_http_response *resp);

/* Who asks by an API key (Dify's X-Api-Key): with a tokens file the tenant
 * whose token key is, without one anonymous when key equals anonymous_key
 * (never when that is empty). Else 401 with an empty body. */
int gw_admit_caller_key(struct gw_adm *a, const char *key, const char *anonymous_key,
                        struct sg_http_response *resp);

/* The tenant's (or anonymous) token bucket: 429 rate_limited + Retry-After. */
int gw_admit_rate(struct gw_adm *a, struct sg_http_response *resp);

/* The tenant's name, or "anonymous". */
const char *gw_admit_tenant_name(const struct gw_adm *a);

/* Record the submitted code (language, length, sha256). */
void gw_admit_code(struct gw_adm *a, enum sg_lang lang, const char *code, size_t len);

/* Choose the policy: want ("" or NULL: the tenant's default). */
int gw_admit_policy(struct gw_adm *a, const char *want, struct sg_http_response *resp);

/* The job's network: want (the request's "allow" array, may be NULL) within
 * the tenant's lists; with tenant_default and no want, the tenant's default
 * list (RAGFlow's and Dify's clients cannot name one). No want and no
 * tenant_default: offline. */
int gw_admit_network(struct gw_adm *a, json_t *want, bool tenant_default,
                     struct sg_http_response *resp);

/* The policy the analysis and the sandbox use: the networked variant when
 * the job has network. */
const struct sg_policy *gw_admit_job_policy(const struct gw_adm *a);

/* Analyse text[0..len) (the code, or for a session cell the earlier cells
 * and the cell) under the job's policy, through the verdict cache. An
 * accepted text that imports a module no image or package set of the
 * language's executors installs is then rejected (rule
 * import.not-installed) rather than failing at run time. 0 with a->an
 * filled (accepted or not), < 0 with 500 internal in resp. */
int gw_admit_analyze(struct gw_adm *a, const char *text, size_t len, struct sg_http_response *resp);

/* gw_admit_analyze for a text whose size the caller bounds itself (a
 * session's earlier cells with the new one: the session's history limit):
 * the policy's max_source_bytes is raised to len when below it, max_nodes
 * in the same proportion and to at least GW_ADMIT_LONG_NODES_PER_BYTE per
 * byte (max_depth stays), and the
 * verdict is cached apart from any job's (a job of the same text is still
 * over the limit). The caller holds each part to gw_admit_source_limit. */
#define GW_ADMIT_LONG_NODES_PER_BYTE 2u
int gw_admit_analyze_long(struct gw_adm *a, const char *text, size_t len,
                          struct sg_http_response *resp);

/* The chosen policy's max_source_bytes for the request's language. */
size_t gw_admit_source_limit(const struct gw_adm *a);

/* Run-time violations (gw_runtime_violations) reported by the sandbox. */
void gw_admit_runtime(struct gw_adm *a, json_t *violations);

/* Set the audit outcome to a copy of word. */
void gw_admit_outcome(struct gw_adm *a, const char *word);

/* {"name", "sha256"} of the chosen policy; caller owns. */
json_t *gw_admit_policy_json(const struct gw_adm *a);

/* An error answer's code as the audit outcome (unless one is set): before a
 * front door turns the answer into its own shape. */
void gw_admit_settle(struct gw_adm *a, const struct sg_http_response *resp);

/* The request's end: outcome for an error answer, X-Request-Id, the audit
 * line, a debug log line, the total-time histogram. */
void gw_admit_finish(struct gw_adm *a, struct sg_http_response *resp);

/* Release the analysis, lists and ruleset reference. */
void gw_admit_end(struct gw_adm *a);

/* Milliseconds of a microsecond count, for answers and audit lines. */
double gw_admit_ms(uint64_t us);

#endif
