/* sandbox_runsc_spec.c - the Engine API create body as an OCI runtime spec
 * (sandbox_runsc.h): pure functions over the executor's own body and the
 * image's (untrusted, bounded) config. */
#include "sandbox_runsc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_CPU_PERIOD 100000LL

static bool word_ok(json_t *s)
{
    const char *v = json_string_value(s);
    return v && json_string_length(s) <= SANDBOX_RUNSC_WORD_MAX &&
           strlen(v) == json_string_length(s);
}

/* NULL or an array of at most max bounded strings without NUL. */
static bool words_ok(json_t *a, size_t max)
{
    if (!a || json_is_null(a))
        return true;
    if (!json_is_array(a) || json_array_size(a) > max)
        return false;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) if (!word_ok(v)) return false;
    return true;
}

static bool id_ok(const char *id)
{
    if (!id || strncmp(id, "sha256:", 7) != 0 || strlen(id) != 71)
        return false;
    for (const char *p = id + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

static json_t *keep(json_t *a)
{
    return json_is_array(a) ? json_incref(a) : NULL;
}

int sandbox_runsc_parse_image(const char *body, size_t len, struct sandbox_runsc_image *ret,
                              struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    json_t *j = json_loadb(body, len, 0, NULL);
    json_t *c = json_object_get(j, "Config");
    const char *id = json_string_value(json_object_get(j, "Id"));
    json_t *ep = json_object_get(c, "Entrypoint"), *cmd = json_object_get(c, "Cmd"),
           *env = json_object_get(c, "Env");
    int r = -EPROTO;
    if (!json_is_object(c) || !id_ok(id) || !words_ok(ep, SANDBOX_RUNSC_ARGS_MAX) ||
        !words_ok(cmd, SANDBOX_RUNSC_ARGS_MAX) || !words_ok(env, SANDBOX_RUNSC_ENV_MAX))
        goto out;
    snprintf(ret->id, sizeof(ret->id), "%s", id);
    ret->entrypoint = keep(ep);
    ret->cmd = keep(cmd);
    ret->env = keep(env);
    r = 0;
out:
    json_decref(j);
    return r == 0 ? 0 : sg_error_set(err, r, "malformed image inspect reply (%zu bytes)", len);
}

void sandbox_runsc_image_clear(struct sandbox_runsc_image *img)
{
    json_decref(img->entrypoint);
    json_decref(img->cmd);
    json_decref(img->env);
    memset(img, 0, sizeof(*img));
}

/* Docker's merge: the body's Entrypoint replaces the image's (and then its
 * Cmd, even empty, replaces the image's); else the image's both. */
static json_t *args_of(json_t *spec, const struct sandbox_runsc_image *img)
{
    json_t *ep = json_object_get(spec, "Entrypoint"), *cmd = json_object_get(spec, "Cmd");
    json_t *args = json_array();
    if (!json_is_array(ep)) {
        ep = img->entrypoint;
        cmd = json_is_array(cmd) ? cmd : img->cmd;
    }
    if (json_is_array(ep))
        json_array_extend(args, ep);
    if (json_is_array(cmd))
        json_array_extend(args, cmd);
    if (json_array_size(args) == 0 || json_array_size(args) > SANDBOX_RUNSC_ARGS_MAX) {
        json_decref(args);
        return NULL;
    }
    return args;
}

static bool same_key(const char *a, const char *b)
{
    size_t ka = strcspn(a, "="), kb = strcspn(b, "=");
    return ka == kb && memcmp(a, b, ka) == 0;
}

/* The image's environment, then the body's (a body variable replaces the
 * image's of the same name), then HOSTNAME as Docker sets it. */
static json_t *env_of(json_t *spec, const struct sandbox_runsc_image *img, const char *hostname)
{
    json_t *env = json_array(), *mine = json_object_get(spec, "Env"), *v;
    size_t i, k;
    if (img->env)
        json_array_extend(env, img->env);
    json_array_foreach(mine, i, v)
    {
        json_t *old;
        json_array_foreach(env, k, old) if (same_key(json_string_value(old), json_string_value(v)))
        {
            json_array_remove(env, k);
            break;
        }
        json_array_append(env, v);
    }
    char h[160];
    snprintf(h, sizeof(h), "HOSTNAME=%s", hostname);
    json_array_append_new(env, json_string(h));
    return env;
}

/* "U:G" with decimal ids. */
static int user_of(const char *user, json_int_t *uid, json_int_t *gid)
{
    char *end = NULL;
    long long u = user ? strtoll(user, &end, 10) : -1;
    if (!end || *end != ':' || u < 0 || u > 65535)
        return -EINVAL;
    long long g = strtoll(end + 1, &end, 10);
    if (*end || g < 0 || g > 65535)
        return -EINVAL;
    *uid = u;
    *gid = g;
    return 0;
}

static json_t *caps_of(json_t *hc)
{
    json_t *caps = json_array(), *v;
    size_t i;
    json_array_foreach(json_object_get(hc, "CapAdd"), i, v)
    {
        char c[64];
        snprintf(c, sizeof(c), "CAP_%s", json_string_value(v) ? json_string_value(v) : "");
        json_array_append_new(caps, json_string(c));
    }
    return json_pack("{s:o,s:O,s:O,s:[],s:[]}", "bounding", caps, "effective", caps, "permitted",
                     caps, "inheritable", "ambient");
}

static json_t *rlimits_of(json_t *hc)
{
    json_t *out = json_array(), *u;
    size_t i;
    json_array_foreach(json_object_get(hc, "Ulimits"), i, u)
    {
        const char *name = json_string_value(json_object_get(u, "Name"));
        const char *type = !name                         ? NULL
                           : strcmp(name, "nofile") == 0 ? "RLIMIT_NOFILE"
                           : strcmp(name, "fsize") == 0  ? "RLIMIT_FSIZE"
                                                         : NULL;
        if (type)
            json_array_append_new(out, json_pack("{s:s,s:O,s:O}", "type", type, "soft",
                                                 json_object_get(u, "Soft"), "hard",
                                                 json_object_get(u, "Hard")));
    }
    return out;
}

/* "rw,nosuid,size=64m" -> ["rw","nosuid","size=64m"] */
static json_t *split_opts(const char *opts)
{
    json_t *a = json_array();
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", opts ? opts : "");
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        json_array_append_new(a, json_string(t));
    return a;
}

static json_t *mount(const char *dst, const char *type, const char *src, json_t *opts)
{
    return json_pack("{s:s,s:s,s:s,s:o}", "destination", dst, "type", type, "source", src,
                     "options", opts);
}

/* Docker's default mounts for a container with a private IPC namespace,
 * then the body's tmpfs mounts. */
static json_t *mounts_of(json_t *hc)
{
    json_t *m = json_array();
    json_array_append_new(
        m, mount("/proc", "proc", "proc", json_pack("[s,s,s]", "nosuid", "noexec", "nodev")));
    json_array_append_new(
        m, mount("/dev", "tmpfs", "tmpfs",
                 json_pack("[s,s,s,s]", "nosuid", "strictatime", "mode=755", "size=65536k")));
    json_array_append_new(m, mount("/dev/pts", "devpts", "devpts",
                                   json_pack("[s,s,s,s,s]", "nosuid", "noexec", "newinstance",
                                             "ptmxmode=0666", "mode=0620")));
    json_array_append_new(m, mount("/dev/shm", "tmpfs", "shm",
                                   json_pack("[s,s,s,s,s]", "nosuid", "noexec", "nodev",
                                             "mode=1777", "size=67108864")));
    json_array_append_new(m, mount("/sys", "sysfs", "sysfs",
                                   json_pack("[s,s,s,s]", "nosuid", "noexec", "nodev", "ro")));
    const char *dst;
    json_t *opts;
    json_object_foreach(json_object_get(hc, "Tmpfs"), dst, opts)
        json_array_append_new(m, mount(dst, "tmpfs", "tmpfs", split_opts(json_string_value(opts))));
    return m;
}

/* Docker's seccomp profile format and OCI's share these keys. */
static json_t *seccomp_of(const char *profile)
{
    json_t *p = json_loads(profile, 0, NULL), *out = NULL, *rule;
    json_t *rules = json_object_get(p, "syscalls");
    size_t i;
    if (!json_is_string(json_object_get(p, "defaultAction")) || !json_is_array(rules))
        goto out;
    out = json_pack("{s:O,s:[]}", "defaultAction", json_object_get(p, "defaultAction"), "syscalls");
    if (json_is_array(json_object_get(p, "architectures")))
        json_object_set(out, "architectures", json_object_get(p, "architectures"));
    json_array_foreach(rules, i, rule)
    {
        json_t *r = json_pack("{s:O,s:O}", "names", json_object_get(rule, "names"), "action",
                              json_object_get(rule, "action"));
        if (!r) {
            json_decref(out);
            out = NULL;
            goto out;
        }
        if (json_is_array(json_object_get(rule, "args")))
            json_object_set(r, "args", json_object_get(rule, "args"));
        if (json_is_integer(json_object_get(rule, "errnoRet")))
            json_object_set(r, "errnoRet", json_object_get(rule, "errnoRet"));
        json_array_append_new(json_object_get(out, "syscalls"), r);
    }
out:
    json_decref(p);
    return out;
}

/* SecurityOpt: no-new-privileges:true and seccomp=<profile|unconfined>.
 * *ret_seccomp stays NULL when unconfined. -EINVAL on anything else. */
static int security_of(json_t *hc, bool *nnp, json_t **ret_seccomp)
{
    json_t *v;
    size_t i;
    *nnp = false;
    *ret_seccomp = NULL;
    json_array_foreach(json_object_get(hc, "SecurityOpt"), i, v)
    {
        const char *s = json_string_value(v);
        if (s && strcmp(s, "no-new-privileges:true") == 0) {
            *nnp = true;
        } else if (s && strcmp(s, "seccomp=unconfined") == 0) {
            continue;
        } else if (s && strncmp(s, "seccomp=", 8) == 0 && !*ret_seccomp) {
            if (!(*ret_seccomp = seccomp_of(s + 8)))
                return -EINVAL;
        } else {
            json_decref(*ret_seccomp);
            *ret_seccomp = NULL;
            return -EINVAL;
        }
    }
    return 0;
}

static json_t *resources_of(json_t *hc)
{
    json_int_t mem = json_integer_value(json_object_get(hc, "Memory"));
    json_int_t swap = json_integer_value(json_object_get(hc, "MemorySwap"));
    json_int_t nano = json_integer_value(json_object_get(hc, "NanoCpus"));
    json_int_t pids = json_integer_value(json_object_get(hc, "PidsLimit"));
    json_t *r = json_object();
    if (mem > 0)
        json_object_set_new(r, "memory",
                            json_pack("{s:I,s:I}", "limit", mem, "swap", swap > 0 ? swap : mem));
    if (nano > 0)
        json_object_set_new(r, "cpu",
                            json_pack("{s:I,s:I}", "quota",
                                      (json_int_t)(nano * SPEC_CPU_PERIOD / 1000000000LL), "period",
                                      (json_int_t)SPEC_CPU_PERIOD));
    if (pids > 0)
        json_object_set_new(r, "pids", json_pack("{s:I}", "limit", pids));
    return r;
}

/* What this backend cannot honour is refused, never dropped. */
static int body_ok(json_t *spec, json_t *hc)
{
    const char *net = json_string_value(json_object_get(hc, "NetworkMode"));
    if (!json_is_object(hc) || !net || strcmp(net, "none") != 0 ||
        !json_is_true(json_object_get(hc, "ReadonlyRootfs")) ||
        json_is_true(json_object_get(hc, "Privileged")) ||
        !json_is_string(json_object_get(spec, "WorkingDir")))
        return -EINVAL;
    json_t *drop = json_object_get(hc, "CapDrop");
    if (json_array_size(drop) != 1 ||
        strcmp(json_string_value(json_array_get(drop, 0)) ?: "", "ALL"))
        return -EINVAL;
    return 0;
}

static json_t *process_of(json_t *spec, json_t *hc, const struct sandbox_runsc_image *img,
                          const char *hostname, bool nnp)
{
    json_int_t uid = 0, gid = 0;
    json_t *args = args_of(spec, img);
    if (!args || user_of(json_string_value(json_object_get(spec, "User")), &uid, &gid) < 0) {
        json_decref(args);
        return NULL;
    }
    return json_pack("{s:b,s:{s:I,s:I},s:o,s:o,s:O,s:o,s:o,s:b}", "terminal", 0, "user", "uid", uid,
                     "gid", gid, "args", args, "env", env_of(spec, img, hostname), "cwd",
                     json_object_get(spec, "WorkingDir"), "capabilities", caps_of(hc), "rlimits",
                     rlimits_of(hc), "noNewPrivileges", nnp);
}

static json_t *linux_of(json_t *hc, const char *cgroups_path, json_t *seccomp)
{
    json_t *lx = json_pack(
        "{s:s,s:o,s:[{s:s},{s:s},{s:s},{s:s},{s:s}],s:[s,s,s,s,s,s,s,s,s],s:[s,s,s,s,s,s]}",
        "cgroupsPath", cgroups_path, "resources", resources_of(hc), "namespaces", "type", "pid",
        "type", "ipc", "type", "uts", "type", "mount", "type", "network", "maskedPaths",
        "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
        "readonlyPaths", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
        "/proc/scsi");
    if (lx && seccomp)
        json_object_set(lx, "seccomp", seccomp);
    return lx;
}

int sandbox_runsc_spec(const char *create_body, const struct sandbox_runsc_image *img,
                       const char *rootfs, const char *hostname, const char *cgroups_path,
                       char **ret, struct sg_error *err)
{
    *ret = NULL;
    json_t *spec = json_loads(create_body, 0, NULL), *seccomp = NULL, *oci = NULL;
    json_t *hc = json_object_get(spec, "HostConfig");
    bool nnp = false;
    int r = -EINVAL;
    if (!json_is_object(spec) || body_ok(spec, hc) < 0 || security_of(hc, &nnp, &seccomp) < 0)
        goto out;
    json_t *proc = process_of(spec, hc, img, hostname, nnp);
    if (!proc)
        goto out;
    oci = json_pack("{s:s,s:o,s:{s:s,s:b},s:s,s:o,s:o}", "ociVersion", "1.0.2", "process", proc,
                    "root", "path", rootfs, "readonly", 1, "hostname", hostname, "mounts",
                    mounts_of(hc), "linux", linux_of(hc, cgroups_path, seccomp));
    r = oci && (*ret = json_dumps(oci, JSON_COMPACT)) ? 0 : -ENOMEM;
out:
    json_decref(seccomp);
    json_decref(oci);
    json_decref(spec);
    return r == 0
               ? 0
               : sg_error_set(err, r, "the sandbox's create body cannot be run by runsc directly");
}
