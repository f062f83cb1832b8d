/* gw_config.h - the gateway's configuration: defaults, one JSON file,
 * environment overrides, validation.
 *
 * Every key has a default, a JSON name and an environment variable
 * (SANDGATE_<KEY>); the key table is also what `sandgate --help` prints, so
 * the documentation cannot drift from the parser. RAGFlow's variable names are
 * honoured where they mean the same thing: SANDBOX_TIMEOUT ("10s", "1m30s", or a
 * bare number of seconds) -> default_timeout_ms, SANDBOX_MAX_MEMORY ("256m",
 * "1g", or bare bytes) -> default_memory_mb, SANDBOX_ENABLE_SECCOMP
 * ("true"/"false") -> enable_seccomp, forwarded to executors as a job limit.
 * dify-sandbox's names, read only when the Dify listener is on (dify_port):
 * API_KEY -> dify_api_key, WORKER_TIMEOUT (seconds) -> dify_timeout_ms,
 * MAX_REQUESTS -> dify_max_requests, ENABLE_NETWORK -> dify_enable_network.
 * The value grammars are common/sg_parse.h, shared with the executors.
 *
 * Order of precedence: defaults < file < environment. Loading never half
 * applies: on error the caller's struct is left as it was.
 */
#ifndef SG_GW_CONFIG_H
#define SG_GW_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "httpsrv.h"
#include "log.h"
#include "sg_error.h"
#include "sg_lang.h"

#define GW_EXECUTORS_MAX 8 /* executor URLs per language */
#define GW_URL_MAX 256
/* Client connections (docs/gateway.md, "Connections": measured, one
 * costs a descriptor and 11-23 KB of the gateway's memory plus about 4 KB of
 * the kernel's; 2048 of the largest heads stay within an eighth of the
 * stack's 512 MiB). The largest value accepted bounds a hostile config; the
 * descriptor limit is checked at start. */
#define GW_MAX_CONNECTIONS_DEFAULT 2048
#define GW_MAX_CONNECTIONS_MAX 32768
#define GW_PATH_MAX 1024
#define GW_CONFIG_FILE_MAX (256 * 1024)

struct gw_config {
    char listen[64]; /* IPv4/IPv6 literal */
    uint32_t port;
    char executors[SG_LANG_COUNT][GW_EXECUTORS_MAX][GW_URL_MAX];
    size_t executor_count[SG_LANG_COUNT];
    char executor_token_file[GW_PATH_MAX]; /* shared secret sent as Bearer to executors */
    char policies_dir[GW_PATH_MAX];
    char default_policy[65];
    char tokens_file[GW_PATH_MAX]; /* "" = no auth, loopback only */
    char audit_log[GW_PATH_MAX];   /* "-" = stdout, "" = off */
    char audit_index[GW_PATH_MAX]; /* SQLite index of audit_log; "" = off */
    uint64_t audit_index_retention_days;
    uint64_t audit_index_max_rows;
    char console_dir[GW_PATH_MAX]; /* built console assets; "" = no console */
    uint64_t max_body_bytes;
    uint64_t max_code_bytes;
    uint64_t max_arguments_bytes;
    uint64_t max_arguments_depth;
    uint64_t max_files;
    uint64_t max_files_bytes; /* decoded bytes of all input files */
    uint64_t default_timeout_ms;
    uint64_t max_timeout_ms;
    uint64_t default_memory_mb;
    uint64_t max_memory_mb;
    int enable_seccomp; /* -1: not set (executor decides), 0, 1 */
    uint64_t health_interval_ms;
    uint64_t connect_timeout_ms;
    uint64_t exec_grace_ms;              /* added to the job's time limit for the upstream call */
    uint64_t busy_retries;               /* other executors tried when one answers 503 pool_busy */
    uint64_t executor_max_inflight;      /* per executor URL; more is "saturated" (503) */
    uint64_t max_connections;            /* open client connections; past it refused at accept */
    uint64_t max_connections_per_ip;     /* open connections per client address; 0 = no limit */
    uint64_t max_connections_per_tenant; /* a tenant's requests still arriving; 0 = no limit */
    uint64_t max_inflight_requests;      /* requests handled at once (worker threads) */
    uint64_t max_queued_requests;        /* requests waiting for a worker; past it 503 */
    uint64_t header_timeout_s;           /* a request's head (capped by receive_timeout_s) */
    uint64_t receive_timeout_s;          /* headers + body of one request, however slow */
    uint64_t max_bodies_bytes;           /* request bodies held in memory at once */
    uint64_t memory_budget_bytes;        /* the daemon's request memory (membudget.h); 0: derived */
    uint64_t idle_timeout_s;             /* a connection without traffic in any phase */
    uint64_t anonymous_rate;             /* requests/s without tokens; 0 = unlimited */
    uint64_t anonymous_burst;
    uint64_t max_sessions;           /* open sessions per tenant unless the tokens file says */
    uint64_t audit_queue_max;        /* audit lines waiting for the writer */
    uint64_t drain_timeout_ms;       /* SIGTERM: wait this long for in-flight requests */
    uint64_t analysis_cache_entries; /* verdict cache entries; 0 = no cache */
    uint64_t analysis_cache_bytes;   /* verdict cache memory cap */
    enum sg_log_level log_level;
    /* Dify's sandbox API (gw_dify.h): its own listener, off when 0 */
    uint64_t dify_port;
    char dify_api_key[256];     /* X-Api-Key without a tokens file; "" = none accepted */
    char dify_policy[65];       /* the policy Dify's jobs ask for ("" = the tenant's default) */
    uint64_t dify_timeout_ms;   /* a Dify job's time limit */
    uint64_t dify_max_requests; /* Dify runs at once; past it 503 (code -503) */
    int dify_enable_network;    /* 0: every Dify job runs offline */
};

/* Fill cfg with the defaults. */
void gw_config_defaults(struct gw_config *cfg);

/* Apply a JSON config file over cfg. Unknown keys and wrong types are errors
 * naming the key. */
int gw_config_load_file(struct gw_config *cfg, const char *path, struct sg_error *err);

/* Same, from a buffer (origin names it in errors). */
int gw_config_load_buf(struct gw_config *cfg, const char *buf, size_t len, const char *origin,
                       struct sg_error *err);

/* Apply environment overrides (getenv) over cfg. */
int gw_config_apply_env(struct gw_config *cfg, struct sg_error *err);

/* Cross-field checks (default <= max, caps consistent, URLs well formed). */
int gw_config_validate(const struct gw_config *cfg, struct sg_error *err);

/* Print the key reference (name, env, default, meaning) for --help. */
void gw_config_print_help(FILE *out);

/* The gateway's memory budget when no container limit applies and none is
 * configured (membudget.h: otherwise half the container's limit). */
#define GW_MEMORY_BUDGET_DEFAULT (256ull << 20)

/* A listener's HTTP settings from cfg (address, limits, timeouts) for port
 * with a body cap of max_body, its bodies reserved in budget (borrowed; NULL:
 * none). */
struct sg_membudget;
void gw_config_http(const struct gw_config *cfg, uint16_t port, uint64_t max_body,
                    struct sg_membudget *budget, struct sg_httpsrv_config *ret);

/* 1 when addr is a loopback literal (127.0.0.0/8 or ::1). */
int gw_addr_is_loopback(const char *addr);

#endif
