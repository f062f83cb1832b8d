/* gw_tenants.h - API tokens and the tenants they identify.
 *
 * The tokens file (JSON) maps tenants to their tokens and settings:
 *
 *   {"tenants": {"ragflow": {
 *       "tokens": ["<at least 16 printable characters>"],
 *       "token_sha256": ["<hex digest of a token>"],
 *       "policies": ["default", "strict"],      allowed in a request's "policy"
 *       "default_policy": "default",
 *       "rate_limit": {"per_second": 20, "burst": 40},
 *       "max_limits": {"timeout_ms": 60000, "memory_mb": 512},
 *       "networks": ["172.28.0.0/16"],       trusted sources, see gw_netauth.h
 *       "network": {"allow": [...], "default": [...]},   egress, see gw_egress.h
 *       "admin": false,               true: reads every tenant's audit (/v1/audit)
 *       "audit_code": "rejected"}}}   code kept in the audit: none | rejected | all
 *
 * Only digests are kept in memory, and a lookup hashes the presented token
 * and compares it with every stored digest in constant time (no early exit),
 * so neither the comparison nor the table order leaks which bytes matched.
 * A loaded set is immutable and may be shared by threads.
 */
#ifndef SG_GW_TENANTS_H
#define SG_GW_TENANTS_H

#include <stddef.h>
#include <stdint.h>

#include "gw_egress.h"
#include "gw_netauth.h"
#include "httpsrv.h"
#include "sg_error.h"

#define GW_TENANTS_MAX 1024
#define GW_TOKENS_PER_TENANT_MAX 16
#define GW_TOKEN_MIN 16
#define GW_TOKEN_MAX 256
#define GW_TENANT_NAME_MAX 64
#define GW_TENANT_SESSIONS_MAX 100000
#define GW_TENANT_POLICIES_MAX 32
#define GW_TOKENS_FILE_MAX (1024 * 1024)

/* What code a tenant's audit lines keep for the console (capped in size,
 * gw_audit_index.h): the default keeps the code of rejected submissions. */
enum gw_audit_code { GW_AUDIT_CODE_REJECTED = 0, GW_AUDIT_CODE_NONE, GW_AUDIT_CODE_ALL };

struct gw_tenant {
    char *name;                   /* owned */
    unsigned char (*digests)[32]; /* owned, digest_count entries */
    size_t digest_count;
    char **policies; /* owned; allowed request policies (may be empty) */
    size_t policy_count;
    char *default_policy; /* owned; NULL = the configured default */
    uint64_t rate;        /* requests/s, 0 = unlimited */
    uint64_t burst;
    uint64_t max_timeout_ms; /* 0 = the configured maximum */
    uint64_t max_memory_mb;
    int64_t max_sessions;            /* open sessions at once; -1 = the configured max_sessions */
    size_t network_count;            /* trusted source networks (in gw_tenants.nets) */
    struct gw_tenant_network egress; /* hosts its jobs may reach (gw_egress.h) */
    int admin;                       /* "admin": true reads every tenant's audit */
    enum gw_audit_code audit_code;   /* "audit_code": "none" | "rejected" | "all" */
};

struct gw_tenants {
    struct gw_tenant *items; /* owned */
    size_t count;
    struct gw_netauth nets; /* owners are indexes into items */
};

/* Parse and validate a tokens document. Caller frees with gw_tenants_free(). */
int gw_tenants_load_buf(const char *buf, size_t len, const char *origin, struct gw_tenants **ret,
                        struct sg_error *err);

int gw_tenants_load_file(const char *path, struct gw_tenants **ret, struct sg_error *err);

void gw_tenants_free(struct gw_tenants *t);

/* The tenant owning token[0..len), or NULL. Borrowed while t lives. */
const struct gw_tenant *gw_tenants_lookup(const struct gw_tenants *t, const char *token,
                                          size_t len);

/* The tenant whose trusted network holds the textual peer address, or NULL;
 * ret_net (optional) receives the network. For requests without a token
 * only. Borrowed while t lives. */
const struct gw_tenant *gw_tenants_lookup_peer(const struct gw_tenants *t, const char *peer,
                                               const struct sg_cidr **ret_net);

/* 1 when the tenant may select policy by name in a request. */
int gw_tenant_may_use(const struct gw_tenant *tenant, const char *policy);

/* The presented token: "Authorization: Bearer X" wins over "X-Sandbox-Token: X".
 * Returns a pointer into the header value (borrowed) and its length, or NULL
 * when neither header carries one. */
const char *gw_auth_token(const char *authorization, const char *x_sandbox_token, size_t *ret_len);

/* Authenticate a request on its headers alone (the body is not needed, so
 * this runs before it is read). Returns 0 with *ret_tenant (NULL when
 * tenants is NULL: auth is off) or -EACCES after filling resp with 401. */
int gw_tenants_authenticate(const struct gw_tenants *tenants, const struct sg_http_request *req,
                            struct sg_http_response *resp, const struct gw_tenant **ret_tenant);

#endif
