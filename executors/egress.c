#include "egress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "readfile.h"

int egress_create_body(const struct exec_config *cfg, const char *base_body, char **ret_body,
                       struct sg_error *err)
{
    json_t *spec = json_loads(base_body, 0, NULL);
    json_t *hc = json_object_get(spec, "HostConfig"), *env = json_object_get(spec, "Env");
    char kv[sizeof("SANDGATE_EGRESS_PROXY=http://") + sizeof(cfg->egress_proxy)];
    snprintf(kv, sizeof(kv), "SANDGATE_EGRESS_PROXY=http://%s", cfg->egress_proxy);
    int r = -ENOMEM;
    if (json_is_object(hc) && json_is_array(env) &&
        json_object_set_new(hc, "NetworkMode", json_string(cfg->egress_network)) == 0 &&
        /* Docker's embedded resolver (127.0.0.11) forwards names it does not
         * know to these servers, from inside the sandbox's namespace: 127.0.0.1
         * there is where nothing listens. The resolver itself is refused in
         * that namespace by egress_close_resolver(). */
        json_object_set_new(hc, "Dns", json_pack("[s]", "127.0.0.1")) == 0 &&
        json_object_set_new(spec, "NetworkDisabled", json_false()) == 0 &&
        json_array_append_new(env, json_string(kv)) == 0 &&
        (cfg->insecure_runtime ||
         json_object_set_new(hc, "Runtime", json_string(cfg->egress_runtime)) == 0)) {
        *ret_body = json_dumps(spec, JSON_COMPACT);
        r = *ret_body ? 0 : r;
    }
    json_decref(spec);
    return r == 0 ? 0 : sg_error_set(err, r, "cannot build the networked sandbox spec");
}

int egress_guard_body(const struct exec_config *cfg, const char *sandbox_id, char **ret_body,
                      struct sg_error *err)
{
    char mode[sizeof("container:") + DOCKER_ID_LEN + 1];
    snprintf(mode, sizeof(mode), "container:%s", sandbox_id);
    json_t *spec = json_pack(
        "{s:s,s:[sssssssss],s:{s:s},s:{s:s,s:[s],s:[ss],s:s,s:b,s:{s:s},s:[s]}}", "Image",
        cfg->egress_guard_image, "Entrypoint", "iptables", "-w", "5", "-I", "OUTPUT", "-d",
        "127.0.0.11/32", "-j", "REJECT", "Labels", EGRESS_GUARD_LABEL, cfg->instance, "HostConfig",
        "NetworkMode", mode, "CapDrop", "ALL", "CapAdd", "NET_ADMIN", "NET_RAW", "Runtime", "runc",
        "ReadonlyRootfs", 1, "Tmpfs", "/run", "size=1m", "SecurityOpt", "no-new-privileges");
    *ret_body = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
    json_decref(spec);
    return *ret_body ? 0 : sg_error_set(err, -ENOMEM, "cannot build the resolver guard spec");
}

int egress_close_resolver(const void *ctx, struct docker_client *dc, const char *sandbox_id,
                          struct sg_error *err)
{
    const struct exec_config *cfg = ctx;
    char *body = NULL, id[DOCKER_ID_LEN + 1] = "";
    int code = -1;
    int r = egress_guard_body(cfg, sandbox_id, &body, err);
    if (r == 0)
        r = docker_create(dc, body, id, err);
    if (r == 0)
        r = docker_start(dc, id, err);
    if (r == 0)
        r = docker_wait(dc, id, EGRESS_GUARD_TIMEOUT_MS, &code, err);
    if (r == 0 && code != 0)
        r = sg_error_set(err, -EIO,
                         "the resolver guard (%s) exited with %d in sandbox %.12s: is iptables "
                         "in that image?",
                         cfg->egress_guard_image, code, sandbox_id);
    if (id[0])
        docker_remove(dc, id, EGRESS_GUARD_TIMEOUT_MS, NULL);
    free(body);
    if (r < 0)
        sg_log(SG_LOG_WARN, "egress_guard_failed", "container=%.12s error=\"%s\"", sandbox_id,
               err ? err->msg : "");
    return r;
}

static void state_path(const struct exec_config *cfg, const char *sub, const char *name,
                       char out[PATH_MAX])
{
    snprintf(out, PATH_MAX, "%s/%s/%s", cfg->egress_dir, sub, name);
}

int egress_reset(const struct exec_config *cfg, struct sg_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/allow", cfg->egress_dir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return sg_error_set(err, -errno, "cannot create %s: %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    if (!d)
        return sg_error_set(err, -errno, "cannot open %s: %s", dir, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    return 0;
}

int egress_grant(const struct exec_config *cfg, const char *ip, const char *job_id, json_t *allow,
                 struct sg_error *err)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    state_path(cfg, "decisions", ip, path);
    unlink(path); /* a previous sandbox's, never this job's */
    state_path(cfg, "allow", ip, path);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    json_t *doc = json_pack("{s:s,s:O}", "job_id", job_id, "allow", allow);
    int r = doc ? json_dump_file(doc, tmp, JSON_COMPACT) : -1;
    json_decref(doc);
    /* rename: the helper reads either no list or the whole one */
    if (r < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return sg_error_set(err, -EIO, "cannot write the allow-list %s: %s", path, strerror(e));
    }
    return 0;
}

/* Append "host:port" to arr unless present or full. */
static void add_host(json_t *arr, const char *host, json_int_t port)
{
    char hp[300];
    snprintf(hp, sizeof(hp), "%s:%lld", host, (long long)port);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (strcmp(json_string_value(v), hp) == 0) return;
    if (json_array_size(arr) < EGRESS_HOSTS_MAX)
        json_array_append_new(arr, json_string(hp));
}

/* What the proxy recorded for one job (decisions/<address>). */
struct egress_log {
    json_t *allowed, *denied, *connections;
    size_t n_allowed, n_connections;
};

/* A logfile-daemon line (egress_log.py): one finished request's bytes. */
static void take_connection(json_t *d, const char *job_id, const char *host, json_int_t port,
                            struct egress_log *lg, int log)
{
    json_t *st = json_object_get(d, "status"), *in = json_object_get(d, "bytes_in"),
           *out = json_object_get(d, "bytes_out");
    if (!json_is_integer(st) || !json_is_integer(in) || !json_is_integer(out))
        return;
    lg->n_connections++;
    if (json_array_size(lg->connections) < EGRESS_HOSTS_MAX)
        json_array_append_new(lg->connections,
                              json_pack("{s:s,s:I,s:I,s:I,s:I}", "host", host, "port", port,
                                        "status", json_integer_value(st), "bytes_in",
                                        json_integer_value(in), "bytes_out",
                                        json_integer_value(out)));
    if (log) {
        char qh[300];
        sg_log_quote(host, qh, sizeof(qh));
        sg_log(SG_LOG_INFO, "egress_bytes",
               "job_id=%s host=\"%s\" port=%lld status=%lld bytes_in=%lld bytes_out=%lld", job_id,
               qh, (long long)port, (long long)json_integer_value(st),
               (long long)json_integer_value(in), (long long)json_integer_value(out));
    }
}

/* One line of decisions/<address>: the helper's {"job_id","host","port",
 * "verdict","reason"} or the log daemon's {"job_id","host","port","status",
 * "bytes_in","bytes_out"}. Lines of another job (a previous job's late log
 * line; grant removes the file) are skipped. */
static void take_line(const char *line, size_t len, const char *job_id, struct egress_log *lg,
                      int log)
{
    json_t *d = json_loadb(line, len, 0, NULL);
    const char *jid = json_string_value(json_object_get(d, "job_id"));
    const char *host = json_string_value(json_object_get(d, "host"));
    const char *verdict = json_string_value(json_object_get(d, "verdict"));
    const char *reason = json_string_value(json_object_get(d, "reason"));
    json_t *port = json_object_get(d, "port");
    if (!jid || !host || !json_is_integer(port) || strcmp(jid, job_id) != 0 || strlen(host) > 253)
        goto out;
    if (!verdict) {
        take_connection(d, job_id, host, json_integer_value(port), lg, log);
        goto out;
    }
    int ok = strcmp(verdict, "allowed") == 0;
    lg->n_allowed += ok;
    add_host(ok ? lg->allowed : lg->denied, host, json_integer_value(port));
    if (log) {
        char qh[300], qr[200];
        sg_log_quote(host, qh, sizeof(qh));
        sg_log_quote(reason ? reason : "", qr, sizeof(qr));
        sg_log(SG_LOG_INFO, "egress", "job_id=%s host=\"%s\" port=%lld verdict=%s reason=\"%s\"",
               job_id, qh, (long long)json_integer_value(port), ok ? "allowed" : "denied", qr);
    }
out:
    json_decref(d);
}

/* Read decisions/<address> into a fresh *lg (its arrays NULL when the file
 * could not be read: nothing recorded, or a logged error). */
static void read_log(const char *path, const char *job_id, struct egress_log *lg, int log)
{
    char *buf = NULL;
    size_t len = 0;
    struct sg_error rerr = {0};
    *lg = (struct egress_log){json_array(), json_array(), json_array(), 0, 0};
    int rr = sg_read_file_capped(path, EGRESS_DECISIONS_MAX, &buf, &len, &rerr);
    if (rr < 0 && rr != -ENOENT && log)
        sg_log(SG_LOG_WARN, "egress_decisions_unreadable", "job_id=%s error=\"%s\"", job_id,
               rerr.msg);
    for (char *p = buf, *nl; rr == 0 && p < buf + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (!nl)
            break; /* a partial last line */
        take_line(p, (size_t)(nl - p), job_id, lg, log);
    }
    free(buf);
}

static void free_log(struct egress_log *lg)
{
    json_decref(lg->allowed);
    json_decref(lg->denied);
    json_decref(lg->connections);
}

int egress_withdraw(const struct exec_config *cfg, const char *ip, const char *job_id,
                    json_t **ret_network, struct sg_error *err)
{
    char path[PATH_MAX];
    state_path(cfg, "allow", ip, path);
    int r = unlink(path) < 0 && errno != ENOENT
                ? sg_error_set(err, -errno, "cannot withdraw %s: %s", path, strerror(errno))
                : 0;
    state_path(cfg, "decisions", ip, path);
    /* Squid logs a request when it finishes, shortly after the program that
     * closed it ended: wait (bounded) for one log line per allowed request. */
    struct egress_log lg;
    for (unsigned waited = 0;; waited += EGRESS_LOG_SLICE_MS) {
        read_log(path, job_id, &lg, 0);
        if (lg.n_connections >= lg.n_allowed || waited >= EGRESS_LOG_WAIT_MS)
            break;
        free_log(&lg);
        usleep(EGRESS_LOG_SLICE_MS * 1000u);
    }
    free_log(&lg);
    read_log(path, job_id, &lg, 1);
    unlink(path);
    *ret_network = json_pack("{s:o,s:o,s:o}", "allowed", lg.allowed, "denied", lg.denied,
                             "connections", lg.connections);
    return *ret_network ? r : sg_error_set(err, -ENOMEM, "out of memory");
}
