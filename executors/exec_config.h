/* exec_config.h - sandgate-executor configuration: defaults, environment, flags.
 *
 * Precedence: built-in secure defaults, then environment variables (RAGFlow's
 * names where they mean the same thing), then command-line flags. Every value
 * is validated against a named range; anything out of range is an error, never
 * silently adjusted. The struct holds no heap memory.
 */
#ifndef SG_EXEC_CONFIG_H
#define SG_EXEC_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flavour.h"
#include "log.h"
#include "sg_error.h"
#include "sg_lang.h"
#include "sg_parse.h"

#define EXEC_NAME_MAX 128

/* Ranges every value is checked against (timeout and memory: SG_TIMEOUT_MS_*
 * and SG_MEMORY_MB_* in sg_parse.h, the gateway's too). */
#define EXEC_POOL_SIZE_MAX 64u
#define EXEC_POOL_WAIT_MS_MAX 600000u
#define EXEC_CREATE_PARALLEL_MAX 16u
#define EXEC_PIDS_MIN 64u /* runsc's own threads count: 32 cannot start a sandbox */
#define EXEC_PIDS_MAX 65536u
#define EXEC_OUTPUT_MIN 1024u
#define EXEC_OUTPUT_MAX (64u * 1024u * 1024u)
#define EXEC_TMPFS_MB_MIN 1u
#define EXEC_TMPFS_MB_MAX 16384u
#define EXEC_MAX_BODY_MIN 4096u
#define EXEC_MAX_BODY_MAX (256u * 1024u * 1024u)
#define EXEC_MAX_JOBS_MAX 1024u
#define EXEC_MAX_SESSIONS_MAX 1024u
/* --sandbox-restore: a new checkpoint after this many restores or seconds. */
#define EXEC_RESTORE_MAX_USES_DEFAULT 64u
#define EXEC_RESTORE_MAX_USES_MAX 100000u
#define EXEC_RESTORE_MAX_AGE_S_DEFAULT 300u
#define EXEC_RESTORE_MAX_AGE_S_MAX 86400u
/* The daemon's memory budget when no container limit applies and none is
 * configured (membudget.h: otherwise half the container's limit). */
#define EXEC_MEMORY_BUDGET_DEFAULT (128u << 20)
#define EXEC_POOL_MEMORY_MB_MAX (1024u * 1024u) /* 1 TiB: any real budget fits */

struct exec_config {
    enum sg_lang language;
    char image[EXEC_NAME_MAX];
    char listen_addr[64];
    uint16_t listen_port;
    unsigned pool_size;          /* the plain flavour's size unless it names one */
    struct flavour_set flavours; /* warm pools by pre-imported modules (flavour.h) */
    bool flavours_from_flags;    /* a --flavour replaced the environment's list */
    /* package set images (--set, SANDGATE_SETS): their flavours are added to
     * `flavours` at start (pkgset_load_all) */
    char sets[FLAVOUR_MAX][FLAVOUR_IMAGE_MAX + 1];
    unsigned n_sets;
    bool sets_from_flags;    /* a --set replaced the environment's list */
    unsigned pool_memory_mb; /* budget of all warm sandboxes; 0: none */
    bool pool_adaptive;      /* sizes follow the recent mix of jobs */
    unsigned pool_wait_ms;
    unsigned create_parallel; /* containers created at once by the refill */
    char runtime[EXEC_NAME_MAX];
    bool insecure_runtime;      /* runtime chosen with --insecure-runtime (runc) */
    char runsc_path[PATH_MAX];  /* runsc read at start; empty: dockerd's registration */
    bool runsc_accept_old;      /* an old or unknown runsc starts, with a warning */
    char sandbox_backend[16];   /* "docker" (default) or "runsc" (sandbox_runsc.h) */
    bool backend_runsc;         /* sandbox_backend is "runsc" */
    char runsc_state_dir[1024]; /* the runsc backend's state (default /run/sandgate/<instance>) */
    bool sandbox_restore;       /* runsc backend: restore pool sandboxes from a checkpoint */
    unsigned restore_max_uses;  /* restores from one checkpoint before a new one */
    unsigned restore_max_age_s; /* age of a checkpoint before a new one */
    unsigned memory_mb;         /* container memory (and memory+swap) limit */
    int64_t nano_cpus;          /* CPU quota, 1e9 = one core */
    unsigned pids_limit;
    unsigned timeout_ms;     /* default wall-clock limit of a job */
    unsigned max_timeout_ms; /* requests above this are clamped */
    size_t max_output_bytes; /* default and maximum for stdout/stderr each */
    unsigned tmpfs_mb;       /* size of /tmp and of /workspace each */
    unsigned nofile;         /* RLIMIT_NOFILE inside the sandbox */
    unsigned fsize_mb;       /* RLIMIT_FSIZE inside the sandbox */
    size_t max_body;         /* /v1/exec request body cap */
    unsigned max_jobs;       /* jobs at once; the next is refused (503), /healthz says it */
    size_t memory_budget;    /* the daemon's own request memory (membudget.h); 0: derived */
    unsigned max_sessions;   /* open sessions at once (sessions.h) */
    /* Records of open sessions (sessions_store.h); "": a restart loses them. */
    char session_dir[1024];
    char seccomp_path[PATH_MAX]; /* the profile; empty only when seccomp_off */
    bool seccomp_off;            /* --seccomp none: no filter at all (unconfined) */
    char token_file[PATH_MAX];   /* empty: no token required */
    char instance[64];           /* label value marking our containers */
    char docker_socket[PATH_MAX];
    enum sg_log_level log_level;
    /* Networked jobs (README, "Network"): empty egress_network = none. */
    char egress_network[EXEC_NAME_MAX];     /* the internal Docker network of the sandboxes */
    char egress_proxy[64];                  /* the proxy's ADDR:PORT on that network */
    char egress_runtime[EXEC_NAME_MAX];     /* runtime of networked sandboxes (runsc-net) */
    char egress_dir[1024];                  /* state shared with the proxy (allow/, decisions/) */
    unsigned egress_pool_size;              /* warm networked sandboxes */
    char egress_guard_image[EXEC_NAME_MAX]; /* runs iptables in each networked sandbox's network
                                               namespace (egress.h); required with a network */
    /* --test-guard-off (tests only, no environment variable): every sandbox
     * gets SANDGATE_TEST_GUARD_OFF=1, and its runner leaves the in-process
     * run-time layer out (the kernel filter, identity, view and parent stay).
     * Nothing a tenant sends reaches it. */
    bool test_guard_off;
    /* Not a flag: the image's label org.sandgate.identity=split, read at
     * start (sandbox.h: the container's spec for such an image). */
    bool identity_split;
};

/* Where the default profile is looked for, in order (installed, source tree). */
#define EXEC_SECCOMP_INSTALLED "/usr/share/sandgate/seccomp/sandbox.json"
#define EXEC_SECCOMP_SOURCE "images/seccomp/sandbox.json"
#define EXEC_LABEL_KEY "org.sandgate.executor"
#define EXEC_LABEL_LANG "org.sandgate.language"
#define EXEC_LABEL_POOL "org.sandgate.pool" /* <instance>.<flavour>: one warm pool's */
#define EXEC_EGRESS_POOL_NAME "egress"      /* the networked pool's flavour name */
#define EXEC_TEST_GUARD_OFF_ENV "SANDGATE_TEST_GUARD_OFF=1" /* --test-guard-off */

/* Parse argv (and the environment) into *ret. Returns 0, 1 when --help was
 * asked for (the caller prints exec_config_usage()), or -EINVAL with a message
 * naming the offending flag or variable. */
int exec_config_parse(int argc, char **argv, struct exec_config *ret, struct sg_error *err);

/* --create-parallel when not given: 2 launches at once per pool; restoring,
 * 2 per online CPU (2..EXEC_CREATE_PARALLEL_MAX). A restore is mostly
 * waiting (processes started, the checkpoint read, the sentry's hand-shakes)
 * and ~0.2 CPU-s, so two at a time leave the CPUs partly idle while the pool
 * empties; a boot is CPU-bound and two already fill this host's. */
unsigned exec_default_create_parallel(bool restoring, long online_cpus);

/* The --help text (static string). */
const char *exec_config_usage(void);

#endif
