/* sandbox.h - one single-use sandbox container: its create spec and launch.
 *
 * A launched sandbox is created, attached (stdin/stdout/stderr, before start
 * so nothing is lost) and started; its main process is the language runner,
 * blocked reading its one job from stdin.
 */
#ifndef SG_EXEC_SANDBOX_H
#define SG_EXEC_SANDBOX_H

#include "exec_config.h"
#include "docker.h"
#include "sg_error.h"

#define SANDBOX_ATTACH_TIMEOUT_MS 10000
#define SANDBOX_REMOVE_TIMEOUT_MS 20000L
#define SANDBOX_WORKSPACE "/workspace"
#define SANDBOX_UID "65534"
/* SETUID/SETGID: the job's uid; SETPCAP: empty its bounding set; SYS_ADMIN:
 * its namespaces and mounts; KILL: signal the job, another uid. */
#define SANDBOX_SPLIT_CAPS "SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "KILL"

struct sandbox {
    char id[DOCKER_ID_LEN + 1];
    int fd;          /* the attach stream; -1 when closed */
    double ready_ms; /* monotonic time the container was started */
    /* How long each step of sandbox_launch took (ms): Engine API create,
     * attach, start (which returns once runsc has booted the sandbox). */
    float create_ms, attach_ms, start_ms;
    /* Its address on the egress network, looked up once at launch (a
     * networked pool's sandbox; "" otherwise): the key of the job's
     * allow-list at the proxy, kept off the job's path. */
    char ip[DOCKER_IP_TEXT_MAX];
    /* The direct backend's sandbox (sandbox_runsc.h); NULL: a Docker container. */
    struct sandbox_runsc_box *runsc;
    /* Restored from a checkpoint of a warm sandbox (--sandbox-restore): warm
     * when the launch returns; its runner already sent its ready line, before
     * the checkpoint, and sends nothing until its job. */
    bool restored;
};

struct sandbox_runsc;

/* From now on sandbox_launch() starts sandboxes with runsc directly
 * (--sandbox-backend runsc); NULL: through dockerd (the default). Call
 * before any pool starts. */
void sandbox_use_runsc(struct sandbox_runsc *rs);

/* The direct backend in use, or NULL (the Docker path). */
struct sandbox_runsc *sandbox_runsc_in_use(void);

/* The JSON body of POST /containers/create for cfg: runtime, no network,
 * read-only root, tmpfs /tmp and /workspace, uid 65534, no capabilities,
 * no-new-privileges, memory = memory+swap, CPU quota, pids, nofile/fsize,
 * labels marking the owner. For an image labelled
 * org.sandgate.identity=split (cfg->identity_split) the runner starts as
 * uid 0 with only SANDBOX_SPLIT_CAPS, which it needs to put the job in its
 * own mount and PID namespace, view and uid 65534 with none of them
 * (images/python/runner.py); everything else is the same. seccomp_json
 * (compact profile text) may be NULL; entrypoint (NULL-terminated argv)
 * overrides the image's when non-NULL. *ret_body is NUL-terminated; caller
 * frees with free(). */
int sandbox_create_body(const struct exec_config *cfg, const char *seccomp_json,
                        const char *const *entrypoint, char **ret_body, struct sg_error *err);

/* The create body of one pool flavour: base_body (from sandbox_create_body)
 * with SANDGATE_PREIMPORT=preimport in the environment (the runner imports
 * those modules before the job arrives; this replaces any value baked into
 * the image), the label EXEC_LABEL_POOL=pool_label, by which the pool
 * finds its own containers, and, when image is not NULL or empty, that image
 * (a package set's) instead of base_body's. Caller frees *ret_body with free(). */
int sandbox_flavour_body(const char *base_body, const char *pool_label, const char *preimport,
                         const char *image, char **ret_body, struct sg_error *err);

/* Create, attach and start. On failure nothing is left behind (the container,
 * if created, is removed). */
int sandbox_launch(struct docker_client *dc, const char *body, struct sandbox *ret,
                   struct sg_error *err);

/* Close the stream and force-remove the container. Errors are returned so
 * the caller can retry later; the fd is closed either way. */
int sandbox_destroy(struct docker_client *dc, struct sandbox *sb, struct sg_error *err);

/* A dead sandbox's exit status and whether it was OOM-killed, waiting up
 * to timeout_ms for it to end (Docker: wait + inspect; runsc: its exit
 * status and memory cgroup). */
int sandbox_dead_state(struct docker_client *dc, struct sandbox *sb, long timeout_ms,
                       struct docker_state *ret, struct sg_error *err);

/* Did the engine (dockerd's "oom" events between since_s and until_s, Unix
 * seconds) or the host (the direct backend's cgroup) report an
 * out-of-memory kill in this sandbox? */
int sandbox_oom_event(struct docker_client *dc, const struct sandbox *sb, double since_s,
                      double until_s, bool *ret_seen, struct sg_error *err);

/* True when the idle container's stream shows it is no longer waiting (EOF,
 * error, or unexpected output): such a sandbox must not get a job. */
int sandbox_stale(const struct sandbox *sb);

#endif
