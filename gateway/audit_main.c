/* sandgate-audit - rebuild or catch up the audit index (gw_audit_index.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gw_audit_index.h"
#include "gw_config.h"

#define ROTATED_MAX 64

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: sandgate-audit [-c FILE] [--db PATH] [--log PATH] COMMAND [ROTATED_LOG...]\n"
            "\n"
            "The SQLite index of the gateway's JSON-lines audit log, which GET /v1/audit and\n"
            "the console read. The gateway keeps it up to date itself (audit_index); this\n"
            "command rebuilds it from the log at any time, the gateway running or not.\n"
            "\n"
            "Commands:\n"
            "  rebuild [ROTATED_LOG...]  empty the index, index the rotated logs given (oldest\n"
            "                            first), then the live log; the gateway continues from\n"
            "                            where the rebuild stopped\n"
            "  sync                      index what the live log holds past the stored position\n"
            "  retain                    delete what audit_index_retention_days and\n"
            "                            audit_index_max_rows no longer keep\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE  the gateway's configuration (audit_index, audit_log, ...)\n"
            "      --db PATH      the index (default: the configuration's audit_index)\n"
            "      --log PATH     the live audit log (default: the configuration's audit_log)\n"
            "  -h, --help         this help\n"
            "\n"
            "Prints the lines read and the time taken; exits 0, 1 on an error, 2 on usage.\n");
}

static int load_config(const char *path, struct gw_config *cfg, struct sg_error *err)
{
    gw_config_defaults(cfg);
    int r = 0;
    if (path && (r = gw_config_load_file(cfg, path, err)) < 0)
        return r;
    return gw_config_apply_env(cfg, err);
}

static int run(struct gw_audit_index *x, const char *cmd, char **rotated, int n, const char *log,
               struct sg_error *err)
{
    uint64_t lines = 0;
    const char *logs[ROTATED_MAX + 1];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r;
    if (strcmp(cmd, "rebuild") == 0) {
        for (int i = 0; i < n; i++)
            logs[i] = rotated[i];
        logs[n] = log;
        r = gw_audit_index_rebuild(x, logs, (size_t)n + 1, &lines, err);
        r = r == 0 ? gw_audit_index_retain(x, err) : r;
    } else if (strcmp(cmd, "sync") == 0) {
        r = gw_audit_index_sync(x, &lines, err);
    } else {
        r = gw_audit_index_retain(x, err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct gw_audit_index_stats st;
    gw_audit_index_get_stats(x, &st);
    if (r == 0)
        printf("sandgate-audit: %s: %llu lines read (%llu indexed, %llu skipped) in %.3f s\n", cmd,
               (unsigned long long)lines, (unsigned long long)st.indexed,
               (unsigned long long)st.skipped,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return r;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"db", required_argument, NULL, 'd'},
                                         {"log", required_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *config = NULL, *db = NULL, *log = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        if (c == 'c')
            config = optarg;
        else if (c == 'd')
            db = optarg;
        else if (c == 'l')
            log = optarg;
        else if (c == 'h')
            return usage(stdout), 0;
        else
            return usage(stderr), 2;
    }
    const char *cmd = optind < argc ? argv[optind] : "";
    int rotated = argc - optind - 1;
    if ((strcmp(cmd, "rebuild") != 0 && rotated > 0) || rotated > ROTATED_MAX ||
        (strcmp(cmd, "rebuild") && strcmp(cmd, "sync") && strcmp(cmd, "retain")))
        return usage(stderr), 2;
    struct gw_config cfg;
    struct sg_error err = {0};
    if (load_config(config, &cfg, &err) < 0) {
        fprintf(stderr, "sandgate-audit: configuration: %s\n", err.msg);
        return 1;
    }
    db = db ? db : cfg.audit_index;
    log = log ? log : cfg.audit_log;
    if (!*db || !*log || strcmp(log, "-") == 0) {
        fprintf(stderr, "sandgate-audit: need an index (--db or audit_index) and a log file "
                        "(--log or audit_log)\n");
        return 2;
    }
    struct gw_audit_index_config ic = {db, log, cfg.audit_index_retention_days,
                                       cfg.audit_index_max_rows, 0};
    struct gw_audit_index *x = NULL;
    int r = gw_audit_index_open(&ic, 0, &x, &err);
    if (r == 0)
        r = run(x, cmd, argv + optind + 1, rotated, log, &err);
    gw_audit_index_close(x);
    if (r < 0)
        fprintf(stderr, "sandgate-audit: %s\n", err.msg);
    return r < 0 ? 1 : 0;
}
