/* sandgate-executor - runs accepted jobs in single-use gVisor sandboxes from a
 * warm pool. See executors/PROTOCOL.md and `sandgate-executor --help`. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "exec_config.h"
#include "docker.h"
#include "httpsrv.h"
#include "membudget.h"
#include "log.h"
#include "metrics.h"
#include "pool.h"
#include "pools.h"
#include "pkgset.h"
#include "runtime_info.h"
#include "runsc_info.h"
#include "sandbox.h"
#include "sandbox_runsc.h"
#include "seccomp.h"
#include "sessions.h"
#include "sessions_store.h"
#include "sg_token.h"
#include "egress.h"
#include "exec_server.h"

#define MAIN_DRAIN_EXTRA_MS 5000

static int fail(const char *event, const struct sg_error *e)
{
    sg_log(SG_LOG_ERROR, event, "error=\"%s\"", e->msg);
    fprintf(stderr, "sandgate-executor: %s\n", e->msg);
    return 1;
}

/* Everything that must hold before we serve: dockerd reachable, the runtime
 * registered, the image present. */
static int check_engine(struct docker_client *dc, struct exec_config *cfg, struct sg_error *err)
{
    bool found = false;
    if (docker_ping(dc, 5000, err) < 0)
        return sg_error_set(err, -EHOSTDOWN,
                            "dockerd is not reachable at %s (%s). Start it (e.g. "
                            "'images/host-setup.sh --fix') or pass --docker-socket",
                            cfg->docker_socket, err->msg);
    if (docker_runtime_registered(dc, cfg->runtime, &found, err) < 0)
        return err->code;
    if (!found)
        return sg_error_set(
            err, -ENOENT,
            "runtime '%s' is not registered with dockerd. Register it in "
            "/etc/docker/daemon.json: {\"runtimes\":{\"runsc\":{\"path\":\"/usr/bin/runsc\","
            "\"runtimeArgs\":[\"--network=none\",\"--oci-seccomp\"]}}} then 'kill -HUP "
            "$(pidof dockerd)' (or run 'images/host-setup.sh --fix')",
            cfg->runtime);
    if (cfg->egress_network[0] && !cfg->insecure_runtime &&
        (docker_runtime_registered(dc, cfg->egress_runtime, &found, err) < 0 || !found))
        return sg_error_set(err, -ENOENT,
                            "runtime '%s' for networked sandboxes is not registered with dockerd "
                            "(runsc with --network=host; 'images/host-setup.sh --fix' adds it)",
                            cfg->egress_runtime);
    if (docker_image_exists(dc, cfg->image, &cfg->identity_split, err) < 0)
        return sg_error_set(err, -ENOENT,
                            "sandbox image %s is not available (%s); build it "
                            "with 'make images'",
                            cfg->image, err->msg);
    return 0;
}

/* The gVisor (runsc_info.h) and the engine (check_engine records whether the
 * image asks for the identity split). With --runsc-path an old runsc is
 * refused before dockerd is asked; else its registration names the binary. */
static int start_checks(struct exec_config *cfg, struct docker_client **dc, struct runsc_info *ri,
                        struct sg_error *err)
{
    int r = runsc_info_load(NULL, cfg, ri, err);
    if (r == 0 && (r = docker_client_new(cfg->docker_socket, dc, err)) == 0 &&
        (r = check_engine(*dc, cfg, err)) == 0)
        r = runsc_info_load(*dc, cfg, ri, err);
    if (r == 0)
        sg_log(SG_LOG_INFO, "runsc", "runtime=%s version=%s platform=%s path=%s", cfg->runtime,
               ri->version[0] ? ri->version : "-", ri->platform[0] ? ri->platform : "-",
               ri->path[0] ? ri->path : "-");
    return r;
}

/* --sandbox-backend runsc: the state directory, orphans of an earlier life
 * deleted, the image unpacked; from here on sandboxes start without dockerd. */
static int start_runsc(const struct exec_config *cfg, struct docker_client *dc,
                       const struct runsc_info *ri, struct sandbox_runsc **ret,
                       struct sg_error *err)
{
    const struct sandbox_runsc_config rc = {
        ri->path, ri->platform,         cfg->runsc_state_dir,  cfg->instance,
        NULL,     cfg->sandbox_restore, cfg->restore_max_uses, cfg->restore_max_age_s * 1000.0};
    unsigned reaped = 0;
    if (!cfg->backend_runsc)
        return 0;
    int r = sandbox_runsc_new(&rc, dc, ret, &reaped, err);
    if (r == 0 && (r = sandbox_runsc_prepare(*ret, cfg->image, err)) < 0) {
        sandbox_runsc_free(*ret);
        *ret = NULL;
    }
    if (r < 0)
        return r;
    sandbox_use_runsc(*ret);
    sg_log(SG_LOG_INFO, "sandbox_backend",
           "backend=runsc state=%s platform=%s reaped=%u restore=%s max_uses=%u max_age_s=%u",
           cfg->runsc_state_dir, ri->platform[0] ? ri->platform : "default", reaped,
           cfg->sandbox_restore ? "on" : "off", cfg->restore_max_uses, cfg->restore_max_age_s);
    return 0;
}

/* The image's runtime listing, or NULL (logged): jobs run either way. */
static const char *load_runtime(struct docker_client *dc, const struct exec_config *cfg, char **ret)
{
    struct sg_error e = {0};
    if (runtime_info_read(dc, cfg, ret, &e) < 0) {
        sg_log(SG_LOG_WARN, "runtime_unknown", "image=%s error=\"%s\"", cfg->image, e.msg);
        return NULL;
    }
    sg_log(SG_LOG_INFO, "runtime_listed", "image=%s bytes=%zu", cfg->image, strlen(*ret));
    return *ret;
}

/* Load the profile and prove it is enforced. *ret_json stays NULL without one. */
static int setup_seccomp(struct docker_client *dc, const struct exec_config *cfg, char **ret_json,
                         struct sg_error *err)
{
    *ret_json = NULL;
    if (!cfg->seccomp_path[0]) {
        sg_log(SG_LOG_WARN, "seccomp_disabled", "msg=\"sandboxes run without a seccomp filter\"");
        return 0;
    }
    char *probe = NULL;
    int r = seccomp_load(cfg->seccomp_path, ret_json, err);
    if (r == 0)
        r = seccomp_probe_profile(*ret_json, &probe, err);
    if (r == 0)
        r = seccomp_probe(dc, cfg, probe, err);
    free(probe);
    if (r == 0)
        sg_log(SG_LOG_INFO, "seccomp_enforced", "profile=%s runtime=%s", cfg->seccomp_path,
               cfg->runtime);
    return r;
}

static void drain(struct exec_server *srv, unsigned max_ms)
{
    atomic_store(&srv->draining, true);
    double deadline = attach_now_ms() + max_ms;
    int n;
    while ((n = atomic_load(&srv->in_flight)) > 0 && attach_now_ms() < deadline)
        usleep(20000);
    sg_log(SG_LOG_INFO, "drained", "in_flight=%d", n);
}

/* The networked pool (egress.h), when --egress-network is set: its own
 * create spec, label and size; stale allow-lists of an earlier run removed. */
static int start_net_pool(const struct exec_config *cfg, struct docker_client *dc,
                          const char *base_body, struct metrics *m, struct pool **ret,
                          struct sg_error *err)
{
    *ret = NULL;
    if (!cfg->egress_network[0])
        return 0;
    char *body = NULL, label[sizeof(cfg->instance) + sizeof(EXEC_EGRESS_POOL_NAME) + 1];
    snprintf(label, sizeof(label), "%s.%s", cfg->instance, EXEC_EGRESS_POOL_NAME);
    int r = egress_reset(cfg, err);
    if (r == 0 && (r = egress_create_body(cfg, base_body, &body, err)) == 0) {
        struct pool_config pc = {.dc = dc,
                                 .create_body = body,
                                 .instance = cfg->instance,
                                 .label = label,
                                 .name = EXEC_EGRESS_POOL_NAME,
                                 .target = cfg->egress_pool_size,
                                 .parallel = 1,
                                 .metrics = m,
                                 /* warm means the runner's egress set-up is done */
                                 .wait_ready = true,
                                 .network = cfg->egress_network,
                                 /* Docker's resolver refused in its namespace */
                                 .prepare = egress_close_resolver,
                                 .prepare_ctx = cfg};
        r = pool_new(&pc, ret, err);
    }
    free(body);
    if (r == 0)
        sg_log(SG_LOG_INFO, "egress", "network=%s proxy=%s runtime=%s pool=%u dir=%s",
               cfg->egress_network, cfg->egress_proxy, cfg->egress_runtime, cfg->egress_pool_size,
               cfg->egress_dir);
    return r;
}

/* The session records an earlier life left (cfg->session_dir). */
struct kept_sessions {
    struct sstore_record *recs;
    size_t n;
};

/* Read the records, before the start-up reap spares their containers. */
static int load_kept(const struct exec_config *cfg, struct kept_sessions *ks,
                     char (**ret_keep)[DOCKER_ID_LEN + 1], struct sg_error *err)
{
    *ret_keep = NULL;
    if (!cfg->session_dir[0])
        return 0;
    int r = sstore_load(cfg->session_dir, &ks->recs, &ks->n, err);
    if (r < 0 || ks->n == 0)
        return r;
    *ret_keep = calloc(ks->n, sizeof(**ret_keep));
    if (!*ret_keep)
        return sg_error_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < ks->n; i++)
        memcpy((*ret_keep)[i], ks->recs[i].container, sizeof((*ret_keep)[i]));
    return 0;
}

/* Remove the containers an earlier life left, except those of the session
 * records it left (read into ks). */
static int reap_orphans(const struct exec_config *cfg, struct docker_client *dc,
                        struct kept_sessions *ks, struct sg_error *err)
{
    char(*keep)[DOCKER_ID_LEN + 1] = NULL;
    unsigned reaped = 0;
    int r = load_kept(cfg, ks, &keep, err);
    if (r == 0)
        r = pool_reap(dc, cfg->instance, (const char(*)[DOCKER_ID_LEN + 1]) keep, ks->n, &reaped,
                      err);
    free(keep);
    if (r == 0)
        sg_log(SG_LOG_INFO, "reaped_orphans", "instance=%s count=%u kept=%zu", cfg->instance,
               reaped, ks->n);
    return r;
}

/* The session table over the pools, with the sessions of ks taken back;
 * srv answers /v1/sessions from then on. */
static int open_sessions(struct exec_server *srv, struct pool_set *pools,
                         const struct kept_sessions *ks, struct sessions **ret,
                         struct sg_error *err)
{
    const struct sessions_config sc = {
        srv->dc, pools, srv->metrics, srv->cfg, srv->cfg->max_sessions, srv->budget};
    int r = sessions_new(&sc, ret, err);
    srv->sessions = r == 0 ? *ret : NULL;
    struct sessions_recovery rec;
    if (r == 0 && ks->n)
        sessions_recover(*ret, ks->recs, ks->n, &rec);
    return r;
}

static void log_listening(const struct exec_config *cfg, struct sg_httpsrv *http)
{
    sg_log(SG_LOG_INFO, "listening",
           "addr=%s port=%u language=%s runtime=%s pool=%u flavours=%u pool_memory_mb=%u "
           "instance=%s",
           cfg->listen_addr, (unsigned)sg_httpsrv_port(http), sg_lang_name(cfg->language),
           cfg->runtime, cfg->pool_size, cfg->flavours.n, cfg->pool_memory_mb, cfg->instance);
    if (cfg->insecure_runtime)
        sg_log(SG_LOG_WARN, "insecure_runtime", "runtime=%s msg=\"jobs run WITHOUT gVisor\"",
               cfg->runtime);
    if (cfg->identity_split)
        sg_log(SG_LOG_INFO, "identity_split",
               "image=%s msg=\"runner as uid 0 with SETUID,SETGID,SETPCAP,SYS_ADMIN,KILL; "
               "jobs as 65534 in their own view\"",
               cfg->image);
    if (cfg->test_guard_off)
        sg_log(SG_LOG_WARN, "test_guard_off",
               "msg=\"tests only: runners leave their in-process run-time layer out\"");
}

/* Until SIGTERM or SIGINT (main() blocks both in every thread). */
static int wait_for_stop(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    sigwait(&set, &sig);
    return sig;
}

/* The daemon's memory budget (membudget.h): --memory-budget within what
 * the container's limit allows, else half that limit, else the default. */
static int choose_budget(const struct exec_config *cfg, struct sg_membudget *ret,
                         struct sg_error *err)
{
    uint64_t limit = 0, bytes = 0;
    const char *source = NULL;
    if (sg_membudget_cgroup_limit("/sys/fs/cgroup", NULL, &limit) < 0)
        limit = 0;
    int r = sg_membudget_choose(cfg->memory_budget, limit, EXEC_MEMORY_BUDGET_DEFAULT,
                                "--memory-budget", &bytes, &source, err);
    if (r < 0)
        return r;
    sg_membudget_init(ret, (size_t)bytes);
    sg_log(SG_LOG_INFO, "memory_budget", "bytes=%llu source=%s container_limit=%llu",
           (unsigned long long)bytes, source, (unsigned long long)limit);
    return 0;
}

static int serve(const struct exec_config *cfg, struct docker_client *dc, const char *body,
                 const char *token, const char *runtime, const struct runsc_info *ri,
                 const struct kept_sessions *ks, struct sg_error *err)
{
    struct metrics *m = metrics_new();
    struct pool_set *pools = NULL;
    struct sessions *sessions = NULL;
    struct sg_httpsrv *http = NULL;
    struct exec_server srv = {.cfg = cfg, .dc = dc, .metrics = m, .runsc = ri};
    snprintf(srv.token, sizeof(srv.token), "%s", token);
    struct pool_set_config pc = {dc,
                                 body,
                                 cfg->instance,
                                 &cfg->flavours,
                                 cfg->create_parallel,
                                 cfg->pool_memory_mb,
                                 cfg->pool_adaptive,
                                 true, /* both runners send the ready line */
                                 m,
                                 cfg->sandbox_restore};
    /* max_jobs workers and no queue: the next job is refused at once (503), and
     * health checks (GETs, answered on the event threads) always get through. */
    struct sg_membudget budget;
    sg_membudget_init(&budget, 0);
    srv.budget = &budget;
    struct sg_httpsrv_config hc = {.bind_addr = cfg->listen_addr,
                                   .port = cfg->listen_port,
                                   .max_body = cfg->max_body,
                                   .workers = cfg->max_jobs,
                                   .timeout_s = (cfg->max_timeout_ms + 60000) / 1000,
                                   .budget = &budget};
    const struct sg_http_handlers hh = {.handle = exec_server_handle,
                                        .head = exec_server_head,
                                        .get_on_worker = exec_server_get_on_worker};
    int r = choose_budget(cfg, &budget, err);
    if (r < 0)
        goto out;
    if (!m || (r = exec_jobs_new(cfg->max_jobs, &srv.jobs)) < 0) {
        r = sg_error_set(err, r < 0 ? r : -ENOMEM, "cannot allocate the job table");
        goto out;
    }
    if ((r = pool_set_new(&pc, &pools, err)) < 0 ||
        (r = start_net_pool(cfg, dc, body, m, &srv.net_pool, err)) < 0)
        goto out;
    srv.pools = pools;
    if ((r = open_sessions(&srv, pools, ks, &sessions, err)) < 0)
        goto out;
    srv.runtime_json = runtime;
    if ((r = sg_httpsrv_start(&hc, &hh, &srv, &http, err)) < 0)
        goto out;
    log_listening(cfg, http);
    sg_log(SG_LOG_INFO, "stopping", "signal=%d", wait_for_stop());
    drain(&srv, cfg->max_timeout_ms + MAIN_DRAIN_EXTRA_MS);
    r = 0;
out:
    sg_httpsrv_stop(http);
    sessions_free(sessions); /* their sandboxes go back to the pools for teardown */
    pool_free(srv.net_pool);
    pool_set_free(pools); /* tears down idle sandboxes, drains the teardown queues */
    exec_jobs_free(srv.jobs);
    metrics_free(m);
    sg_log(SG_LOG_INFO, "stopped", NULL);
    return r;
}

/* Signals are taken by sigwait() in serve(); every thread inherits the mask. */
static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The command line into cfg: -1 to go on, else the exit status (--help: 0,
 * a bad argument: 2, said on stderr). */
static int parse_args(int argc, char **argv, struct exec_config *cfg, struct sg_error *err)
{
    int r = exec_config_parse(argc, argv, cfg, err);
    if (r == 1) {
        fputs(exec_config_usage(), stdout);
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "sandgate-executor: %s\n(see --help)\n", err->msg);
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    sg_membudget_tune_allocator();
    struct exec_config cfg;
    struct sg_error err = {0};
    int parsed = parse_args(argc, argv, &cfg, &err);
    if (parsed >= 0)
        return parsed;
    sg_log_set_level(cfg.log_level);
    block_signals();

    char token[SG_TOKEN_MAX] = "";
    if (cfg.token_file[0] && sg_token_file_read(cfg.token_file, token, &err) < 0)
        return fail("token_file_invalid", &err);
    struct docker_client *dc = NULL;
    char *seccomp = NULL, *body = NULL, *runtime = NULL;
    int rc = 1;
    struct runsc_info ri = {0};
    struct kept_sessions ks = {0};
    struct sandbox_runsc *rs = NULL; /* --sandbox-backend runsc */
    if (start_checks(&cfg, &dc, &ri, &err) < 0) {
        rc = fail(err.code == -EPERM ? "runsc_refused" : "engine_check_failed", &err);
        goto out;
    }
    if (reap_orphans(&cfg, dc, &ks, &err) < 0) {
        rc = fail("reap_failed", &err);
        goto out;
    }
    if (start_runsc(&cfg, dc, &ri, &rs, &err) < 0) {
        rc = fail("sandbox_backend_failed", &err);
        goto out;
    }
    if (setup_seccomp(dc, &cfg, &seccomp, &err) < 0) {
        rc = fail("seccomp_check_failed", &err);
        goto out;
    }
    load_runtime(dc, &cfg, &runtime);
    if (pkgset_load_all(dc, &cfg, &runtime, &err) < 0) {
        rc = fail("package_set_failed", &err);
        goto out;
    }
    if (sandbox_create_body(&cfg, seccomp, NULL, &body, &err) < 0 ||
        serve(&cfg, dc, body, token, runtime, &ri, &ks, &err) < 0) {
        rc = fail("serve_failed", &err);
        goto out;
    }
    rc = 0;
out:
    sstore_records_free(ks.recs, ks.n);
    free(body);
    free(runtime);
    free(seccomp);
    sandbox_use_runsc(NULL);
    sandbox_runsc_free(rs); /* after serve(): every sandbox is gone */
    docker_client_free(dc);
    return rc;
}
