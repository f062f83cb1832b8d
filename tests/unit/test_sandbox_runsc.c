/* Unit tests for the direct backend's pure parts (sandbox_runsc.h): the
 * Engine API create body becomes an OCI spec with the same settings, what it
 * cannot honour is refused, and the image's config (outside input) is
 * validated. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_config.h"
#include "sandbox.h"
#include "sandbox_runsc.h"

#define IMAGE_OK                                                                                   \
    "{\"Id\":\"sha256:" SIXTY_FOUR "\",\"Config\":{\"Entrypoint\":[\"/opt/runner\",\"--x\"],"      \
    "\"Cmd\":[\"node\"],\"Env\":[\"PATH=/usr/bin\",\"HOME=/root\",\"LANG=C.UTF-8\"]}}"
#define SIXTY_FOUR "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct exec_config config(bool split)
{
    struct exec_config c;
    const char *args[] = {"x",           "--language", "python",       "--seccomp", "none",
                          "--memory-mb", "300",        "--pids-limit", "150",       "--cpus",
                          "0.5",         "--nofile",   "1024",         NULL};
    char *argv[16] = {0};
    int n = 0;
    for (; args[n]; n++)
        argv[n] = strdup(args[n]); /* getopt wants char * */
    cr_assert_eq(exec_config_parse(n, argv, &c, NULL), 0);
    for (int i = 0; i < n; i++)
        free(argv[i]);
    c.identity_split = split;
    return c;
}

static json_t *spec_of(const char *body, const char *image_json)
{
    struct sandbox_runsc_image img;
    cr_assert_eq(sandbox_runsc_parse_image(image_json, strlen(image_json), &img, NULL), 0);
    char *text = NULL;
    struct sg_error e = {0};
    int r = sandbox_runsc_spec(body, &img, "/state/images/x/rootfs", "sgabc", "/sandgate-i/sgabc",
                               &text, &e);
    sandbox_runsc_image_clear(&img);
    if (r < 0)
        return NULL;
    json_t *j = json_loads(text, 0, NULL);
    free(text);
    cr_assert_not_null(j);
    return j;
}

static json_t *default_spec(bool split, const char *seccomp)
{
    struct exec_config c = config(split);
    char *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, seccomp, NULL, &body, NULL), 0);
    json_t *j = spec_of(body, IMAGE_OK);
    free(body);
    cr_assert_not_null(j);
    return j;
}

static const char *at(json_t *j, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(j, a), b);
    return json_string_value(v);
}

static bool has_string(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i,
                       v) if (json_string_value(v) && !strcmp(json_string_value(v), s)) return true;
    return false;
}

Test(sandbox_runsc, spec_carries_every_setting_of_the_create_body)
{
    json_t *j = default_spec(false, NULL);
    json_t *proc = json_object_get(j, "process"), *lx = json_object_get(j, "linux");
    json_t *res = json_object_get(lx, "resources");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(proc, "user"), "uid")), 65534);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(proc, "user"), "gid")), 65534);
    cr_assert(json_is_true(json_object_get(proc, "noNewPrivileges")));
    cr_assert_eq(
        json_array_size(json_object_get(json_object_get(proc, "capabilities"), "bounding")), 0);
    cr_assert_str_eq(at(j, "process", "cwd"), SANDBOX_WORKSPACE);
    cr_assert(json_is_true(json_object_get(json_object_get(j, "root"), "readonly")));
    cr_assert_str_eq(at(j, "root", "path"), "/state/images/x/rootfs");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "memory"), "limit")),
                 300LL << 20);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "memory"), "swap")),
                 300LL << 20);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "cpu"), "quota")), 50000);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(res, "pids"), "limit")), 150);
    cr_assert_str_eq(at(j, "linux", "cgroupsPath"), "/sandgate-i/sgabc");
    cr_assert_null(json_object_get(lx, "seccomp"), "--seccomp none: no filter");
    /* a new network namespace: loopback only */
    bool net = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(lx, "namespaces"), i, v) net |=
        !strcmp(json_string_value(json_object_get(v, "type")) ?: "", "network");
    cr_assert(net);
    /* nofile and fsize rlimits */
    int rl = 0;
    json_array_foreach(json_object_get(proc, "rlimits"), i, v)
    {
        const char *t = json_string_value(json_object_get(v, "type"));
        if (!strcmp(t, "RLIMIT_NOFILE"))
            rl += json_integer_value(json_object_get(v, "hard")) == 1024;
        if (!strcmp(t, "RLIMIT_FSIZE"))
            rl++;
    }
    cr_assert_eq(rl, 2);
    /* size-capped noexec tmpfs /tmp and /workspace */
    int tmpfs = 0;
    json_array_foreach(json_object_get(j, "mounts"), i, v)
    {
        const char *d = json_string_value(json_object_get(v, "destination"));
        if (!strcmp(d, "/tmp") || !strcmp(d, SANDBOX_WORKSPACE)) {
            cr_assert(has_string(json_object_get(v, "options"), "noexec"));
            cr_assert(has_string(json_object_get(v, "options"), "nosuid"));
            tmpfs++;
        }
    }
    cr_assert_eq(tmpfs, 2);
    json_decref(j);
}

Test(sandbox_runsc, image_entrypoint_and_environment_merged_as_docker_does)
{
    json_t *j = default_spec(false, NULL);
    json_t *proc = json_object_get(j, "process");
    json_t *args = json_object_get(proc, "args"), *env = json_object_get(proc, "env");
    cr_assert_eq(json_array_size(args), 3);
    cr_assert_str_eq(json_string_value(json_array_get(args, 0)), "/opt/runner");
    cr_assert_str_eq(json_string_value(json_array_get(args, 2)), "node");
    cr_assert(has_string(env, "PATH=/usr/bin"));
    cr_assert(has_string(env, "HOME=/tmp"), "the body's HOME replaces the image's");
    cr_assert(!has_string(env, "HOME=/root"));
    cr_assert(has_string(env, "HOSTNAME=sgabc"));
    json_decref(j);
    /* an entrypoint in the body replaces the image's, and its empty Cmd the image's */
    struct exec_config c = config(false);
    const char *const ep[] = {"mkdir", "/x", NULL};
    char *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, NULL, ep, &body, NULL), 0);
    j = spec_of(body, IMAGE_OK);
    free(body);
    args = json_object_get(json_object_get(j, "process"), "args");
    cr_assert_eq(json_array_size(args), 2);
    cr_assert_str_eq(json_string_value(json_array_get(args, 0)), "mkdir");
    json_decref(j);
}

Test(sandbox_runsc, split_identity_gets_uid_0_and_only_its_five_capabilities)
{
    json_t *j = default_spec(true, NULL);
    json_t *proc = json_object_get(j, "process");
    json_t *caps = json_object_get(proc, "capabilities");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(proc, "user"), "uid")), 0);
    cr_assert_eq(json_array_size(json_object_get(caps, "bounding")), 5);
    cr_assert(has_string(json_object_get(caps, "effective"), "CAP_SYS_ADMIN"));
    cr_assert_eq(json_array_size(json_object_get(caps, "ambient")), 0);
    cr_assert(json_is_true(json_object_get(proc, "noNewPrivileges")));
    json_decref(j);
}

Test(sandbox_runsc, seccomp_profile_carried_over)
{
    json_t *j = default_spec(false, "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":"
                                    "[\"SCMP_ARCH_X86_64\"],\"syscalls\":[{\"names\":[\"unshare\"],"
                                    "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,"
                                    "\"value\":1,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}");
    json_t *sc = json_object_get(json_object_get(j, "linux"), "seccomp");
    cr_assert_str_eq(json_string_value(json_object_get(sc, "defaultAction")), "SCMP_ACT_ALLOW");
    json_t *rule = json_array_get(json_object_get(sc, "syscalls"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(rule, "action")), "SCMP_ACT_ERRNO");
    cr_assert_eq(json_array_size(json_object_get(rule, "args")), 1);
    json_decref(j);
}

/* A body it cannot honour is refused, never run with less. */
static void refused_with(const char *key, json_t *value)
{
    struct exec_config c = config(false);
    char *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &body, NULL), 0);
    json_t *b = json_loads(body, 0, NULL);
    free(body);
    json_object_set_new(json_object_get(b, "HostConfig"), key, value);
    body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    cr_assert_null(spec_of(body, IMAGE_OK), "%s accepted", key);
    free(body);
}

Test(sandbox_runsc, what_it_cannot_honour_is_refused)
{
    refused_with("NetworkMode", json_string("bridge"));
    refused_with("ReadonlyRootfs", json_false());
    refused_with("Privileged", json_true());
    refused_with("CapDrop", json_array());
    refused_with("SecurityOpt", json_pack("[s]", "apparmor=unconfined"));
    refused_with("SecurityOpt", json_pack("[s]", "seccomp={not json"));
}

static int parse_image(const char *text)
{
    struct sandbox_runsc_image img;
    int r = sandbox_runsc_parse_image(text, strlen(text), &img, NULL);
    if (r == 0)
        sandbox_runsc_image_clear(&img);
    return r;
}

Test(sandbox_runsc, image_config_is_validated)
{
    cr_assert_eq(parse_image(IMAGE_OK), 0);
    cr_assert_eq(parse_image("{}"), -EPROTO);
    cr_assert_eq(parse_image("{\"Id\":\"sha256:../../x\",\"Config\":{}}"), -EPROTO);
    cr_assert_eq(parse_image("{\"Id\":\"sha256:" SIXTY_FOUR "\",\"Config\":{\"Env\":[1]}}"),
                 -EPROTO);
    cr_assert_eq(parse_image("{\"Id\":\"sha256:" SIXTY_FOUR "\",\"Config\":{\"Cmd\":\"sh\"}}"),
                 -EPROTO);
    /* bounded counts */
    char big[8192] = "{\"Id\":\"sha256:" SIXTY_FOUR "\",\"Config\":{\"Cmd\":[";
    for (unsigned i = 0; i <= SANDBOX_RUNSC_ARGS_MAX; i++)
        strcat(big, i ? ",\"a\"" : "\"a\"");
    strcat(big, "]}}");
    cr_assert_eq(parse_image(big), -EPROTO);
}

/* exec_config_parse's return for args (NULL-terminated, argv[0] included);
 * the error's message into msg. */
static int parse(const char *const *args, struct exec_config *c, char *msg, size_t cap)
{
    char *argv[32] = {0};
    int n = 0;
    for (; args[n] && n < 31; n++)
        argv[n] = strdup(args[n]);
    struct sg_error e = {0};
    int r = exec_config_parse(n, argv, c, &e);
    for (int i = 0; i < n; i++)
        free(argv[i]);
    snprintf(msg, cap, "%s", e.msg);
    return r;
}

Test(sandbox_runsc, restore_defaults_and_bounds)
{
    struct exec_config c;
    char msg[512];
    const char *off[] = {"x", "--language", "python", NULL};
    cr_assert_eq(parse(off, &c, msg, sizeof(msg)), 0);
    cr_assert(!c.sandbox_restore, "off by default");
    cr_assert_eq(c.restore_max_uses, 64);
    cr_assert_eq(c.restore_max_age_s, 300);
    const char *on[] = {"x",      "--language",
                        "python", "--sandbox-backend",
                        "runsc",  "--max-sessions",
                        "0",      "--sandbox-restore",
                        "on",     "--restore-max-uses",
                        "5",      "--restore-max-age-s",
                        "30",     NULL};
    cr_assert_eq(parse(on, &c, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert(c.sandbox_restore);
    cr_assert_eq(c.restore_max_uses, 5);
    cr_assert_eq(c.restore_max_age_s, 30);
    const char *zero[] = {"x", "--language", "python", "--restore-max-uses", "0", NULL};
    cr_assert_lt(parse(zero, &c, msg, sizeof(msg)), 0);
    const char *old[] = {"x", "--language", "python", "--restore-max-age-s", "86401", NULL};
    cr_assert_lt(parse(old, &c, msg, sizeof(msg)), 0);
}

Test(sandbox_runsc, restoring_pools_launch_two_per_cpu_unless_told)
{
    cr_assert_eq(exec_default_create_parallel(false, 8), 2, "booting: 2 whatever the CPUs");
    cr_assert_eq(exec_default_create_parallel(true, 1), 2);
    cr_assert_eq(exec_default_create_parallel(true, 2), 4);
    cr_assert_eq(exec_default_create_parallel(true, 0), 2, "sysconf failed: as one CPU");
    cr_assert_eq(exec_default_create_parallel(true, -1), 2);
    cr_assert_eq(exec_default_create_parallel(true, 64), EXEC_CREATE_PARALLEL_MAX);
    struct exec_config c;
    char msg[512];
    const char *boot[] = {"x", "--language", "python", "--pool-size", "1", NULL};
    cr_assert_eq(parse(boot, &c, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert_eq(c.create_parallel, 2, "a flavour may be larger than --pool-size: no cap here");
    const char *on[] = {"x",      "--language",
                        "python", "--sandbox-backend",
                        "runsc",  "--max-sessions",
                        "0",      "--sandbox-restore",
                        "on",     NULL};
    cr_assert_eq(parse(on, &c, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert_eq(c.create_parallel,
                 exec_default_create_parallel(true, sysconf(_SC_NPROCESSORS_ONLN)));
    const char *told[] = {"x",     "--language",        "python", "--sandbox-backend",
                          "runsc", "--max-sessions",    "0",      "--sandbox-restore",
                          "on",    "--create-parallel", "3",      NULL};
    cr_assert_eq(parse(told, &c, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert_eq(c.create_parallel, 3, "an operator's value stands");
}

Test(sandbox_runsc, restore_needs_the_runsc_backend_and_python)
{
    struct exec_config c;
    char msg[512];
    const char *docker[] = {"x", "--language", "python", "--sandbox-restore", "on", NULL};
    cr_assert_lt(parse(docker, &c, msg, sizeof(msg)), 0);
    cr_assert(strstr(msg, "--sandbox-backend runsc"), "%s", msg);
    const char *node[] = {"x",      "--language",
                          "nodejs", "--sandbox-backend",
                          "runsc",  "--max-sessions",
                          "0",      "--sandbox-restore",
                          "on",     NULL};
    cr_assert_lt(parse(node, &c, msg, sizeof(msg)), 0);
    cr_assert(strstr(msg, "Python only"), "%s", msg);
    cr_assert(strstr(msg, "re-keyed"), "%s", msg);
    setenv("SANDGATE_SANDBOX_RESTORE", "on", 1);
    const char *env[] = {"x", "--language", "python", NULL};
    int r = parse(env, &c, msg, sizeof(msg));
    unsetenv("SANDGATE_SANDBOX_RESTORE");
    cr_assert_lt(r, 0, "the environment sets it too");
}
