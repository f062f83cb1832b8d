#include "gw_tenants.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "readfile.h"

static int name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static int token_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < GW_TOKEN_MIN || n > GW_TOKEN_MAX)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

static int hex_digest(const char *s, unsigned char out[32])
{
    if (strlen(s) != 64)
        return -EINVAL;
    for (int i = 0; i < 32; i++) {
        unsigned v = 0;
        for (int j = 0; j < 2; j++) {
            char c = s[2 * i + j];
            int d = (c >= '0' && c <= '9')   ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                             : -1;
            if (d < 0)
                return -EINVAL;
            v = v * 16 + (unsigned)d;
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

/* Parse tokens (plain) or token_sha256 (hex) into the tenant's digest list. */
static int load_digests(struct gw_tenant *t, json_t *arr, int hashed, const char *path,
                        struct sg_error *err)
{
    const char *key = hashed ? "token_sha256" : "tokens";
    if (!json_is_array(arr))
        return sg_error_set(err, -EINVAL, "%s: %s: expected an array", path, key);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (t->digest_count >= GW_TOKENS_PER_TENANT_MAX)
            return sg_error_set(err, -E2BIG, "%s: more than %d tokens", path,
                                GW_TOKENS_PER_TENANT_MAX);
        const char *s = json_string_value(v);
        if (!s)
            return sg_error_set(err, -EINVAL, "%s: %s[%zu]: expected a string", path, key, i);
        unsigned char *d = t->digests[t->digest_count];
        if (hashed ? hex_digest(s, d) < 0 : !token_ok(s))
            return sg_error_set(err, -EINVAL,
                                hashed ? "%s: %s[%zu]: expected 64 hex characters"
                                       : "%s: %s[%zu]: a token has %d to %d printable "
                                         "characters, no spaces",
                                path, key, i, GW_TOKEN_MIN, GW_TOKEN_MAX);
        if (!hashed)
            SHA256((const unsigned char *)s, strlen(s), d);
        t->digest_count++;
    }
    return 0;
}

static int load_u64_pair(json_t *obj, const char *k1, uint64_t *v1, const char *k2, uint64_t *v2,
                         const char *path, struct sg_error *err)
{
    if (!json_is_object(obj))
        return sg_error_set(err, -EINVAL, "%s: expected an object", path);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        uint64_t *dst = strcmp(k, k1) == 0 ? v1 : strcmp(k, k2) == 0 ? v2 : NULL;
        if (!dst)
            return sg_error_set(err, -EINVAL, "%s.%.64s: unknown key", path, k);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000000)
            return sg_error_set(err, -EINVAL, "%s.%s: expected an integer in [0, 100000000]", path,
                                k);
        *dst = (uint64_t)json_integer_value(v);
    }
    return 0;
}

static int load_policies(struct gw_tenant *t, json_t *arr, const char *path, struct sg_error *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > GW_TENANT_POLICIES_MAX)
        return sg_error_set(err, -EINVAL, "%s.policies: expected an array of at most %d names",
                            path, GW_TENANT_POLICIES_MAX);
    t->policies = calloc(json_array_size(arr) + 1, sizeof(char *));
    if (!t->policies)
        return sg_error_set(err, -ENOMEM, "out of memory");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || !name_ok(s, 64))
            return sg_error_set(err, -EINVAL, "%s.policies[%zu]: expected a policy name", path, i);
        if (!(t->policies[t->policy_count++] = strdup(s)))
            return sg_error_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* "admin" and "audit_code": what the tenant sees of the audit and keeps in it. */
static int load_audit_field(struct gw_tenant *t, const char *k, json_t *v, const char *sub,
                            struct sg_error *err)
{
    if (strcmp(k, "admin") == 0) {
        if (!json_is_boolean(v))
            return sg_error_set(err, -EINVAL, "%s: expected true or false", sub);
        t->admin = json_is_true(v);
        return 0;
    }
    static const char *const names[] = {"rejected", "none", "all"}; /* enum gw_audit_code */
    const char *s = json_string_value(v);
    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i]) == 0) {
            t->audit_code = (enum gw_audit_code)i;
            return 0;
        }
    return sg_error_set(err, -EINVAL, "%s: expected \"none\", \"rejected\" or \"all\"", sub);
}

static int load_field(struct gw_tenant *t, const char *k, json_t *v, const char *path,
                      struct sg_error *err)
{
    char sub[512];
    if (strcmp(k, "tokens") == 0 || strcmp(k, "token_sha256") == 0) {
        snprintf(sub, sizeof(sub), "%.300s.%.64s", path, k);
        return load_digests(t, v, k[5] == '_', sub, err);
    }
    if (strcmp(k, "policies") == 0)
        return load_policies(t, v, path, err);
    if (strcmp(k, "network") == 0) {
        snprintf(sub, sizeof(sub), "%.300s.network", path);
        return gw_egress_tenant_load(v, sub, &t->egress, err);
    }
    if (strcmp(k, "default_policy") == 0) {
        if (!json_is_string(v) || !name_ok(json_string_value(v), 64))
            return sg_error_set(err, -EINVAL, "%s.default_policy: expected a policy name", path);
        t->default_policy = strdup(json_string_value(v));
        return t->default_policy ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
    }
    snprintf(sub, sizeof(sub), "%.300s.%.64s", path, k);
    if (strcmp(k, "rate_limit") == 0)
        return load_u64_pair(v, "per_second", &t->rate, "burst", &t->burst, sub, err);
    if (strcmp(k, "max_sessions") == 0) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > GW_TENANT_SESSIONS_MAX)
            return sg_error_set(err, -EINVAL, "%s: expected an integer in [0, %d]", sub,
                                GW_TENANT_SESSIONS_MAX);
        t->max_sessions = json_integer_value(v);
        return 0;
    }
    if (strcmp(k, "admin") == 0 || strcmp(k, "audit_code") == 0)
        return load_audit_field(t, k, v, sub, err);
    if (strcmp(k, "max_limits") == 0)
        return load_u64_pair(v, "timeout_ms", &t->max_timeout_ms, "memory_mb", &t->max_memory_mb,
                             sub, err);
    return sg_error_set(err, -EINVAL, "%s.%.64s: unknown key", path, k);
}

static int load_tenant(struct gw_tenants *ts, const char *name, json_t *obj, const char *origin,
                       struct sg_error *err)
{
    struct gw_tenant *t = &ts->items[ts->count - 1];
    char path[GW_TENANT_NAME_MAX + 256];
    snprintf(path, sizeof(path), "%.128s: tenants.%.64s", origin, name);
    if (!name_ok(name, GW_TENANT_NAME_MAX))
        return sg_error_set(err, -EINVAL, "%s: a tenant name is 1-%d of [A-Za-z0-9._-]", path,
                            GW_TENANT_NAME_MAX);
    if (!json_is_object(obj))
        return sg_error_set(err, -EINVAL, "%s: expected an object", path);
    t->max_sessions = -1;
    if (!(t->name = strdup(name)) ||
        !(t->digests = calloc(GW_TOKENS_PER_TENANT_MAX, sizeof(*t->digests))))
        return sg_error_set(err, -ENOMEM, "out of memory");
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        char sub[sizeof(path) + 16];
        snprintf(sub, sizeof(sub), "%s.networks", path);
        size_t before = ts->nets.count;
        int r = strcmp(k, "networks") == 0
                    ? gw_netauth_add_json(&ts->nets, ts->count - 1, v, sub, err)
                    : load_field(t, k, v, path, err);
        if (r < 0)
            return r;
        t->network_count += ts->nets.count - before;
    }
    if (t->digest_count == 0 && t->network_count == 0)
        return sg_error_set(err, -EINVAL, "%s: no tokens and no networks", path);
    if (t->rate && !t->burst)
        t->burst = t->rate;
    if (t->default_policy && t->policy_count && !gw_tenant_may_use(t, t->default_policy))
        return sg_error_set(err, -EINVAL, "%s: default_policy '%s' is not in policies", path,
                            t->default_policy);
    return 0;
}

/* Two tenants sharing a token would make the lookup ambiguous. */
static int check_unique(const struct gw_tenants *ts, const char *origin, struct sg_error *err)
{
    for (size_t a = 0; a < ts->count; a++)
        for (size_t i = 0; i < ts->items[a].digest_count; i++)
            for (size_t b = a; b < ts->count; b++)
                for (size_t j = (b == a ? i + 1 : 0); j < ts->items[b].digest_count; j++)
                    if (!memcmp(ts->items[a].digests[i], ts->items[b].digests[j], 32))
                        return sg_error_set(err, -EINVAL, "%s: tenants %s and %s share a token",
                                            origin, ts->items[a].name, ts->items[b].name);
    return 0;
}

static int load_root(struct gw_tenants *ts, json_t *root, const char *origin, struct sg_error *err)
{
    json_t *tenants = json_object_get(root, "tenants");
    if (!json_is_object(root) || json_object_size(root) != 1 || !json_is_object(tenants))
        return sg_error_set(err, -EINVAL, "%s: expected {\"tenants\": {name: {...}}}", origin);
    if (json_object_size(tenants) > GW_TENANTS_MAX)
        return sg_error_set(err, -E2BIG, "%s: more than %d tenants", origin, GW_TENANTS_MAX);
    ts->items = calloc(json_object_size(tenants) + 1, sizeof(*ts->items));
    if (!ts->items)
        return sg_error_set(err, -ENOMEM, "out of memory");
    const char *name;
    json_t *v;
    json_object_foreach(tenants, name, v)
    {
        ts->count++;
        int r = load_tenant(ts, name, v, origin, err);
        if (r < 0)
            return r;
    }
    const char *names[GW_TENANTS_MAX];
    for (size_t i = 0; i < ts->count; i++)
        names[i] = ts->items[i].name;
    int r = check_unique(ts, origin, err);
    return r < 0 ? r : gw_netauth_check(&ts->nets, names, origin, err);
}

int gw_tenants_load_buf(const char *buf, size_t len, const char *origin, struct gw_tenants **ret,
                        struct sg_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sg_error_set(err, -EINVAL, "%s: line %d: %s", origin, jerr.line, jerr.text);
    struct gw_tenants *ts = calloc(1, sizeof(*ts));
    int r = ts ? load_root(ts, root, origin, err) : sg_error_set(err, -ENOMEM, "out of memory");
    json_decref(root);
    if (r < 0) {
        gw_tenants_free(ts);
        return r;
    }
    *ret = ts;
    return 0;
}

int gw_tenants_load_file(const char *path, struct gw_tenants **ret, struct sg_error *err)
{
    char *data = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(path, GW_TOKENS_FILE_MAX, &data, &len, err);
    if (r == 0)
        r = gw_tenants_load_buf(data, len, path, ret, err);
    if (data)
        OPENSSL_cleanse(data, len); /* plain tokens: do not leave them in freed memory */
    free(data);
    return r;
}

void gw_tenants_free(struct gw_tenants *ts)
{
    if (!ts)
        return;
    for (size_t i = 0; i < ts->count; i++) {
        struct gw_tenant *t = &ts->items[i];
        free(t->name);
        free(t->digests);
        for (size_t j = 0; j < t->policy_count; j++)
            free(t->policies[j]);
        free(t->policies);
        free(t->default_policy);
        gw_egress_tenant_clear(&t->egress);
    }
    free(ts->items);
    gw_netauth_clear(&ts->nets);
    free(ts);
}

const struct gw_tenant *gw_tenants_lookup(const struct gw_tenants *ts, const char *token,
                                          size_t len)
{
    if (!ts || !token || len < GW_TOKEN_MIN || len > GW_TOKEN_MAX)
        return NULL;
    unsigned char d[32];
    SHA256((const unsigned char *)token, len, d);
    const struct gw_tenant *found = NULL;
    /* Visit every digest whatever matched, so timing does not depend on where. */
    for (size_t i = 0; i < ts->count; i++)
        for (size_t j = 0; j < ts->items[i].digest_count; j++) {
            int eq = CRYPTO_memcmp(d, ts->items[i].digests[j], 32) == 0;
            found = eq ? &ts->items[i] : found;
        }
    return found;
}

const struct gw_tenant *gw_tenants_lookup_peer(const struct gw_tenants *ts, const char *peer,
                                               const struct sg_cidr **ret_net)
{
    long i = ts ? gw_netauth_lookup(&ts->nets, peer, ret_net) : -1;
    return i >= 0 ? &ts->items[i] : NULL;
}

int gw_tenant_may_use(const struct gw_tenant *t, const char *policy)
{
    for (size_t i = 0; t && i < t->policy_count; i++)
        if (strcmp(t->policies[i], policy) == 0)
            return 1;
    return 0;
}

const char *gw_auth_token(const char *authorization, const char *x_sandbox_token, size_t *ret_len)
{
    const char *tok = NULL;
    if (authorization && strncasecmp(authorization, "Bearer ", 7) == 0)
        tok = authorization + 7;
    else if (x_sandbox_token)
        tok = x_sandbox_token;
    if (!tok)
        return NULL;
    while (*tok == ' ' || *tok == '\t')
        tok++;
    size_t n = strlen(tok);
    while (n && (tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        n--;
    if (n == 0)
        return NULL;
    *ret_len = n;
    return tok;
}

int gw_tenants_authenticate(const struct gw_tenants *tenants, const struct sg_http_request *req,
                            struct sg_http_response *resp, const struct gw_tenant **ret_tenant)
{
    *ret_tenant = NULL;
    if (!tenants)
        return 0;
    size_t len = 0;
    const char *tok = gw_auth_token(sg_http_header(req, "Authorization"),
                                    sg_http_header(req, "X-Sandbox-Token"), &len);
    /* A token decides when there is one; only without one does the source
     * address count (trusted networks, gw_netauth.h). */
    *ret_tenant = tok ? gw_tenants_lookup(tenants, tok, len)
                      : gw_tenants_lookup_peer(tenants, req->peer, NULL);
    if (*ret_tenant)
        return 0;
    sg_http_error(resp, 401, "unauthorized",
                  tok ? "invalid token"
                      : "missing token: send Authorization: Bearer <token> or X-Sandbox-Token");
    sg_http_add_header(resp, "WWW-Authenticate", "Bearer");
    return -EACCES;
}
