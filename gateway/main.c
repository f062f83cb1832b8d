/* sandgate - the gateway daemon. See README.md (Gateway) and `sandgate --help`. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_config.h"
#include "gw_server.h"
#include "log.h"
#include "membudget.h"

static void usage(FILE *out)
{
    fprintf(out, "Usage: sandgate [-c FILE] [-t]\n"
                 "\n"
                 "The sandgate gateway: validates each submission, checks it against a policy\n"
                 "and forwards accepted jobs to the per-language sandgate-executor.\n"
                 "\n"
                 "Options:\n"
                 "  -c, --config FILE  JSON configuration file (keys below)\n"
                 "  -t, --test         check the configuration, policies, tokens file, executor\n"
                 "                     token and audit log, print the result, exit 0 or 1\n"
                 "  -h, --help         this help\n"
                 "\n"
                 "Endpoints: POST /run (RAGFlow-compatible), POST /v1/run, POST /v1/analyze,\n"
                 "GET /healthz, GET /readyz, GET /metrics, GET /v1/policies, GET /v1/whoami,\n"
                 "GET /v1/runtimes, GET /v1/policies/{name}, GET /v1/audit (with audit_index;\n"
                 "rebuild it with sandgate-audit), GET /console/ (with console_dir).\n"
                 "Auth: with tokens_file set, send Authorization: Bearer <token> or\n"
                 "X-Sandbox-Token: <token>, or send no token from a network the tokens file\n"
                 "binds to a tenant (\"networks\": [\"172.19.0.0/16\"]; weaker than a token).\n"
                 "Without tokens_file the gateway only listens on loopback.\n"
                 "Signals: SIGHUP reloads policies and tokens (a bad file keeps the old set)\n"
                 "and reopens the audit log; SIGTERM/SIGINT drain in-flight requests and exit.\n"
                 "\n");
    gw_config_print_help(out);
}

static int load_config(const char *path, struct gw_config *cfg, struct sg_error *err)
{
    gw_config_defaults(cfg);
    int r = 0;
    if (path && (r = gw_config_load_file(cfg, path, err)) < 0)
        return r;
    if ((r = gw_config_apply_env(cfg, err)) < 0)
        return r;
    return gw_config_validate(cfg, err);
}

static int serve(struct gw_server *s, const sigset_t *set)
{
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig == SIGHUP) {
            struct sg_error err = {0};
            if (gw_server_reload(s, &err) == 0)
                sg_log(SG_LOG_INFO, "reload_ok", "generation=%u", s->rules.current->generation);
            else
                sg_log(SG_LOG_ERROR, "reload_failed", "error=\"%s\" kept=previous", err.msg);
            continue;
        }
        sg_log(SG_LOG_INFO, "draining", "signal=%d inflight=%u", sig, atomic_load(&s->inflight));
        unsigned left = gw_server_drain(s);
        sg_log(left ? SG_LOG_WARN : SG_LOG_INFO, "stopped", "unfinished=%u", left);
        return 0;
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"test", no_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    sg_membudget_tune_allocator();
    const char *config_path = NULL;
    int test_only = 0, c;
    while ((c = getopt_long(argc, argv, "c:th", opts, NULL)) != -1) {
        if (c == 'c')
            config_path = optarg;
        else if (c == 't')
            test_only = 1;
        else if (c == 'h')
            return usage(stdout), 0;
        else
            return usage(stderr), 2;
    }
    if (optind != argc)
        return usage(stderr), 2;
    struct gw_config cfg;
    struct sg_error err = {0};
    if (load_config(config_path, &cfg, &err) < 0) {
        fprintf(stderr, "sandgate: configuration: %s\n", err.msg);
        return 1;
    }
    sg_log_set_level(cfg.log_level);
    if (test_only) {
        if (gw_server_check(&cfg, &err) < 0) {
            fprintf(stderr, "sandgate: check failed: %s\n", err.msg);
            return 1;
        }
        printf("sandgate: configuration, policies and tokens are valid\n");
        return 0;
    }
    /* Signals go to the sigwait() loop only; set before any thread starts. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct gw_server *s = NULL;
    if (gw_server_new(&cfg, &s, &err) < 0 || gw_server_listen(s, &err) < 0) {
        sg_log(SG_LOG_ERROR, "start_failed", "error=\"%s\"", err.msg);
        gw_server_free(s);
        return 1;
    }
    sg_log(SG_LOG_INFO, "listening", "addr=%s port=%u auth=%s policies=%zu default_policy=%s",
           cfg.listen, gw_server_port(s), cfg.tokens_file[0] ? "tokens" : "none",
           s->rules.current->policies->count, cfg.default_policy);
    if (!cfg.tokens_file[0])
        sg_log(SG_LOG_WARN, "no_auth",
               "msg=\"no tokens_file: no authentication, listening on "
               "loopback only\"");
    int rc = serve(s, &set);
    gw_server_free(s);
    return rc;
}
