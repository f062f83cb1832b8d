#include "seccomp.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "sandbox.h"

int seccomp_load(const char *path, char **ret_json, struct sg_error *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return sg_error_set(err, -EINVAL, "seccomp profile %s: %s (line %d)", path, je.text,
                            je.line);
    int r = 0;
    if (!json_is_object(j) || !json_is_string(json_object_get(j, "defaultAction")) ||
        (json_object_get(j, "syscalls") && !json_is_array(json_object_get(j, "syscalls"))))
        r = sg_error_set(err, -EINVAL,
                         "seccomp profile %s: not a Docker profile (needs defaultAction and a "
                         "syscalls array)",
                         path);
    else if (!(*ret_json = json_dumps(j, JSON_COMPACT)))
        r = sg_error_set(err, -ENOMEM, "out of memory");
    else if (strlen(*ret_json) > SECCOMP_PROFILE_MAX) {
        free(*ret_json);
        *ret_json = NULL;
        r = sg_error_set(err, -E2BIG, "seccomp profile %s exceeds %u bytes", path,
                         SECCOMP_PROFILE_MAX);
    }
    json_decref(j);
    return r;
}

static int is_probe_call(const char *name)
{
    return strcmp(name, "mkdir") == 0 || strcmp(name, "mkdirat") == 0;
}

/* Remove the probe's syscalls from a rule's names (so no other rule allows
 * them); drop a rule left with no names. Returns 1 when the rule stays. */
static int strip_rule(json_t *rule)
{
    json_t *names = json_object_get(rule, "names");
    json_t *name = json_object_get(rule, "name");
    if (json_is_string(name) && is_probe_call(json_string_value(name)))
        return 0;
    if (!json_is_array(names))
        return 1;
    for (size_t i = json_array_size(names); i-- > 0;) {
        const char *n = json_string_value(json_array_get(names, i));
        if (n && is_probe_call(n))
            json_array_remove(names, i);
    }
    return json_array_size(names) > 0;
}

int seccomp_probe_profile(const char *profile_json, char **ret_json, struct sg_error *err)
{
    json_t *j = json_loads(profile_json, 0, NULL);
    json_t *sys = json_object_get(j, "syscalls");
    int r = 0;
    if (!json_is_object(j) || (sys && !json_is_array(sys))) {
        r = sg_error_set(err, -EINVAL, "seccomp profile is not a Docker profile");
        goto out;
    }
    if (!sys) {
        sys = json_array();
        json_object_set_new(j, "syscalls", sys);
    }
    for (size_t i = json_array_size(sys); i-- > 0;)
        if (!strip_rule(json_array_get(sys, i)))
            json_array_remove(sys, i);
    json_array_append_new(sys, json_pack("{s:[s,s],s:s,s:i}", "names", "mkdir", "mkdirat", "action",
                                         "SCMP_ACT_ERRNO", "errnoRet", EPERM));
    *ret_json = json_dumps(j, JSON_COMPACT);
    if (!*ret_json)
        r = sg_error_set(err, -ENOMEM, "out of memory");
out:
    json_decref(j);
    return r;
}

int seccomp_probe_denied(int exit_code, const char *output)
{
    return exit_code != 0 && output && strstr(output, "Operation not permitted") != NULL;
}

int seccomp_probe(struct docker_client *dc, const struct exec_config *cfg, const char *probe_json,
                  struct sg_error *err)
{
    static const char *const argv[] = {"mkdir", SECCOMP_PROBE_DIR, NULL};
    char *body = NULL;
    struct sandbox sb = {.fd = -1};
    struct job_io io;
    job_io_init(&io, 4096, NULL);
    int r = sandbox_create_body(cfg, probe_json, argv, &body, err);
    if (r == 0)
        r = sandbox_launch(dc, body, &sb, err);
    if (r < 0)
        goto out;
    /* mkdir reads nothing: the stream just runs to EOF. */
    job_exchange(sb.fd, "\n", 1, SECCOMP_PROBE_TIMEOUT_MS, &io);
    int exit_code = -1;
    if (io.end != JOB_END_EOF && io.end != JOB_END_IO) {
        r = sg_error_set(err, -ETIMEDOUT, "seccomp probe did not finish");
        goto out;
    }
    struct docker_state st;
    if ((r = sandbox_dead_state(dc, &sb, SECCOMP_PROBE_TIMEOUT_MS, &st, err)) < 0)
        goto out;
    exit_code = st.exit_code;
    if (!seccomp_probe_denied(exit_code, io.diag.data))
        r = sg_error_set(err, -EPERM,
                         "the seccomp profile is NOT enforced by runtime '%s' (a syscall it "
                         "denies succeeded: exit %d). For gVisor, register runsc with "
                         "\"runtimeArgs\": [\"--network=none\", \"--oci-seccomp\"] in "
                         "/etc/docker/daemon.json and reload dockerd (kill -HUP)",
                         cfg->runtime, exit_code);
out:
    if (sb.id[0])
        sandbox_destroy(dc, &sb, NULL);
    job_io_free(&io);
    free(body);
    return r;
}
