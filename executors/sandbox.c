#include "sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "attach.h"
#include "sandbox_runsc.h"

static struct sandbox_runsc *use_runsc;

void sandbox_use_runsc(struct sandbox_runsc *rs)
{
    use_runsc = rs;
}

struct sandbox_runsc *sandbox_runsc_in_use(void)
{
    return use_runsc;
}

#define MIB (1024LL * 1024LL)

static json_t *tmpfs_spec(const struct exec_config *cfg)
{
    /* noexec: the runner only reads sources from here; nothing needs to be
     * executed from a writable place. uid/gid make them writable for 65534. */
    char opts[160];
    snprintf(opts, sizeof(opts), "rw,nosuid,nodev,noexec,size=%um,uid=%s,gid=%s,mode=1777",
             cfg->tmpfs_mb, SANDBOX_UID, SANDBOX_UID);
    return json_pack("{s:s,s:s}", "/tmp", opts, SANDBOX_WORKSPACE, opts);
}

static json_t *host_config(const struct exec_config *cfg, const char *seccomp_json)
{
    long long mem = (long long)cfg->memory_mb * MIB;
    long long fsize = (long long)cfg->fsize_mb * MIB;
    json_t *secopt = json_pack("[s]", "no-new-privileges:true");
    if (seccomp_json) {
        size_t n = strlen(seccomp_json) + sizeof("seccomp=");
        char *s = malloc(n);
        if (!s) {
            json_decref(secopt);
            return NULL;
        }
        snprintf(s, n, "seccomp=%s", seccomp_json);
        json_array_append_new(secopt, json_string(s));
        free(s);
    } else {
        /* Without our profile, no filter: Docker's default one makes clone3
         * fail under runsc --oci-seccomp, so no thread could ever start. */
        json_array_append_new(secopt, json_string("seccomp=unconfined"));
    }
    return json_pack("{s:s,s:s,s:b,s:o,s:[s],s:o,s:I,s:I,s:I,s:I,s:[{s:s,s:I,s:I},{s:s,s:I,s:I}],"
                     "s:{s:s},s:b,s:b,s:s}",
                     "Runtime", cfg->runtime, "NetworkMode", "none", "ReadonlyRootfs", 1, "Tmpfs",
                     tmpfs_spec(cfg), "CapDrop", "ALL", "SecurityOpt", secopt, "Memory", mem,
                     "MemorySwap", mem, "NanoCpus", (json_int_t)cfg->nano_cpus, "PidsLimit",
                     (json_int_t)cfg->pids_limit, "Ulimits", "Name", "nofile", "Soft",
                     (json_int_t)cfg->nofile, "Hard", (json_int_t)cfg->nofile, "Name", "fsize",
                     "Soft", fsize, "Hard", fsize, "LogConfig", "Type", "none", "AutoRemove", 0,
                     "Privileged", 0, "IpcMode", "private");
}

int sandbox_create_body(const struct exec_config *cfg, const char *seccomp_json,
                        const char *const *entrypoint, char **ret_body, struct sg_error *err)
{
    json_t *hc = host_config(cfg, seccomp_json);
    if (!hc)
        return sg_error_set(err, -ENOMEM, "cannot build container spec");
    if (cfg->identity_split)
        json_object_set_new(hc, "CapAdd", json_pack("[s,s,s,s,s]", SANDBOX_SPLIT_CAPS));
    json_t *spec =
        json_pack("{s:s,s:s,s:s,s:[s,s],s:b,s:b,s:b,s:b,s:b,s:b,s:b,s:{s:s,s:s},s:o}", "Image",
                  cfg->image, "User", cfg->identity_split ? "0:0" : SANDBOX_UID ":" SANDBOX_UID,
                  "WorkingDir", SANDBOX_WORKSPACE, "Env", "HOME=/tmp", "TMPDIR=/tmp", "AttachStdin",
                  1, "AttachStdout", 1, "AttachStderr", 1, "OpenStdin", 1, "StdinOnce", 0, "Tty", 0,
                  "NetworkDisabled", 1, "Labels", EXEC_LABEL_KEY, cfg->instance, EXEC_LABEL_LANG,
                  sg_lang_name(cfg->language), "HostConfig", hc);
    if (!spec)
        return sg_error_set(err, -ENOMEM, "cannot build container spec");
    if (cfg->test_guard_off)
        json_array_append_new(json_object_get(spec, "Env"), json_string(EXEC_TEST_GUARD_OFF_ENV));
    if (entrypoint) {
        json_t *ep = json_array();
        for (size_t i = 0; entrypoint[i]; i++)
            json_array_append_new(ep, json_string(entrypoint[i]));
        json_object_set_new(spec, "Entrypoint", ep);
        json_object_set_new(spec, "Cmd", json_array());
    }
    *ret_body = json_dumps(spec, JSON_COMPACT);
    json_decref(spec);
    return *ret_body ? 0 : sg_error_set(err, -ENOMEM, "cannot encode container spec");
}

int sandbox_flavour_body(const char *base_body, const char *pool_label, const char *preimport,
                         const char *image, char **ret_body, struct sg_error *err)
{
    json_t *spec = json_loads(base_body, 0, NULL);
    json_t *env = json_object_get(spec, "Env"), *labels = json_object_get(spec, "Labels");
    size_t n = strlen(preimport) + sizeof("SANDGATE_PREIMPORT=");
    char *kv = malloc(n);
    int r = -ENOMEM;
    if (kv && json_is_array(env) && json_is_object(labels)) {
        snprintf(kv, n, "SANDGATE_PREIMPORT=%s", preimport);
        json_array_append_new(env, json_string(kv));
        json_object_set_new(labels, EXEC_LABEL_POOL, json_string(pool_label));
        if (image && image[0])
            json_object_set_new(spec, "Image", json_string(image));
        *ret_body = json_dumps(spec, JSON_COMPACT);
        r = *ret_body ? 0 : r;
    }
    free(kv);
    json_decref(spec);
    return r == 0 ? 0 : sg_error_set(err, r, "cannot build the flavour's container spec");
}

int sandbox_launch(struct docker_client *dc, const char *body, struct sandbox *ret,
                   struct sg_error *err)
{
    if (use_runsc)
        return sandbox_runsc_launch(use_runsc, body, ret, err);
    memset(ret, 0, sizeof(*ret));
    ret->fd = -1;
    double t0 = attach_now_ms();
    int r = docker_create(dc, body, ret->id, err);
    if (r < 0)
        return r;
    double t1 = attach_now_ms();
    r = attach_open(docker_client_socket(dc), ret->id, SANDBOX_ATTACH_TIMEOUT_MS, &ret->fd, err);
    double t2 = attach_now_ms();
    if (r == 0)
        r = docker_start(dc, ret->id, err);
    ret->create_ms = (float)(t1 - t0);
    ret->attach_ms = (float)(t2 - t1);
    ret->start_ms = (float)(attach_now_ms() - t2);
    if (r < 0) {
        sandbox_destroy(dc, ret, NULL);
        return r;
    }
    ret->ready_ms = attach_now_ms();
    return 0;
}

int sandbox_destroy(struct docker_client *dc, struct sandbox *sb, struct sg_error *err)
{
    if (sb->runsc)
        return sandbox_runsc_destroy(sb, err);
    if (sb->fd >= 0) {
        close(sb->fd);
        sb->fd = -1;
    }
    if (!sb->id[0])
        return 0;
    return docker_remove(dc, sb->id, SANDBOX_REMOVE_TIMEOUT_MS, err);
}

int sandbox_dead_state(struct docker_client *dc, struct sandbox *sb, long timeout_ms,
                       struct docker_state *ret, struct sg_error *err)
{
    if (sb->runsc)
        return sandbox_runsc_state(sb, timeout_ms, ret, err);
    int exit_code = 0;
    int r = docker_wait(dc, sb->id, timeout_ms, &exit_code, err);
    return r < 0 ? r : docker_inspect(dc, sb->id, ret, err);
}

int sandbox_oom_event(struct docker_client *dc, const struct sandbox *sb, double since_s,
                      double until_s, bool *ret_seen, struct sg_error *err)
{
    if (sb->runsc)
        return sandbox_runsc_oom(sb, ret_seen, err);
    return docker_oom_event(dc, sb->id, since_s, until_s, ret_seen, err);
}

int sandbox_stale(const struct sandbox *sb)
{
    if (sb->fd < 0)
        return 1;
    struct pollfd pfd = {.fd = sb->fd, .events = POLLIN};
    int n = poll(&pfd, 1, 0);
    if (n == 0)
        return 0;
    if (n < 0 || (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
        return 1;
    /* Readable: early runner diagnostics are fine (the job reads them), EOF is not. */
    char c;
    return recv(sb->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}
