#include "runsc_info.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "sg_time.h"

extern char **environ;

#define RUNSC_INFO_REPLY_MAX (1u << 20) /* GET /info */
#define RUNSC_INFO_CALL_MS 10000

int runsc_info_parse_version(const char *text, size_t len, char ret_version[RUNSC_INFO_VERSION_MAX],
                             unsigned *ret_date)
{
    static const char prefix[] = "runsc version ";
    size_t pl = sizeof(prefix) - 1, n = 0;
    ret_version[0] = '\0';
    *ret_date = 0;
    if (len < pl || memcmp(text, prefix, pl) != 0)
        return -EINVAL;
    for (const char *p = text + pl; pl + n < len && !isspace((unsigned char)p[n]); n++)
        if (!isgraph((unsigned char)p[n]) || n + 1 >= RUNSC_INFO_VERSION_MAX)
            return -EINVAL;
    if (n == 0)
        return -EINVAL;
    memcpy(ret_version, text + pl, n);
    ret_version[n] = '\0';
    /* the first run of exactly eight digits is the release date */
    for (const char *p = ret_version; *p; p++) {
        size_t d = strspn(p, "0123456789");
        if (d == 8) {
            *ret_date = (unsigned)strtoul(p, NULL, 10);
            return 0;
        }
        p += d ? d - 1 : 0;
    }
    ret_version[0] = '\0';
    return -EINVAL;
}

static void platform_of(json_t *args, char ret[RUNSC_INFO_PLATFORM_MAX])
{
    size_t i;
    json_t *a;
    snprintf(ret, RUNSC_INFO_PLATFORM_MAX, "default");
    json_array_foreach(args, i, a)
    {
        const char *s = json_string_value(a);
        const char *next = json_string_value(json_array_get(args, i + 1));
        if (s && strncmp(s, "--platform=", 11) == 0)
            snprintf(ret, RUNSC_INFO_PLATFORM_MAX, "%s", s + 11);
        else if (s && next && strcmp(s, "--platform") == 0)
            snprintf(ret, RUNSC_INFO_PLATFORM_MAX, "%s", next);
    }
}

int runsc_info_parse_runtime(const char *body, size_t len, const char *name,
                             char ret_path[PATH_MAX], char ret_platform[RUNSC_INFO_PLATFORM_MAX])
{
    ret_path[0] = ret_platform[0] = '\0';
    json_t *root = json_loadb(body, len, 0, NULL);
    json_t *rts = json_object_get(root, "Runtimes");
    int r = json_is_object(rts) ? -ENOENT : -EPROTO;
    json_t *rt = json_object_get(rts, name);
    if (json_is_object(rt)) {
        const char *path = json_string_value(json_object_get(rt, "path"));
        json_t *args = json_object_get(rt, "runtimeArgs");
        r = (path && strlen(path) >= PATH_MAX) || (args && !json_is_array(args)) ? -EPROTO : 0;
        if (r == 0) {
            snprintf(ret_path, PATH_MAX, "%s", path ? path : "");
            platform_of(args, ret_platform);
        }
    }
    json_decref(root);
    return r;
}

/* Read the child's output until it closes or the deadline; bounded. */
static int read_bounded(int fd, char *out, size_t cap, size_t *ret_len, double deadline_ms)
{
    *ret_len = 0;
    for (;;) {
        int left = (int)(deadline_ms - (double)sg_time_mono_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -ETIMEDOUT : -errno;
        char tmp[512];
        ssize_t got = read(fd, tmp, sizeof(tmp));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got == 0 ? 0 : -errno;
        size_t take = (size_t)got < cap - *ret_len ? (size_t)got : cap - *ret_len;
        memcpy(out + *ret_len, tmp, take);
        *ret_len += take;
    }
}

int runsc_info_read_version(const char *path, struct runsc_info *ret, struct sg_error *err)
{
    int fds[2], r;
    pid_t pid = -1;
    char out[RUNSC_INFO_OUTPUT_MAX];
    size_t len = 0;
    snprintf(ret->path, sizeof(ret->path), "%s", path);
    if (pipe2(fds, O_CLOEXEC) < 0)
        return sg_error_set(err, -errno, "pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    char arg0[PATH_MAX], arg1[] = "--version";
    snprintf(arg0, sizeof(arg0), "%s", path);
    char *argv[] = {arg0, arg1, NULL};
    r = -posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (r < 0) {
        close(fds[0]);
        return sg_error_set(err, r, "cannot run %s --version: %s", path, strerror(-r));
    }
    r = read_bounded(fds[0], out, sizeof(out), &len,
                     (double)sg_time_mono_ms() + RUNSC_INFO_TIMEOUT_MS);
    close(fds[0]);
    if (r < 0)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r < 0)
        return sg_error_set(err, r, "%s --version did not answer within %d ms", path,
                            RUNSC_INFO_TIMEOUT_MS);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        runsc_info_parse_version(out, len, ret->version, &ret->date) < 0)
        return sg_error_set(err, -EPROTO, "%s --version did not report a runsc version", path);
    return 0;
}

int runsc_info_check(struct runsc_info *ri, bool accept_old, struct sg_error *err)
{
    ri->warning[0] = '\0';
    if (!ri->gvisor || (ri->date && ri->date >= RUNSC_INFO_MIN_DATE))
        return 0;
    char what[RUNSC_INFO_WARNING_MAX / 2];
    if (ri->date)
        snprintf(what, sizeof(what), "runsc %s is older than the minimum %u", ri->version,
                 RUNSC_INFO_MIN_DATE);
    else
        snprintf(what, sizeof(what), "the runsc version is unknown (%.100s)",
                 ri->path[0] ? ri->path : "no path");
    if (!accept_old)
        return sg_error_set(err, -EPERM,
                            "%s. Install a current one ('images/host-setup.sh --fix') or "
                            "accept it with --runsc-accept-old / SANDGATE_RUNSC_ACCEPT_OLD=true",
                            what);
    snprintf(ri->warning, sizeof(ri->warning), "%s (accepted by SANDGATE_RUNSC_ACCEPT_OLD)", what);
    return 0;
}

/* The registration's path and platform (GET /info). */
static int read_registration(struct docker_client *dc, const char *runtime, struct runsc_info *ri,
                             char path[PATH_MAX], struct sg_error *err)
{
    struct sg_buf b;
    long status = 0;
    sg_buf_init(&b, RUNSC_INFO_REPLY_MAX);
    int r = docker_call(dc, "GET", "/info", NULL, RUNSC_INFO_CALL_MS, RUNSC_INFO_REPLY_MAX, &status,
                        &b, err);
    if (r == 0 && status != 200)
        r = sg_error_set(err, -EPROTO, "GET /info answered %ld", status);
    if (r == 0 && runsc_info_parse_runtime(b.data, b.len, runtime, path, ri->platform) < 0)
        r = sg_error_set(err, -EPROTO, "dockerd's /info has no usable entry for runtime '%s'",
                         runtime);
    sg_buf_free(&b);
    return r;
}

int runsc_info_load(struct docker_client *dc, const struct exec_config *cfg, struct runsc_info *ri,
                    struct sg_error *err)
{
    ri->gvisor = !cfg->insecure_runtime;
    if (!ri->gvisor)
        return 0;
    char path[PATH_MAX] = "";
    struct sg_error e = {0};
    if (dc && read_registration(dc, cfg->runtime, ri, path, err) < 0)
        return err->code;
    if (cfg->runsc_path[0] ? dc != NULL : dc == NULL)
        return 0; /* --runsc-path: read before dockerd is asked; else from its registration */
    if (cfg->runsc_path[0])
        snprintf(path, sizeof(path), "%s", cfg->runsc_path);
    if (runsc_info_read_version(path, ri, &e) < 0)
        sg_log(SG_LOG_WARN, "runsc_version_unknown", "path=%s error=\"%s\"", path, e.msg);
    int r = runsc_info_check(ri, cfg->runsc_accept_old, err);
    if (r == 0 && ri->warning[0])
        sg_log(SG_LOG_WARN, "runsc_accepted", "msg=\"%s\"", ri->warning);
    return r;
}

json_t *runsc_info_json(const struct runsc_info *ri, const char *runtime)
{
    if (!ri->gvisor)
        return json_pack("{s:s,s:n,s:n}", "runtime", runtime, "runsc_version", "platform");
    return json_pack("{s:s,s:s?,s:s?}", "runtime", runtime, "runsc_version",
                     ri->version[0] ? ri->version : NULL, "platform",
                     ri->platform[0] ? ri->platform : NULL);
}
