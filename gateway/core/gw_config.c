#include "gw_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gw_discover.h"
#include "readfile.h"
#include "sg_parse.h"
#include "verdict_cache.h"

enum key_type { K_STR, K_U64, K_MS, K_BOOL3, K_LEVEL };

struct key {
    const char *name;
    const char *env;
    enum key_type type;
    size_t off;
    size_t size; /* K_STR: buffer size */
    uint64_t min, max;
    const char *help;
};

#define STR(f) K_STR, offsetof(struct gw_config, f), sizeof(((struct gw_config *)0)->f)
#define U64(f) K_U64, offsetof(struct gw_config, f), 0
#define MS(f) K_MS, offsetof(struct gw_config, f), 0

static const struct key keys[] = {
    {"listen", "SANDGATE_LISTEN", STR(listen), 0, 0,
     "address to listen on; non-loopback needs tokens_file"},
    {"port", "SANDGATE_PORT", U64(port), 0, 65535, "TCP port (0 picks a free one)"},
    {"executor_token_file", "SANDGATE_EXECUTOR_TOKEN_FILE", STR(executor_token_file), 0, 0,
     "file holding the secret sent to executors as a Bearer token"},
    {"policies_dir", "SANDGATE_POLICIES_DIR", STR(policies_dir), 0, 0,
     "directory of policy files (*.json)"},
    {"default_policy", "SANDGATE_DEFAULT_POLICY", STR(default_policy), 0, 0,
     "policy used when the tenant has none"},
    {"tokens_file", "SANDGATE_TOKENS_FILE", STR(tokens_file), 0, 0,
     "tokens/tenants file; empty = no auth (loopback only)"},
    {"audit_log", "SANDGATE_AUDIT_LOG", STR(audit_log), 0, 0,
     "audit log path, \"-\" for stdout, empty to disable"},
    {"audit_index", "SANDGATE_AUDIT_INDEX", STR(audit_index), 0, 0,
     "SQLite index of the audit log for GET /v1/audit and the console; empty = off"},
    {"audit_index_retention_days", "SANDGATE_AUDIT_INDEX_RETENTION_DAYS",
     U64(audit_index_retention_days), 1, 3650, "audit index keeps this many days of lines"},
    {"audit_index_max_rows", "SANDGATE_AUDIT_INDEX_MAX_ROWS", U64(audit_index_max_rows), 1000,
     1000000000, "audit index keeps at most this many lines (the newest)"},
    {"console_dir", "SANDGATE_CONSOLE_DIR", STR(console_dir), 0, 0,
     "built console assets served at /console/; empty = no console"},
    {"max_body_bytes", "SANDGATE_MAX_BODY_BYTES", U64(max_body_bytes), 1024, 256u << 20,
     "request body cap (413 above)"},
    {"max_code_bytes", "SANDGATE_MAX_CODE_BYTES", U64(max_code_bytes), 1, 64u << 20,
     "decoded source cap"},
    {"max_arguments_bytes", "SANDGATE_MAX_ARGUMENTS_BYTES", U64(max_arguments_bytes), 2, 64u << 20,
     "serialized `arguments` cap"},
    {"max_arguments_depth", "SANDGATE_MAX_ARGUMENTS_DEPTH", U64(max_arguments_depth), 1, 256,
     "nesting depth cap of `arguments`"},
    {"max_files", "SANDGATE_MAX_FILES", U64(max_files), 0, 256, "input files per job"},
    {"max_files_bytes", "SANDGATE_MAX_FILES_BYTES", U64(max_files_bytes), 0, 256u << 20,
     "decoded bytes of all input files"},
    {"default_timeout_ms", "SANDGATE_DEFAULT_TIMEOUT_MS", MS(default_timeout_ms), SG_TIMEOUT_MS_MIN,
     SG_TIMEOUT_MS_MAX, "job time limit when the request sets none (SANDBOX_TIMEOUT)"},
    {"max_timeout_ms", "SANDGATE_MAX_TIMEOUT_MS", MS(max_timeout_ms), SG_TIMEOUT_MS_MIN,
     SG_TIMEOUT_MS_MAX, "largest time limit a request may ask for"},
    {"default_memory_mb", "SANDGATE_DEFAULT_MEMORY_MB", U64(default_memory_mb), SG_MEMORY_MB_MIN,
     SG_MEMORY_MB_MAX, "job memory limit when the request sets none (SANDBOX_MAX_MEMORY)"},
    {"max_memory_mb", "SANDGATE_MAX_MEMORY_MB", U64(max_memory_mb), SG_MEMORY_MB_MIN,
     SG_MEMORY_MB_MAX, "largest memory limit a request may ask for"},
    {"enable_seccomp", "SANDGATE_ENABLE_SECCOMP", K_BOOL3,
     offsetof(struct gw_config, enable_seccomp), 0, 0, 1,
     "forwarded to executors as limits.enable_seccomp (SANDBOX_ENABLE_SECCOMP)"},
    {"health_interval_ms", "SANDGATE_HEALTH_INTERVAL_MS", MS(health_interval_ms), 50, 3600000,
     "executor health-check period"},
    {"connect_timeout_ms", "SANDGATE_CONNECT_TIMEOUT_MS", MS(connect_timeout_ms), 10, 60000,
     "connect timeout to an executor"},
    {"exec_grace_ms", "SANDGATE_EXEC_GRACE_MS", MS(exec_grace_ms), 0, 600000,
     "added to the job time limit for the whole executor call"},
    {"busy_retries", "SANDGATE_BUSY_RETRIES", U64(busy_retries), 0, 16,
     "other executors tried when one answers 503 pool_busy"},
    {"executor_max_inflight", "SANDGATE_EXECUTOR_MAX_INFLIGHT", U64(executor_max_inflight), 1,
     100000, "concurrent jobs per executor URL before it counts as saturated"},
    {"max_connections", "SANDGATE_MAX_CONNECTIONS", U64(max_connections), 1, GW_MAX_CONNECTIONS_MAX,
     "open client connections; past it a new one evicts one still waiting for its head, or "
     "is closed at accept"},
    {"max_connections_per_ip", "SANDGATE_MAX_CONNECTIONS_PER_IP", U64(max_connections_per_ip), 0,
     GW_MAX_CONNECTIONS_MAX,
     "connections per client address not yet served (waiting for or receiving a request), at "
     "most max_connections (0 = no limit of its own)"},
    {"max_connections_per_tenant", "SANDGATE_MAX_CONNECTIONS_PER_TENANT",
     U64(max_connections_per_tenant), 0, GW_MAX_CONNECTIONS_MAX,
     "connections of one tenant whose head was accepted and whose request is still arriving "
     "(a slow body), from any address; past it 503 server_busy (0 = no limit)"},
    {"max_inflight_requests", "SANDGATE_MAX_INFLIGHT_REQUESTS", U64(max_inflight_requests), 1, 4096,
     "requests handled at once; more wait in the queue"},
    {"max_queued_requests", "SANDGATE_MAX_QUEUED_REQUESTS", U64(max_queued_requests), 0, 100000,
     "requests waiting for a handler; more get 503 server_busy"},
    {"header_timeout_s", "SANDGATE_HEADER_TIMEOUT_S", U64(header_timeout_s), 1, 3600,
     "time to receive a request's head (a new or kept-alive connection), however slowly sent; "
     "capped by receive_timeout_s"},
    {"receive_timeout_s", "SANDGATE_RECEIVE_TIMEOUT_S", U64(receive_timeout_s), 1, 3600,
     "time to receive one request's headers and body, however slowly sent"},
    {"max_bodies_bytes", "SANDGATE_MAX_BODIES_BYTES", U64(max_bodies_bytes), 1024, 1ull << 40,
     "request bodies held in memory at once; more get 503 server_busy"},
    {"memory_budget_bytes", "SANDGATE_MEMORY_BUDGET", U64(memory_budget_bytes), 0, 1ull << 40,
     "bytes requests may hold at once (bodies, jobs, answers); more get a busy answer. "
     "0: half the container's memory limit, 256 MiB outside a container"},
    {"idle_timeout_s", "SANDGATE_IDLE_TIMEOUT_S", U64(idle_timeout_s), 1, 3600,
     "a client connection without traffic this long is closed (e.g. one not reading)"},
    {"anonymous_rate", "SANDGATE_ANONYMOUS_RATE", U64(anonymous_rate), 0, 1000000,
     "requests/s allowed without tokens (0 = unlimited)"},
    {"anonymous_burst", "SANDGATE_ANONYMOUS_BURST", U64(anonymous_burst), 0, 1000000,
     "burst for anonymous_rate"},
    {"max_sessions", "SANDGATE_MAX_SESSIONS", U64(max_sessions), 0, 100000,
     "open sessions per tenant (and for anonymous clients) unless the tokens file gives the "
     "tenant its own max_sessions; 0 disables sessions"},
    {"audit_queue_max", "SANDGATE_AUDIT_QUEUE_MAX", U64(audit_queue_max), 1, 1000000,
     "audit lines buffered before new ones are dropped (and counted)"},
    {"analysis_cache_entries", "SANDGATE_ANALYSIS_CACHE_ENTRIES", U64(analysis_cache_entries), 0,
     SG_VCACHE_ENTRIES_MAX, "analysis results kept for resubmitted code (0 disables the cache)"},
    {"analysis_cache_bytes", "SANDGATE_ANALYSIS_CACHE_BYTES", U64(analysis_cache_bytes), 4096,
     SG_VCACHE_BYTES_MAX, "memory cap of the analysis cache"},
    {"drain_timeout_ms", "SANDGATE_DRAIN_TIMEOUT_MS", MS(drain_timeout_ms), 0, 3600000,
     "SIGTERM: how long in-flight requests may take to finish"},
    {"log_level", "SANDGATE_LOG_LEVEL", K_LEVEL, offsetof(struct gw_config, log_level), 0, 0, 0,
     "debug, info, warn or error"},
    {"dify_port", "SANDGATE_DIFY_PORT", U64(dify_port), 0, 65535,
     "Dify's sandbox API (POST /v1/sandbox/run) on its own port, e.g. 8194; 0 = off"},
    {"dify_api_key", "SANDGATE_DIFY_API_KEY", STR(dify_api_key), 0, 0,
     "the X-Api-Key Dify sends when there is no tokens file (with one, a tenant's token)"},
    {"dify_policy", "SANDGATE_DIFY_POLICY", STR(dify_policy), 0, 0,
     "the policy Dify's jobs run under when the tenant may use it (\"\": its default)"},
    {"dify_timeout_ms", "SANDGATE_DIFY_TIMEOUT_MS", MS(dify_timeout_ms), SG_TIMEOUT_MS_MIN,
     SG_TIMEOUT_MS_MAX, "a Dify job's time limit (dify-sandbox's WORKER_TIMEOUT)"},
    {"dify_max_requests", "SANDGATE_DIFY_MAX_REQUESTS", U64(dify_max_requests), 1, 100000,
     "Dify runs at once; more are answered 503 (dify-sandbox's MAX_REQUESTS)"},
    {"dify_enable_network", "SANDGATE_DIFY_ENABLE_NETWORK", K_BOOL3,
     offsetof(struct gw_config, dify_enable_network), 0, 0, 1,
     "false: Dify's jobs run offline whatever enable_network says (ENABLE_NETWORK)"},
};
#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))

static const char *const lang_envs[SG_LANG_COUNT] = {"SANDGATE_EXECUTORS_PYTHON",
                                                     "SANDGATE_EXECUTORS_NODEJS"};

void gw_config_defaults(struct gw_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1");
    cfg->port = 9385;
    snprintf(cfg->executors[0][0], GW_URL_MAX, "http://127.0.0.1:9401");
    snprintf(cfg->executors[1][0], GW_URL_MAX, "http://127.0.0.1:9402");
    cfg->executor_count[0] = cfg->executor_count[1] = 1;
    snprintf(cfg->policies_dir, sizeof(cfg->policies_dir), "policies");
    snprintf(cfg->default_policy, sizeof(cfg->default_policy), "default");
    snprintf(cfg->audit_log, sizeof(cfg->audit_log), "-");
    cfg->max_body_bytes = 8u << 20;
    cfg->max_code_bytes = 1u << 20;
    cfg->max_arguments_bytes = 1u << 20;
    cfg->max_arguments_depth = 32;
    cfg->max_files = 16;
    cfg->max_files_bytes = 4u << 20;
    cfg->default_timeout_ms = 10000;
    cfg->max_timeout_ms = 300000;
    cfg->max_sessions = 8;
    cfg->default_memory_mb = 256;
    cfg->max_memory_mb = 2048;
    cfg->enable_seccomp = -1;
    cfg->health_interval_ms = 2000;
    cfg->connect_timeout_ms = 1000;
    cfg->exec_grace_ms = 5000;
    cfg->busy_retries = 1;
    cfg->executor_max_inflight = 256;
    cfg->max_connections = GW_MAX_CONNECTIONS_DEFAULT;
    cfg->max_connections_per_ip = 128;
    cfg->max_connections_per_tenant = 128;
    cfg->max_inflight_requests = 256;
    cfg->max_queued_requests = 256;
    cfg->header_timeout_s = 10;
    cfg->receive_timeout_s = 30;
    cfg->max_bodies_bytes = 64u << 20;
    cfg->idle_timeout_s = 60;
    cfg->audit_queue_max = 8192;
    cfg->audit_index_retention_days = 30;
    cfg->audit_index_max_rows = 5000000;
    cfg->drain_timeout_ms = 30000;
    cfg->analysis_cache_entries = 4096;
    cfg->analysis_cache_bytes = 32u << 20;
    cfg->log_level = SG_LOG_INFO;
    snprintf(cfg->dify_policy, sizeof(cfg->dify_policy), "dify");
    cfg->dify_timeout_ms = 15000;
    cfg->dify_max_requests = 50;
    cfg->dify_enable_network = 1;
}

int gw_addr_is_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

/* A K_BOOL3 key's field: -1 (not set), 0 or 1. */
static int *bool3(struct gw_config *cfg, const struct key *k)
{
    return (int *)(void *)((char *)cfg + k->off);
}

static int set_u64(struct gw_config *cfg, const struct key *k, uint64_t v, const char *origin,
                   struct sg_error *err)
{
    if (v < k->min || v > k->max)
        return sg_error_set(err, -ERANGE, "%s: %s: %llu is outside [%llu, %llu]", origin, k->name,
                            (unsigned long long)v, (unsigned long long)k->min,
                            (unsigned long long)k->max);
    if (k->off == offsetof(struct gw_config, port))
        cfg->port = (uint32_t)v;
    else
        *(uint64_t *)(void *)((char *)cfg + k->off) = v;
    return 0;
}

static int set_str(struct gw_config *cfg, const struct key *k, const char *s, const char *origin,
                   struct sg_error *err)
{
    size_t n = strlen(s);
    if (n >= k->size)
        return sg_error_set(err, -ENAMETOOLONG, "%s: %s: longer than %zu bytes", origin, k->name,
                            k->size - 1);
    memcpy((char *)cfg + k->off, s, n + 1);
    return 0;
}

/* Apply one value given as text (environment) to key k. */
static int set_from_text(struct gw_config *cfg, const struct key *k, const char *s,
                         const char *origin, struct sg_error *err)
{
    uint64_t v;
    bool b;
    enum sg_log_level lvl;
    struct sg_error perr;
    int r;
    switch (k->type) {
    case K_STR:
        return set_str(cfg, k, s, origin, err);
    case K_U64:
    case K_MS:
        r = k->type == K_MS ? sg_parse_duration_ms(s, 1, &v, &perr) : sg_parse_u64(s, &v, &perr);
        if (r < 0)
            return sg_error_set(err, r, "%s: %s: %s", origin, k->name, perr.msg);
        return set_u64(cfg, k, v, origin, err);
    case K_BOOL3:
        if ((r = sg_parse_bool(s, &b, &perr)) < 0)
            return sg_error_set(err, r, "%s: %s: %s", origin, k->name, perr.msg);
        *bool3(cfg, k) = b;
        return 0;
    case K_LEVEL:
        if (sg_log_parse_level(s, &lvl) < 0)
            return sg_error_set(err, -EINVAL, "%s: %s: '%s' is not debug|info|warn|error", origin,
                                k->name, s);
        cfg->log_level = lvl;
        return 0;
    }
    return -EINVAL;
}

static int set_from_json(struct gw_config *cfg, const struct key *k, json_t *v, const char *origin,
                         struct sg_error *err)
{
    if (k->type == K_U64 || k->type == K_MS) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return sg_error_set(err, -EINVAL, "%s: %s: expected a non-negative integer", origin,
                                k->name);
        return set_u64(cfg, k, (uint64_t)json_integer_value(v), origin, err);
    }
    if (k->type == K_BOOL3) {
        if (json_is_null(v))
            return *bool3(cfg, k) = -1, 0;
        if (!json_is_boolean(v))
            return sg_error_set(err, -EINVAL, "%s: %s: expected true, false or null", origin,
                                k->name);
        *bool3(cfg, k) = json_is_true(v);
        return 0;
    }
    if (!json_is_string(v))
        return sg_error_set(err, -EINVAL, "%s: %s: expected a string", origin, k->name);
    return set_from_text(cfg, k, json_string_value(v), origin, err);
}

static int url_ok(const char *u)
{
    if (strncmp(u, "dns+", 4) == 0)
        u += 4; /* gw_discover.h: resolve to every address */
    if (strncmp(u, "http://", 7) != 0 || strlen(u) >= GW_URL_MAX || !u[7] || u[7] == '/')
        return 0;
    for (const char *p = u; *p; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
            return 0;
    return 1;
}

static int set_url(struct gw_config *cfg, int lang, size_t i, const char *u, const char *origin,
                   struct sg_error *err)
{
    if (i >= GW_EXECUTORS_MAX)
        return sg_error_set(err, -E2BIG, "%s: executors.%s: more than %d URLs", origin,
                            sg_lang_name(lang), GW_EXECUTORS_MAX);
    if (!url_ok(u))
        return sg_error_set(err, -EINVAL, "%s: executors.%s[%zu]: '%.80s' is not an http:// URL",
                            origin, sg_lang_name(lang), i, u);
    struct gw_discover *d = NULL;
    if (gw_discover_is_dynamic(u)) {
        struct sg_error e = {0};
        int rc = gw_discover_new(u, &d, &e);
        gw_discover_free(d);
        if (rc < 0)
            return sg_error_set(err, rc, "%s: executors.%s[%zu]: %s", origin, sg_lang_name(lang), i,
                                e.msg);
    }
    size_t n = strlen(u);
    while (n > 7 && u[n - 1] == '/')
        n--; /* "http://h:1/" and "http://h:1" are the same executor */
    memcpy(cfg->executors[lang][i], u, n);
    cfg->executors[lang][i][n] = '\0';
    return 0;
}

static int load_executors(struct gw_config *cfg, json_t *obj, const char *origin,
                          struct sg_error *err)
{
    if (!json_is_object(obj))
        return sg_error_set(err, -EINVAL, "%s: executors: expected an object", origin);
    const char *name;
    json_t *list;
    json_object_foreach(obj, name, list)
    {
        enum sg_lang lang;
        if (sg_lang_parse(name, SG_LANG_NAMES_API, &lang) < 0)
            return sg_error_set(err, -EINVAL, "%s: executors.%s: unknown language", origin, name);
        if (!json_is_array(list) || json_array_size(list) == 0)
            return sg_error_set(err, -EINVAL, "%s: executors.%s: expected a non-empty array",
                                origin, name);
        size_t i;
        json_t *u;
        json_array_foreach(list, i, u)
        {
            if (!json_is_string(u))
                return sg_error_set(err, -EINVAL, "%s: executors.%s[%zu]: expected a string",
                                    origin, name, i);
            int r = set_url(cfg, lang, i, json_string_value(u), origin, err);
            if (r < 0)
                return r;
        }
        cfg->executor_count[lang] = json_array_size(list);
    }
    return 0;
}

static const struct key *find_key(const char *name)
{
    for (size_t i = 0; i < KEY_COUNT; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

int gw_config_load_buf(struct gw_config *cfg, const char *buf, size_t len, const char *origin,
                       struct sg_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return sg_error_set(err, -EINVAL, "%s: line %d: %s", origin, jerr.line, jerr.text);
    struct gw_config tmp = *cfg;
    int r = 0;
    if (!json_is_object(root)) {
        r = sg_error_set(err, -EINVAL, "%s: expected a JSON object", origin);
        goto out;
    }
    const char *name;
    json_t *v;
    json_object_foreach(root, name, v)
    {
        const struct key *k = find_key(name);
        if (strcmp(name, "executors") == 0)
            r = load_executors(&tmp, v, origin, err);
        else if (!k)
            r = sg_error_set(err, -EINVAL, "%s: unknown key '%.64s'", origin, name);
        else
            r = set_from_json(&tmp, k, v, origin, err);
        if (r < 0)
            goto out;
    }
    *cfg = tmp;
out:
    json_decref(root);
    return r;
}

int gw_config_load_file(struct gw_config *cfg, const char *path, struct sg_error *err)
{
    char *data = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(path, GW_CONFIG_FILE_MAX, &data, &len, err);
    if (r == 0)
        r = gw_config_load_buf(cfg, data, len, path, err);
    free(data);
    return r;
}

static int env_urls(struct gw_config *cfg, int lang, const char *val, struct sg_error *err)
{
    char tmp[GW_EXECUTORS_MAX * GW_URL_MAX];
    if (strlen(val) >= sizeof(tmp))
        return sg_error_set(err, -E2BIG, "%s: too long", lang_envs[lang]);
    snprintf(tmp, sizeof(tmp), "%s", val);
    size_t i = 0;
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int r = set_url(cfg, lang, i++, tok, lang_envs[lang], err);
        if (r < 0)
            return r;
    }
    if (i == 0)
        return sg_error_set(err, -EINVAL, "%s: no URL given", lang_envs[lang]);
    cfg->executor_count[lang] = i;
    return 0;
}

/* RAGFlow's names, applied before ours so SANDGATE_* wins when both are set.
 * Empty counts as unset, as in RAGFlow. The grammar and the ranges are the
 * executors' too (common/sg_parse.h). */
static int env_ragflow(struct gw_config *cfg, struct sg_error *err)
{
    struct sg_error perr;
    const char *v = getenv("SANDBOX_TIMEOUT");
    uint64_t n;
    bool b;
    int r;
    if (v && *v) {
        if ((r = sg_parse_duration_ms(v, 1000, &n, &perr)) < 0)
            return sg_error_set(err, r, "SANDBOX_TIMEOUT: %s", perr.msg);
        if ((r = set_u64(cfg, find_key("default_timeout_ms"), n, "SANDBOX_TIMEOUT", err)) < 0)
            return r;
    }
    v = getenv("SANDBOX_MAX_MEMORY");
    if (v && *v) {
        if ((r = sg_parse_size_mib(v, 1, &n, &perr)) < 0)
            return sg_error_set(err, r, "SANDBOX_MAX_MEMORY: %s", perr.msg);
        if ((r = set_u64(cfg, find_key("default_memory_mb"), n, "SANDBOX_MAX_MEMORY", err)) < 0)
            return r;
    }
    v = getenv("SANDBOX_ENABLE_SECCOMP");
    if (v && *v) {
        if ((r = sg_parse_bool(v, &b, &perr)) < 0)
            return sg_error_set(err, r, "SANDBOX_ENABLE_SECCOMP: %s", perr.msg);
        cfg->enable_seccomp = b;
    }
    return 0;
}

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* One of dify-sandbox's names, unless the SANDGATE_ name is set too. */
static int env_dify_one(struct gw_config *cfg, const char *name, const char *key_name,
                        uint64_t scale, struct sg_error *err)
{
    const struct key *k = find_key(key_name);
    const char *v = getenv(name);
    if (!v || !*v || env_set(k->env))
        return 0;
    if (scale == 0)
        return set_from_text(cfg, k, v, name, err);
    struct sg_error perr;
    uint64_t n;
    int r = sg_parse_u64(v, &n, &perr);
    if (r < 0)
        return sg_error_set(err, r, "%s: %s", name, perr.msg);
    return set_u64(cfg, k, n > UINT64_MAX / scale ? UINT64_MAX : n * scale, name, err);
}

/* dify-sandbox's names (README, "Dify integration"), read only when the
 * Dify listener is on: a gateway without it never looks at API_KEY. */
static int env_dify(struct gw_config *cfg, struct sg_error *err)
{
    int r;
    if (!cfg->dify_port)
        return 0;
    if ((r = env_dify_one(cfg, "API_KEY", "dify_api_key", 0, err)) < 0 ||
        (r = env_dify_one(cfg, "WORKER_TIMEOUT", "dify_timeout_ms", 1000, err)) < 0 ||
        (r = env_dify_one(cfg, "MAX_REQUESTS", "dify_max_requests", 1, err)) < 0)
        return r;
    return env_dify_one(cfg, "ENABLE_NETWORK", "dify_enable_network", 0, err);
}

int gw_config_apply_env(struct gw_config *cfg, struct sg_error *err)
{
    struct gw_config tmp = *cfg;
    int r = env_ragflow(&tmp, err);
    if (r < 0)
        return r;
    for (size_t i = 0; i < KEY_COUNT; i++) {
        const char *v = getenv(keys[i].env);
        /* An empty number or switch is unset (compose passes ${X:-} as "");
         * an empty string is a value ("" tokens_file: no authentication). */
        if (v && (*v || keys[i].type == K_STR) &&
            (r = set_from_text(&tmp, &keys[i], v, keys[i].env, err)) < 0)
            return r;
    }
    for (int l = 0; l < SG_LANG_COUNT; l++) {
        const char *v = getenv(lang_envs[l]);
        if (v && (r = env_urls(&tmp, l, v, err)) < 0)
            return r;
    }
    if ((r = env_dify(&tmp, err)) < 0)
        return r;
    *cfg = tmp;
    return 0;
}

void gw_config_http(const struct gw_config *c, uint16_t port, uint64_t max_body,
                    struct sg_membudget *budget, struct sg_httpsrv_config *ret)
{
    *ret = (struct sg_httpsrv_config){
        .bind_addr = c->listen,
        .port = port,
        .max_body = max_body,
        .workers = (unsigned)c->max_inflight_requests,
        .timeout_s = (unsigned)c->idle_timeout_s,
        .max_connections = (unsigned)c->max_connections,
        .per_ip_connections = (unsigned)c->max_connections_per_ip,
        .per_owner_connections = (unsigned)c->max_connections_per_tenant,
        .max_queued = (unsigned)c->max_queued_requests,
        .receive_timeout_s = (unsigned)c->receive_timeout_s,
        .header_timeout_s = (unsigned)c->header_timeout_s,
        .max_body_total = c->max_bodies_bytes,
        .budget = budget,
    };
}

int gw_config_validate(const struct gw_config *cfg, struct sg_error *err)
{
    struct in6_addr a;
    if (inet_pton(AF_INET, cfg->listen, &a) != 1 && inet_pton(AF_INET6, cfg->listen, &a) != 1)
        return sg_error_set(err, -EINVAL, "listen: '%s' is not an IP address literal", cfg->listen);
    if (cfg->dify_port && cfg->dify_port == cfg->port)
        return sg_error_set(err, -EINVAL, "dify_port: %llu is the API's port too",
                            (unsigned long long)cfg->dify_port);
    if (cfg->default_timeout_ms > cfg->max_timeout_ms)
        return sg_error_set(err, -EINVAL, "default_timeout_ms (%llu) exceeds max_timeout_ms (%llu)",
                            (unsigned long long)cfg->default_timeout_ms,
                            (unsigned long long)cfg->max_timeout_ms);
    if (cfg->default_memory_mb > cfg->max_memory_mb)
        return sg_error_set(err, -EINVAL, "default_memory_mb (%llu) exceeds max_memory_mb (%llu)",
                            (unsigned long long)cfg->default_memory_mb,
                            (unsigned long long)cfg->max_memory_mb);
    if (cfg->max_code_bytes > cfg->max_body_bytes)
        return sg_error_set(err, -EINVAL, "max_code_bytes exceeds max_body_bytes");
    if (cfg->max_bodies_bytes < cfg->max_body_bytes)
        return sg_error_set(err, -EINVAL, "max_bodies_bytes is below max_body_bytes");
    if (cfg->max_connections_per_ip > cfg->max_connections)
        return sg_error_set(err, -EINVAL,
                            "max_connections_per_ip (%llu) exceeds max_connections (%llu)",
                            (unsigned long long)cfg->max_connections_per_ip,
                            (unsigned long long)cfg->max_connections);
    if (!cfg->policies_dir[0] || !cfg->default_policy[0])
        return sg_error_set(err, -EINVAL, "policies_dir and default_policy must be set");
    if (!cfg->tokens_file[0] && !gw_addr_is_loopback(cfg->listen))
        return sg_error_set(err, -EPERM,
                            "listen: %s is not a loopback address and no tokens_file is set: "
                            "refusing to expose an unauthenticated gateway",
                            cfg->listen);
    if (cfg->audit_index[0] && (!cfg->audit_log[0] || strcmp(cfg->audit_log, "-") == 0))
        return sg_error_set(err, -EINVAL,
                            "audit_index: needs audit_log to be a file (it is "
                            "built from it)");
    for (int l = 0; l < SG_LANG_COUNT; l++)
        if (cfg->executor_count[l] == 0)
            return sg_error_set(err, -EINVAL, "executors.%s: no executor URL", sg_lang_name(l));
    return 0;
}

static void default_text(const struct gw_config *d, const struct key *k, char *out, size_t n)
{
    const char *base = (const char *)d + k->off;
    switch (k->type) {
    case K_STR:
        snprintf(out, n, "\"%s\"", base);
        break;
    case K_U64:
    case K_MS:
        snprintf(out, n, "%llu",
                 k->off == offsetof(struct gw_config, port)
                     ? (unsigned long long)d->port
                     : (unsigned long long)*(const uint64_t *)(const void *)base);
        break;
    case K_BOOL3:
        snprintf(out, n, "%s",
                 k->off == offsetof(struct gw_config, enable_seccomp) ? "null (executor default)"
                                                                      : "true");
        break;
    case K_LEVEL:
        snprintf(out, n, "\"info\"");
        break;
    }
}

void gw_config_print_help(FILE *out)
{
    struct gw_config d;
    gw_config_defaults(&d);
    fprintf(out, "Configuration keys (JSON file via -c; environment overrides the file):\n");
    for (size_t i = 0; i < KEY_COUNT; i++) {
        char def[GW_PATH_MAX + 8];
        default_text(&d, &keys[i], def, sizeof(def));
        fprintf(out, "  %-22s %-30s default %s\n      %s\n", keys[i].name, keys[i].env, def,
                keys[i].help);
    }
    fprintf(out,
            "  %-22s %-30s default {\"python\":[\"%s\"],\"nodejs\":[\"%s\"]}\n"
            "      executor URLs per language (env: comma-separated list;\n"
            "      also %s)\n",
            "executors", lang_envs[0], d.executors[0][0], d.executors[1][0], lang_envs[1]);
    fprintf(out,
            "RAGFlow names (applied before SANDGATE_*):\n"
            "  SANDBOX_TIMEOUT         job time limit: \"10s\", \"1m30s\", \"1500ms\", or a\n"
            "                          bare number of seconds\n"
            "  SANDBOX_MAX_MEMORY      job memory limit: \"256m\", \"1g\", \"512k\", or a bare\n"
            "                          number of bytes (rounded up to whole MiB)\n"
            "  SANDBOX_ENABLE_SECCOMP  true/false, forwarded to executors\n"
            "dify-sandbox names (read when dify_port is set; SANDGATE_DIFY_* wins):\n"
            "  API_KEY                 dify_api_key\n"
            "  WORKER_TIMEOUT          dify_timeout_ms, in seconds\n"
            "  MAX_REQUESTS            dify_max_requests\n"
            "  ENABLE_NETWORK          dify_enable_network\n"
            "Durations (*_ms keys) also take \"10s\", \"1m30s\", \"1h\"; a bare number is\n"
            "milliseconds. An empty variable counts as unset, except for paths.\n");
}
