#include "exec_config.h"

#include "membudget.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>

/* OPT_DURATION is milliseconds when bare; OPT_TIMEOUT too, except from
 * RAGFlow's SANDBOX_TIMEOUT (seconds); OPT_SIZE_MB is MiB when bare, except
 * from RAGFlow's SANDBOX_MAX_MEMORY (bytes, as Docker reads it). */
enum opt_kind {
    OPT_LANG,
    OPT_STR,
    OPT_UINT,
    OPT_SIZE_T,
    OPT_DURATION,
    OPT_TIMEOUT,
    OPT_SIZE_MB,
    OPT_CPUS,
    OPT_LISTEN,
    OPT_LOGLEVEL,
    OPT_INSECURE,
    OPT_SECCOMP_ENABLE,
    OPT_SECCOMP,
    OPT_FLAVOUR,
    OPT_SET,
    OPT_BOOL,
    OPT_FLAG, /* no value: sets a bool */
    OPT_HELP,
};

struct opt {
    const char *flag; /* long option name without "--" */
    const char *env;  /* environment variable, NULL if none */
    enum opt_kind kind;
    size_t off;  /* field offset in struct exec_config */
    size_t size; /* field size (strings) */
    unsigned long min, max;
};

#define F(field) offsetof(struct exec_config, field), sizeof(((struct exec_config *)0)->field)

/* Flags and the environment variables that set the same thing. Order matters
 * for --help only. */
static const struct opt opts[] = {
    {"language", "SANDGATE_LANGUAGE", OPT_LANG, F(language), 0, 0},
    {"image", "SANDGATE_IMAGE", OPT_STR, F(image), 1, 0},
    {"listen", "SANDGATE_LISTEN", OPT_LISTEN, F(listen_addr), 0, 0},
    {"pool-size", "SANDBOX_EXECUTOR_MANAGER_POOL_SIZE", OPT_UINT, F(pool_size), 1,
     EXEC_POOL_SIZE_MAX},
    {"flavour", "SANDGATE_FLAVOURS", OPT_FLAVOUR, F(flavours), 0, 0},
    {"set", "SANDGATE_SETS", OPT_SET, F(sets), 0, 0},
    {"pool-memory-mb", "SANDGATE_POOL_MEMORY_MB", OPT_SIZE_MB, F(pool_memory_mb), 0,
     EXEC_POOL_MEMORY_MB_MAX},
    {"pool-adaptive", "SANDGATE_POOL_ADAPTIVE", OPT_BOOL, F(pool_adaptive), 0, 0},
    {"pool-wait-ms", "SANDGATE_POOL_WAIT_MS", OPT_UINT, F(pool_wait_ms), 0, EXEC_POOL_WAIT_MS_MAX},
    {"create-parallel", "SANDGATE_CREATE_PARALLEL", OPT_UINT, F(create_parallel), 1,
     EXEC_CREATE_PARALLEL_MAX},
    {"runtime", "SANDGATE_RUNTIME", OPT_STR, F(runtime), 1, 0},
    {"insecure-runtime", NULL, OPT_INSECURE, F(runtime), 1, 0},
    {"runsc-path", "SANDGATE_RUNSC_PATH", OPT_STR, F(runsc_path), 0, 0},
    {"runsc-accept-old", "SANDGATE_RUNSC_ACCEPT_OLD", OPT_BOOL, F(runsc_accept_old), 0, 0},
    {"sandbox-backend", "SANDGATE_SANDBOX_BACKEND", OPT_STR, F(sandbox_backend), 1, 0},
    {"runsc-state-dir", "SANDGATE_RUNSC_STATE_DIR", OPT_STR, F(runsc_state_dir), 1, 0},
    {"sandbox-restore", "SANDGATE_SANDBOX_RESTORE", OPT_BOOL, F(sandbox_restore), 0, 0},
    {"restore-max-uses", "SANDGATE_RESTORE_MAX_USES", OPT_UINT, F(restore_max_uses), 1,
     EXEC_RESTORE_MAX_USES_MAX},
    {"restore-max-age-s", "SANDGATE_RESTORE_MAX_AGE_S", OPT_UINT, F(restore_max_age_s), 1,
     EXEC_RESTORE_MAX_AGE_S_MAX},
    {"memory-mb", "SANDBOX_MAX_MEMORY", OPT_SIZE_MB, F(memory_mb), SG_MEMORY_MB_MIN,
     SG_MEMORY_MB_MAX},
    {"cpus", "SANDGATE_CPUS", OPT_CPUS, F(nano_cpus), 0, 0},
    {"pids-limit", "SANDGATE_PIDS_LIMIT", OPT_UINT, F(pids_limit), EXEC_PIDS_MIN, EXEC_PIDS_MAX},
    {"timeout-ms", "SANDBOX_TIMEOUT", OPT_TIMEOUT, F(timeout_ms), SG_TIMEOUT_MS_MIN,
     SG_TIMEOUT_MS_MAX},
    {"max-timeout-ms", "SANDGATE_MAX_TIMEOUT_MS", OPT_DURATION, F(max_timeout_ms),
     SG_TIMEOUT_MS_MIN, SG_TIMEOUT_MS_MAX},
    {"max-output-bytes", "SANDGATE_MAX_OUTPUT_BYTES", OPT_SIZE_T, F(max_output_bytes),
     EXEC_OUTPUT_MIN, EXEC_OUTPUT_MAX},
    {"tmpfs-mb", "SANDGATE_TMPFS_MB", OPT_UINT, F(tmpfs_mb), EXEC_TMPFS_MB_MIN, EXEC_TMPFS_MB_MAX},
    {"nofile", "SANDGATE_NOFILE", OPT_UINT, F(nofile), 16, 65536},
    {"fsize-mb", "SANDGATE_FSIZE_MB", OPT_UINT, F(fsize_mb), 1, EXEC_TMPFS_MB_MAX},
    {"max-body", "SANDGATE_MAX_BODY", OPT_SIZE_T, F(max_body), EXEC_MAX_BODY_MIN,
     EXEC_MAX_BODY_MAX},
    {"max-jobs", "SANDGATE_MAX_JOBS", OPT_UINT, F(max_jobs), 1, EXEC_MAX_JOBS_MAX},
    {"memory-budget", "SANDGATE_MEMORY_BUDGET", OPT_SIZE_T, F(memory_budget), 0, SG_MEMBUDGET_MAX},
    {"max-sessions", "SANDGATE_MAX_SESSIONS", OPT_UINT, F(max_sessions), 0, EXEC_MAX_SESSIONS_MAX},
    {"seccomp", "SANDGATE_SECCOMP_PROFILE", OPT_SECCOMP, F(seccomp_path), 0, 0},
    {"enable-seccomp", "SANDBOX_ENABLE_SECCOMP", OPT_SECCOMP_ENABLE, F(seccomp_path), 0, 0},
    {"token-file", "SANDGATE_EXECUTOR_TOKEN_FILE", OPT_STR, F(token_file), 0, 0},
    {"instance", "SANDGATE_INSTANCE", OPT_STR, F(instance), 1, 0},
    {"docker-socket", "SANDGATE_DOCKER_SOCKET", OPT_STR, F(docker_socket), 1, 0},
    {"log-level", "SANDGATE_LOG_LEVEL", OPT_LOGLEVEL, F(log_level), 0, 0},
    {"egress-network", "SANDGATE_EGRESS_NETWORK", OPT_STR, F(egress_network), 0, 0},
    {"egress-proxy", "SANDGATE_EGRESS_PROXY", OPT_STR, F(egress_proxy), 0, 0},
    {"egress-runtime", "SANDGATE_EGRESS_RUNTIME", OPT_STR, F(egress_runtime), 1, 0},
    {"egress-dir", "SANDGATE_EGRESS_DIR", OPT_STR, F(egress_dir), 1, 0},
    {"session-dir", "SANDGATE_SESSION_DIR", OPT_STR, F(session_dir), 0, 0},
    {"egress-pool-size", "SANDGATE_EGRESS_POOL_SIZE", OPT_UINT, F(egress_pool_size), 1,
     EXEC_POOL_SIZE_MAX},
    {"egress-guard-image", "SANDGATE_EGRESS_GUARD_IMAGE", OPT_STR, F(egress_guard_image), 0, 0},
    {"test-guard-off", NULL, OPT_FLAG, F(test_guard_off), 0, 0},
    {"help", NULL, OPT_HELP, 0, 0, 0, 0},
};
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static const char usage_text[] =
    "usage: sandgate-executor --language python|nodejs [options]\n"
    "\n"
    "Runs accepted jobs in single-use gVisor containers from a warm pool, over the\n"
    "Docker Engine API. Flags override environment variables, which override the\n"
    "defaults. Internal API: POST /v1/exec, GET /healthz, GET /metrics.\n"
    "\n"
    "  --language L          python | nodejs (required)            env SANDGATE_LANGUAGE\n"
    "  --image REF           sandbox image (sandgate/sandbox-L:latest)\n"
    "                        env SANDGATE_IMAGE, SANDBOX_BASE_PYTHON_IMAGE, "
    "SANDBOX_BASE_NODEJS_IMAGE\n"
    "  --listen ADDR:PORT    HTTP listen address (127.0.0.1:9401 python, :9402 nodejs)\n"
    "                        env SANDGATE_LISTEN\n"
    "  --pool-size N         warm containers kept ready (2, 1..64)\n"
    "                        env SANDBOX_EXECUTOR_MANAGER_POOL_SIZE\n"
    "                        (the plain flavour's size, unless --flavour gives one)\n"
    "  --flavour SPEC        a warm pool whose runner pre-imports modules before the job:\n"
    "                        name=mod1,mod2:size (repeatable; replaces the defaults\n"
    "                        python: plain, numpy=numpy:1, pandas=numpy,pandas:1,\n"
    "                        matplotlib=numpy,pandas,matplotlib:1; nodejs: plain).\n"
    "                        A job takes the cheapest flavour holding every such module\n"
    "                        it imports, or a lighter one when that pool is empty.\n"
    "                        env SANDGATE_FLAVOURS (specs separated by ';' or spaces)\n"
    "  --set IMAGE           a package set's image (built by 'make images' from\n"
    "                        flavours/): one more warm pool, on that image, as its\n"
    "                        manifest declares; jobs importing what only it installs go\n"
    "                        there (repeatable; with sets and no --flavour, the sets are\n"
    "                        all the pools)   env SANDGATE_SETS (separated by ';' or spaces)\n"
    "  --pool-memory-mb N    memory budget of all warm sandboxes together, measured per\n"
    "                        flavour (0: no budget)            env SANDGATE_POOL_MEMORY_MB\n"
    "  --pool-adaptive B     pool sizes follow the recent mix of jobs, up to each\n"
    "                        flavour's size (false)             env SANDGATE_POOL_ADAPTIVE\n"
    "  --pool-wait-ms MS     how long a job waits for a free container before the\n"
    "                        pool_busy answer (3000)                 env SANDGATE_POOL_WAIT_MS\n"
    "  --create-parallel N   sandboxes created at once by each pool's refill (2; with\n"
    "                        --sandbox-restore on, 2 per online CPU; at most the flavour's\n"
    "                        size; a pre-importing flavour boots 1 at a time)\n"
    "                        env SANDGATE_CREATE_PARALLEL\n"
    "  --runtime NAME        OCI runtime registered with dockerd (runsc) env SANDGATE_RUNTIME\n"
    "  --insecure-runtime NAME  run under a non-gVisor runtime (e.g. runc); logs a\n"
    "                        warning on every job. For development only.\n"
    "  --runsc-path PATH     the runsc whose --version is read at start (default: the\n"
    "                        path dockerd registered for --runtime)  env SANDGATE_RUNSC_PATH\n"
    "  --runsc-accept-old B  start with a runsc older than the minimum (20240729) or\n"
    "                        of unknown version, with a warning in every /healthz\n"
    "                        (false; a start is refused)     env SANDGATE_RUNSC_ACCEPT_OLD\n"
    "  --memory-mb N         memory limit, swap equal to memory (256; 32..65536 MiB;\n"
    "                        also 512m, 1g)  env SANDBOX_MAX_MEMORY (256m, 1g, 512k,\n"
    "                        or a bare number of bytes, as Docker reads it)\n"
    "  --cpus X              CPU quota in cores (1.0)                env SANDGATE_CPUS\n"
    "  --pids-limit N        pids limit (128, at least 64: runsc's own threads count)\n"
    "                        env SANDGATE_PIDS_LIMIT\n"
    "  --timeout-ms MS       default wall-clock limit per job (10000; also 10s, 1m30s)\n"
    "                        env SANDBOX_TIMEOUT (10s, 1m30s, 1500ms, or a bare\n"
    "                        number of seconds)\n"
    "  --max-timeout-ms MS   highest timeout a request may ask (max(60000, timeout);\n"
    "                        also 2m)\n"
    "                        env SANDGATE_MAX_TIMEOUT_MS\n"
    "  --max-output-bytes N  stdout/stderr cap each, default and maximum (1048576)\n"
    "                        env SANDGATE_MAX_OUTPUT_BYTES\n"
    "  --tmpfs-mb N          size of /tmp and of /workspace each (64) env SANDGATE_TMPFS_MB\n"
    "  --nofile N            open files limit in the sandbox (256)  env SANDGATE_NOFILE\n"
    "  --fsize-mb N          largest file the sandbox may write (64) env SANDGATE_FSIZE_MB\n"
    "  --max-body N          /v1/exec request body cap (16777216)   env SANDGATE_MAX_BODY\n"
    "  --max-jobs N          jobs at once, more get 503 (64)        env SANDGATE_MAX_JOBS\n"
    "  --memory-budget N     bytes this daemon's requests may hold at once (bodies,\n"
    "                        files, job lines, output); past it 503 memory_busy.\n"
    "                        0 (default): half the container's memory limit, or\n"
    "                        128 MiB outside a container       env SANDGATE_MEMORY_BUDGET\n"
    "  --max-sessions N      open sessions at once, 0: none (16)    env SANDGATE_MAX_SESSIONS\n"
    "  --session-dir DIR     records of open sessions, so a restarted executor takes them\n"
    "                        back (one directory per executor; empty: none) env\n"
    "                        SANDGATE_SESSION_DIR\n"
    "  --egress-network NAME  internal Docker network of networked sandboxes; empty: jobs\n"
    "                        asking for network are refused      env SANDGATE_EGRESS_NETWORK\n"
    "  --egress-proxy A:P    the egress proxy's IPv4 address:port on that network\n"
    "                        env SANDGATE_EGRESS_PROXY\n"
    "  --egress-runtime NAME runtime of networked sandboxes (runsc-net: runsc --network=host,\n"
    "                        see README \"Network\")             env SANDGATE_EGRESS_RUNTIME\n"
    "  --egress-dir DIR      state shared with the proxy (/run/sandgate-egress)\n"
    "                        env SANDGATE_EGRESS_DIR\n"
    "  --egress-pool-size N  warm networked sandboxes (1)      env SANDGATE_EGRESS_POOL_SIZE\n"
    "  --egress-guard-image IMAGE  an image with iptables (the egress proxy's), run once in\n"
    "                        each networked sandbox's network namespace to refuse Docker's\n"
    "                        embedded resolver there; required with --egress-network\n"
    "                        env SANDGATE_EGRESS_GUARD_IMAGE\n"
    "  --seccomp FILE|none   seccomp profile (Docker JSON) for every container, proven\n"
    "                        enforced at start by a probe job. Default: the first of\n"
    "                        " EXEC_SECCOMP_INSTALLED ", " EXEC_SECCOMP_SOURCE "\n"
    "                        none: no filter (Docker's default profile is never used: under\n"
    "                        runsc --oci-seccomp it stops every thread from starting)\n"
    "                        env SANDGATE_SECCOMP_PROFILE\n"
    "  --enable-seccomp B    false is --seccomp none; true keeps the profile\n"
    "                        env SANDBOX_ENABLE_SECCOMP\n"
    "  --sandbox-backend B   docker | runsc (docker). runsc: the executor runs each\n"
    "                        sandbox with runsc directly on an OCI bundle of the image,\n"
    "                        without dockerd in the creation path; needs host root and\n"
    "                        cgroup v1; plain pools only (no --egress-network, sessions\n"
    "                        (--max-sessions 0) or --pool-memory-mb) env SANDGATE_SANDBOX_BACKEND\n"
    "  --runsc-state-dir DIR the runsc backend's runsc root, bundles, unpacked images\n"
    "                        and checkpoints (/run/sandgate/<instance>)\n"
    "                        env SANDGATE_RUNSC_STATE_DIR\n"
    "  --sandbox-restore B   off | on (off). runsc backend, Python only (Node is refused:\n"
    "                        V8's generators cannot be re-keyed): each flavour's sandboxes\n"
    "                        are restored from a checkpoint of one warm sandbox instead of\n"
    "                        booted (a third of the CPU); sandboxes of one checkpoint share\n"
    "                        the str hash key and address layout (README, security model);\n"
    "                        a failed restore falls back to a boot env SANDGATE_SANDBOX_RESTORE\n"
    "  --restore-max-uses N  restores from one checkpoint before a new one (64, 1..100000)\n"
    "                        env SANDGATE_RESTORE_MAX_USES\n"
    "  --restore-max-age-s T seconds a checkpoint serves before a new one (300, 1..86400)\n"
    "                        env SANDGATE_RESTORE_MAX_AGE_S\n"
    "  --token-file FILE     require 'Authorization: Bearer <token>' (first line of FILE)\n"
    "                        env SANDGATE_EXECUTOR_TOKEN_FILE\n"
    "  --instance NAME       label value marking this executor's containers; orphans\n"
    "                        with it are removed at start (sandgate-L) env SANDGATE_INSTANCE\n"
    "  --docker-socket PATH  Docker Engine API socket (/var/run/docker.sock)\n"
    "                        env SANDGATE_DOCKER_SOCKET\n"
    "  --log-level L         debug | info | warn | error (info)     env SANDGATE_LOG_LEVEL\n"
    "  --test-guard-off      FOR TESTS ONLY: runners leave their in-process run-time layer\n"
    "                        (Python audit hook, Node guards) out, to prove that the kernel\n"
    "                        filter, identity, file system view and parent hold alone.\n"
    "                        No environment variable; logged at start.\n"
    "  --help                this text\n";

const char *exec_config_usage(void)
{
    return usage_text;
}

static int parse_listen(const char *s, struct exec_config *c)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return -EINVAL;
    size_t hl = (size_t)(colon - s);
    if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') { /* [::1]:9401 */
        s++;
        hl -= 2;
    }
    if (hl == 0 || hl >= sizeof(c->listen_addr))
        return -EINVAL;
    uint64_t port;
    if (sg_parse_u64(colon + 1, &port, NULL) < 0 || port > 65535)
        return -EINVAL;
    memcpy(c->listen_addr, s, hl);
    c->listen_addr[hl] = '\0';
    c->listen_port = (uint16_t)port;
    return 0;
}

/* Numbers, durations and sizes: the shared grammar (sg_parse.h), then the
 * option's range. */
static int apply_number(const struct opt *o, const char *v, bool from_env, void *field,
                        struct sg_error *perr)
{
    uint64_t n;
    int r;
    switch (o->kind) {
    case OPT_TIMEOUT: /* RAGFlow's variable counts seconds, our flag milliseconds */
        r = sg_parse_duration_ms(v, from_env ? 1000 : 1, &n, perr);
        break;
    case OPT_DURATION:
        r = sg_parse_duration_ms(v, 1, &n, perr);
        break;
    case OPT_SIZE_MB: /* RAGFlow's variable goes to Docker, which counts bytes */
        r = sg_parse_size_mib(v, from_env ? 1 : SG_MIB, &n, perr);
        break;
    default:
        r = sg_parse_u64(v, &n, perr);
    }
    if (r < 0)
        return r;
    if (n < o->min || n > o->max)
        return sg_error_set(perr, -ERANGE, "%llu is outside [%lu, %lu]", (unsigned long long)n,
                            o->min, o->max);
    if (o->kind == OPT_SIZE_T)
        *(size_t *)field = (size_t)n;
    else
        *(unsigned *)field = (unsigned)n;
    return 0;
}

static int apply_cpus(const char *v, int64_t *field)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d < 0.01 || d > 256.0)
        return -EINVAL;
    *field = (int64_t)(d * 1e9);
    return 0;
}

static int apply_str(const struct opt *o, const char *v, char *field)
{
    size_t n = strlen(v);
    if (n >= o->size || (o->min && n == 0))
        return -EINVAL;
    memcpy(field, v, n + 1);
    return 0;
}

/* Apply one value; perr says why it is wrong (may stay empty: the caller's
 * message names the flag or variable and the value). */
/* One package set image name (v[0..n)): [A-Za-z0-9._/:@-], 1..FLAVOUR_IMAGE_MAX. */
static int add_set(struct exec_config *c, const char *v, size_t n, struct sg_error *err)
{
    if (n == 0 || n > FLAVOUR_IMAGE_MAX ||
        strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@-") < n)
        return sg_error_set(err, -EINVAL,
                            "--set: an image name of 1..%u bytes of "
                            "[A-Za-z0-9._/:@-]",
                            FLAVOUR_IMAGE_MAX);
    if (c->n_sets >= FLAVOUR_MAX)
        return sg_error_set(err, -E2BIG, "--set: more than %u sets", FLAVOUR_MAX);
    memcpy(c->sets[c->n_sets], v, n);
    c->sets[c->n_sets++][n] = '\0';
    return 0;
}

static int add_set_list(struct exec_config *c, const char *v, struct sg_error *err)
{
    while (*v) {
        size_t n = strcspn(v, "; \t\n");
        if (n && add_set(c, v, n, err) < 0)
            return -EINVAL;
        v += n;
        if (*v)
            v++;
    }
    return 0;
}

static int apply(const struct opt *o, const char *v, bool from_env, struct exec_config *c,
                 struct sg_error *perr)
{
    void *field = (char *)c + o->off;
    bool b;
    switch (o->kind) {
    case OPT_LANG:
        return sg_lang_parse(v, SG_LANG_NAMES_RAGFLOW, field);
    case OPT_STR:
        return apply_str(o, v, field);
    case OPT_INSECURE:
        c->insecure_runtime = true;
        return apply_str(o, v, field);
    case OPT_LISTEN:
        return parse_listen(v, c);
    case OPT_LOGLEVEL:
        return sg_log_parse_level(v, field);
    case OPT_CPUS:
        return apply_cpus(v, field);
    case OPT_SECCOMP_ENABLE:
        if (sg_parse_bool(v, &b, perr) < 0)
            return -EINVAL;
        c->seccomp_off = !b;
        return 0;
    case OPT_SECCOMP:
        c->seccomp_off = strcmp(v, "none") == 0;
        return c->seccomp_off ? (c->seccomp_path[0] = '\0', 0) : apply_str(o, v, field);
    case OPT_BOOL:
        return sg_parse_bool(v, field, perr);
    case OPT_FLAG:
        *(bool *)field = true;
        return 0;
    case OPT_FLAVOUR:
        if (from_env)
            return flavour_set_add_list(&c->flavours, v, perr);
        if (!c->flavours_from_flags) { /* the first flag replaces the environment's list */
            memset(&c->flavours, 0, sizeof(c->flavours));
            c->flavours_from_flags = true;
        }
        return flavour_set_add(&c->flavours, v, perr);
    case OPT_SET:
        if (from_env)
            return add_set_list(c, v, perr);
        if (!c->sets_from_flags) { /* the first flag replaces the environment's list */
            c->n_sets = 0;
            c->sets_from_flags = true;
        }
        return add_set(c, v, strlen(v), perr);
    case OPT_HELP:
        return 0;
    default:
        return apply_number(o, v, from_env, field, perr);
    }
}

static void set_defaults(struct exec_config *c)
{
    memset(c, 0, sizeof(*c));
    c->language = (enum sg_lang) - 1;
    c->pool_size = 2;
    c->pool_wait_ms = 3000;
    c->create_parallel = 0; /* unset: exec_default_create_parallel at finish */
    snprintf(c->runtime, sizeof(c->runtime), "runsc");
    c->memory_mb = 256;
    c->nano_cpus = 1000000000;
    c->pids_limit = 128;
    c->timeout_ms = 10000;
    c->max_output_bytes = 1024 * 1024;
    c->tmpfs_mb = 64;
    c->nofile = 256;
    c->fsize_mb = 64;
    c->max_body = 16u * 1024 * 1024;
    c->max_jobs = 64;
    c->max_sessions = 16;
    snprintf(c->docker_socket, sizeof(c->docker_socket), "/var/run/docker.sock");
    snprintf(c->sandbox_backend, sizeof(c->sandbox_backend), "docker");
    c->restore_max_uses = EXEC_RESTORE_MAX_USES_DEFAULT;
    c->restore_max_age_s = EXEC_RESTORE_MAX_AGE_S_DEFAULT;
    c->log_level = SG_LOG_INFO;
    snprintf(c->egress_runtime, sizeof(c->egress_runtime), "runsc-net");
    snprintf(c->egress_dir, sizeof(c->egress_dir), "/run/sandgate-egress");
    c->egress_pool_size = 1;
}

unsigned exec_default_create_parallel(bool restoring, long online_cpus)
{
    if (!restoring)
        return 2;
    if (online_cpus < 1)
        online_cpus = 1;
    if (online_cpus > (long)EXEC_CREATE_PARALLEL_MAX / 2)
        return EXEC_CREATE_PARALLEL_MAX;
    return (unsigned)online_cpus * 2;
}

static long online_cpus(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/* Why a value was refused, for the messages below ("" when nothing more). */
static const char *why(const struct sg_error *perr)
{
    return perr->msg[0] ? perr->msg : "invalid or out of range";
}

static int apply_env(struct exec_config *c, struct sg_error *err)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt *o = &opts[i];
        const char *v = o->env ? getenv(o->env) : NULL;
        struct sg_error perr = {0};
        /* An empty value is unset (compose passes ${X:-} as ""), as in the
         * gateway; for strings it stays a value (an empty token file: none). */
        if (!v || (!*v && o->kind != OPT_STR))
            continue;
        if (apply(o, v, true, c, &perr) < 0)
            return sg_error_set(err, -EINVAL, "environment %s='%.64s' is invalid: %s", o->env, v,
                                why(&perr));
    }
    return 0;
}

static int apply_flags(int argc, char **argv, struct exec_config *c, struct sg_error *err)
{
    struct option lo[N_OPTS + 1];
    for (size_t i = 0; i < N_OPTS; i++)
        lo[i] = (struct option){
            opts[i].flag,
            opts[i].kind == OPT_HELP || opts[i].kind == OPT_FLAG ? no_argument : required_argument,
            NULL, (int)i};
    lo[N_OPTS] = (struct option){0};
    optind = 0; /* glibc: 0 re-initialises getopt fully (the tests parse many times) */
    opterr = 0;
    for (;;) {
        int idx = -1;
        int ch = getopt_long(argc, argv, "", lo, &idx);
        if (ch == -1)
            break;
        if (ch == '?' || ch < 0 || (size_t)ch >= N_OPTS) {
            const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
            return sg_error_set(err, -EINVAL, "unknown option or missing value: %.64s", bad);
        }
        if (opts[ch].kind == OPT_HELP)
            return 1;
        struct sg_error perr = {0};
        if (apply(&opts[ch], optarg, false, c, &perr) < 0)
            return sg_error_set(err, -EINVAL, "--%s '%.64s' is invalid: %s", opts[ch].flag, optarg,
                                why(&perr));
    }
    if (optind < argc)
        return sg_error_set(err, -EINVAL, "unexpected argument '%.64s'", argv[optind]);
    return 0;
}

static bool name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') || ('0' <= *s && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* The proxy is addressed by IP: a networked sandbox has no resolver it may use. */
static int finish_egress(struct exec_config *c, struct sg_error *err)
{
    if (!c->egress_network[0])
        return 0;
    if (!name_ok(c->egress_network) || !name_ok(c->egress_runtime))
        return sg_error_set(err, -EINVAL,
                            "--egress-network and --egress-runtime must match [A-Za-z0-9._-]+");
    char addr[64];
    const char *colon = strrchr(c->egress_proxy, ':');
    unsigned char bin[16];
    size_t n = colon ? (size_t)(colon - c->egress_proxy) : 0;
    int port = colon ? atoi(colon + 1) : 0;
    if (n > 0 && n < sizeof(addr)) {
        memcpy(addr, c->egress_proxy, n);
        addr[n] = '\0';
    }
    if (n == 0 || n >= sizeof(addr) || inet_pton(AF_INET, addr, bin) != 1 || port < 1 ||
        port > 65535)
        return sg_error_set(err, -EINVAL,
                            "--egress-proxy must be the proxy's IPv4 ADDR:PORT on the egress "
                            "network (e.g. 172.30.0.2:3128)");
    if (c->egress_dir[0] != '/')
        return sg_error_set(err, -EINVAL, "--egress-dir must be an absolute path");
    if (c->session_dir[0] && c->session_dir[0] != '/')
        return sg_error_set(err, -EINVAL, "--session-dir must be an absolute path");
    if (!c->insecure_runtime && strcmp(c->egress_runtime, "runc") == 0)
        return sg_error_set(err, -EINVAL, "--egress-runtime runc is not a sandbox");
    if (!c->egress_guard_image[0])
        return sg_error_set(err, -EINVAL,
                            "--egress-guard-image is required with --egress-network (an image "
                            "with iptables: the egress proxy's, sandgate/egress)");
    return 0;
}

/* The runsc backend serves the plain pools only: refuse what it cannot. */
static int finish_backend(struct exec_config *c, struct sg_error *err)
{
    c->backend_runsc = strcmp(c->sandbox_backend, "runsc") == 0;
    if (!c->backend_runsc && strcmp(c->sandbox_backend, "docker") != 0)
        return sg_error_set(err, -EINVAL, "--sandbox-backend must be docker or runsc");
    if (c->sandbox_restore && !c->backend_runsc)
        return sg_error_set(err, -EINVAL, "--sandbox-restore needs --sandbox-backend runsc");
    if (c->sandbox_restore && c->language != SG_LANG_PYTHON)
        return sg_error_set(err, -EINVAL,
                            "--sandbox-restore serves Python only: V8's Math.random state and "
                            "hash seed cannot be re-keyed from JavaScript, so restored Node "
                            "sandboxes would share them");
    if (!c->backend_runsc)
        return 0;
    const char *no = c->egress_network[0]  ? "--egress-network (networked pools)"
                     : c->max_sessions     ? "sessions (pass --max-sessions 0)"
                     : c->pool_memory_mb   ? "--pool-memory-mb"
                     : c->insecure_runtime ? "--insecure-runtime"
                                           : NULL;
    if (no)
        return sg_error_set(err, -EINVAL, "--sandbox-backend runsc does not serve %s", no);
    if (!c->runsc_state_dir[0])
        snprintf(c->runsc_state_dir, sizeof(c->runsc_state_dir), "/run/sandgate/%s", c->instance);
    if (c->runsc_state_dir[0] != '/' || strstr(c->runsc_state_dir, ".."))
        return sg_error_set(err, -EINVAL, "--runsc-state-dir must be an absolute path without ..");
    return 0;
}

static int finish(struct exec_config *c, struct sg_error *err)
{
    if ((int)c->language < 0)
        return sg_error_set(err, -EINVAL, "--language python|nodejs is required");
    const char *lang = sg_lang_name(c->language);
    if (!c->image[0]) {
        const char *e = getenv(c->language == SG_LANG_PYTHON ? "SANDBOX_BASE_PYTHON_IMAGE"
                                                             : "SANDBOX_BASE_NODEJS_IMAGE");
        if (e && *e && strlen(e) < sizeof(c->image))
            snprintf(c->image, sizeof(c->image), "%s", e);
        else
            snprintf(c->image, sizeof(c->image), "sandgate/sandbox-%s:latest", lang);
    }
    if (!c->listen_addr[0]) {
        snprintf(c->listen_addr, sizeof(c->listen_addr), "127.0.0.1");
        c->listen_port = c->language == SG_LANG_PYTHON ? 9401 : 9402;
    }
    if (!c->instance[0])
        snprintf(c->instance, sizeof(c->instance), "sandgate-%s", lang);
    if (!name_ok(c->instance))
        return sg_error_set(err, -EINVAL, "--instance must match [A-Za-z0-9._-]{1,63}");
    if (!name_ok(c->runtime))
        return sg_error_set(err, -EINVAL, "--runtime must match [A-Za-z0-9._-]+");
    if (!c->insecure_runtime && (strcmp(c->runtime, "runc") == 0 || strstr(c->runtime, "runc.")))
        return sg_error_set(err, -EINVAL,
                            "runtime '%s' is not a sandbox; use --insecure-runtime %s to run "
                            "without gVisor (development only)",
                            c->runtime, c->runtime);
    if (c->seccomp_off) {
        c->seccomp_path[0] = '\0';
    } else if (!c->seccomp_path[0]) {
        const char *found = access(EXEC_SECCOMP_INSTALLED, R_OK) == 0 ? EXEC_SECCOMP_INSTALLED
                            : access(EXEC_SECCOMP_SOURCE, R_OK) == 0  ? EXEC_SECCOMP_SOURCE
                                                                      : NULL;
        if (!found)
            return sg_error_set(err, -ENOENT,
                                "no seccomp profile at %s or %s: pass --seccomp FILE, or "
                                "--seccomp none to run without one",
                                EXEC_SECCOMP_INSTALLED, EXEC_SECCOMP_SOURCE);
        snprintf(c->seccomp_path, sizeof(c->seccomp_path), "%s", found);
    }
    int r = finish_egress(c, err);
    if (r < 0 || (r = finish_backend(c, err)) < 0)
        return r;
    if (!c->max_timeout_ms)
        c->max_timeout_ms = c->timeout_ms > 60000 ? c->timeout_ms : 60000;
    if (c->max_timeout_ms < c->timeout_ms)
        return sg_error_set(err, -EINVAL, "--max-timeout-ms (%u) is below --timeout-ms (%u)",
                            c->max_timeout_ms, c->timeout_ms);
    if (!c->create_parallel)
        c->create_parallel = exec_default_create_parallel(c->sandbox_restore, online_cpus());
    if (c->n_sets) /* finished once their manifests are read (pkgset_load_all) */
        return 0;
    if (c->flavours.n == 0)
        flavour_set_defaults(&c->flavours, c->language == SG_LANG_PYTHON);
    return flavour_set_finish(&c->flavours, c->pool_size, err);
}

int exec_config_parse(int argc, char **argv, struct exec_config *ret, struct sg_error *err)
{
    set_defaults(ret);
    int r = apply_env(ret, err);
    if (r < 0)
        return r;
    r = apply_flags(argc, argv, ret, err);
    if (r != 0)
        return r;
    return finish(ret, err);
}
