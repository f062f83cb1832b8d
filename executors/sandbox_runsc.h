/* sandbox_runsc.h - the direct sandbox backend: runsc driven without dockerd.
 *
 * Opt-in (--sandbox-backend runsc). Each sandbox is `runsc run` on an OCI
 * bundle: the image's root file system, unpacked once per image id from a
 * created-not-started container's export and shared read-only (runsc gives
 * each sandbox its own in-memory upper layer), and a per-sandbox config.json
 * translated from the same Engine API create body the Docker path sends
 * (sandbox_create_body / sandbox_flavour_body), so both backends apply the
 * same settings. The runner's stdin, stdout and stderr are pipes the executor
 * owns; a relay thread per sandbox frames stdout and stderr the way Docker's
 * attach stream does (attach.h), so the job protocol reads one stream either
 * way. The exit status is `runsc run`'s (the container's; 128+N for a
 * signal, as Docker reports it); an out-of-memory kill is the host kernel's
 * word: the oom_kill count of the sandbox's memory cgroup, which the backend
 * creates, limits and removes itself (runsc applies the CPU and pids limits).
 *
 * dockerd stays needed for the images (inspect, export, the runtime
 * listing) but is out of the creation path. Needs host root (runsc create)
 * and a cgroup v1 memory controller; networked pools and sessions are not
 * served (main.c refuses them at start).
 */
#ifndef SG_EXEC_SANDBOX_RUNSC_H
#define SG_EXEC_SANDBOX_RUNSC_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "docker.h"
#include "sg_error.h"

#define SANDBOX_RUNSC_IMAGE_CONFIG_MAX (256u * 1024u) /* GET /images/{ref}/json */
#define SANDBOX_RUNSC_ARGS_MAX 64u                    /* entrypoint + cmd words */
#define SANDBOX_RUNSC_ENV_MAX 128u                    /* environment entries */
#define SANDBOX_RUNSC_WORD_MAX 4096u                  /* one argument or variable */
#define SANDBOX_RUNSC_IMAGE_RECHECK_MS 30000.0        /* how often an image's id is re-read */
#define SANDBOX_RUNSC_EXPORT_TIMEOUT_MS 600000        /* unpacking one image */
#define SANDBOX_RUNSC_CMD_TIMEOUT_MS 20000            /* runsc delete, list */
#define SANDBOX_RUNSC_LIST_MAX (1u << 20)             /* bytes of `runsc list` read */
#define SANDBOX_RUNSC_STATE_DEFAULT "/run/sandgate"
#define SANDBOX_RUNSC_CGROUP_V1 "/sys/fs/cgroup"

/* The parts of an image's config a container inherits (Docker's merge). */
struct sandbox_runsc_image {
    char id[72];        /* "sha256:<64 hex>" */
    json_t *entrypoint; /* array of strings or NULL */
    json_t *cmd;        /* array of strings or NULL */
    json_t *env;        /* array of "K=V" or NULL */
};

/* Pure: the image's id and config out of a GET /images/{ref}/json reply,
 * validated (id shape; arrays of bounded strings, bounded counts). Caller
 * releases with sandbox_runsc_image_clear(). -EPROTO when malformed. */
int sandbox_runsc_parse_image(const char *body, size_t len, struct sandbox_runsc_image *ret,
                              struct sg_error *err);
void sandbox_runsc_image_clear(struct sandbox_runsc_image *img);

/* Pure: the OCI runtime spec (config.json text) for one sandbox from the
 * Engine API create body (sandbox.h) and the image's config: user, argv,
 * environment, working directory, capabilities, no-new-privileges, rlimits,
 * read-only root at rootfs, tmpfs mounts, memory (limit = limit+swap), CPU
 * quota, pids, new network namespace (loopback only), the seccomp profile,
 * cgroups_path. Refuses (-EINVAL) a body it cannot honour: a network other
 * than none, a writable root, privileged. Caller frees *ret with free(). */
int sandbox_runsc_spec(const char *create_body, const struct sandbox_runsc_image *img,
                       const char *rootfs, const char *hostname, const char *cgroups_path,
                       char **ret, struct sg_error *err);

struct sandbox;
struct docker_state;
struct sandbox_runsc;
struct sandbox_runsc_box;

struct sandbox_runsc_config {
    const char *runsc_path;  /* the binary (runsc_info's path) */
    const char *platform;    /* "systrap", ...; "" or "default": runsc's own */
    const char *state_dir;   /* this instance's: runsc's --root, bundles, images */
    const char *instance;    /* [A-Za-z0-9._-]: the cgroup parent's name */
    const char *cgroup_root; /* SANDBOX_RUNSC_CGROUP_V1 unless a test says */
    /* --sandbox-restore: pool sandboxes restored from a checkpoint of one
     * warm sandbox per flavour, a new checkpoint (generation) after
     * restore_max_uses restores or restore_max_age_ms. */
    bool restore;
    unsigned restore_max_uses;
    double restore_max_age_ms;
};

#define SANDBOX_RUNSC_CHECKPOINT_TIMEOUT_MS 60000 /* runsc checkpoint, restore */
#define SANDBOX_RUNSC_GOLDEN_READY_MS 30000       /* a golden sandbox's ready line */
#define SANDBOX_RUNSC_BACKOFF_MIN_MS 2000.0       /* after a failed checkpoint or restore */
#define SANDBOX_RUNSC_BACKOFF_MAX_MS 60000.0
#define SANDBOX_RUNSC_GENERATIONS_MAX 16u /* flavours served by restore */

/* The restore figures (/healthz, /metrics). */
struct sandbox_runsc_gen_stats {
    char pool[128]; /* the pool's label (<instance>.<flavour>) */
    unsigned seq;   /* its generation number, from 1 */
    unsigned uses;  /* restores from the current checkpoint */
    double age_s;   /* of the current checkpoint; 0 with none */
};
struct sandbox_runsc_stats {
    bool restore;
    unsigned long boots, restores, fallbacks, checkpoints, checkpoint_failures;
    unsigned n;
    struct sandbox_runsc_gen_stats g[SANDBOX_RUNSC_GENERATIONS_MAX];
};
void sandbox_runsc_get_stats(struct sandbox_runsc *rs, struct sandbox_runsc_stats *ret);

/* Make the state directory, delete every sandbox an earlier life of this
 * instance left (`runsc list` in its root, then `runsc delete --force`),
 * their bundles, cgroups and checkpoints. *ret_reaped counts them. */
int sandbox_runsc_new(const struct sandbox_runsc_config *cfg, struct docker_client *dc,
                      struct sandbox_runsc **ret, unsigned *ret_reaped, struct sg_error *err);

/* Unpack image (a reference) now unless its current id is already there. */
int sandbox_runsc_prepare(struct sandbox_runsc *rs, const char *image, struct sg_error *err);

/* Call after every sandbox was destroyed: removes the cgroup parent and the
 * bundles directory (the unpacked images stay, keyed by id). NULL is a no-op. */
void sandbox_runsc_free(struct sandbox_runsc *rs);

/* sandbox.h's launch, destroy and dead state for this backend. */
int sandbox_runsc_launch(struct sandbox_runsc *rs, const char *body, struct sandbox *ret,
                         struct sg_error *err);
int sandbox_runsc_destroy(struct sandbox *sb, struct sg_error *err);
int sandbox_runsc_state(struct sandbox *sb, long timeout_ms, struct docker_state *ret,
                        struct sg_error *err);
/* Has the host killed a process of this sandbox for memory (its cgroup's
 * oom_kill count)? */
int sandbox_runsc_oom(const struct sandbox *sb, bool *ret_seen, struct sg_error *err);

#endif
