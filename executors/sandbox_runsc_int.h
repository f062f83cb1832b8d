/* sandbox_runsc_int.h - what sandbox_runsc.c and sandbox_runsc_io.c share. */
#ifndef SG_EXEC_SANDBOX_RUNSC_INT_H
#define SG_EXEC_SANDBOX_RUNSC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"
#include "exec_config.h"
#include "flavour.h"
#include "sandbox_runsc.h"

#define SRS_IMAGES_MAX 24u /* distinct images (flavours' package sets) */
#define SRS_ARGV_MAX 16
#define SRS_DIR_MAX 1024 /* the state directory (exec_config's runsc_state_dir) */
#define SRS_PATH_MAX (SRS_DIR_MAX + 256)

struct srs_image {
    char ref[EXEC_NAME_MAX + FLAVOUR_IMAGE_MAX];
    struct sandbox_runsc_image img;
    char rootfs[SRS_PATH_MAX];
    double checked_at;
};

struct srs_restore; /* sandbox_runsc_restore.c */

struct sandbox_runsc {
    char runsc[PATH_MAX], platform[32], state[SRS_DIR_MAX];
    char root[SRS_DIR_MAX + 16], bundles[SRS_DIR_MAX + 16], images[SRS_DIR_MAX + 16];
    char checkpoints[SRS_DIR_MAX + 16];
    char cg_root[256], cg_parent[96], memcg[512];
    struct docker_client *dc;
    pthread_mutex_t mu;
    struct srs_image img[SRS_IMAGES_MAX];
    unsigned n_img;
    struct srs_restore *restore; /* NULL: every sandbox boots */
    unsigned long boots;         /* under mu */
};

/* One sandbox: its `runsc run`, the relay of its stdio, where it lives. */
struct sandbox_runsc_box {
    struct sandbox_runsc *rs;
    char id[40];
    char bundle[1200];
    char memcg[600];  /* its memory cgroup directory */
    pid_t pid;        /* `runsc run` */
    int pidfd;        /* its pidfd: a signal never reaches a reused pid; -1 none */
    int in, out, err; /* the runner's stdio pipes (our ends); -1 closed */
    int sock;         /* the relay's end of the executor's stream */
    pthread_t relay;
    bool relay_running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool exited; /* under mu */
    int exit_code;
    int wait_out; /* a restored sandbox's `runsc wait` stdout (its exit status); -1 */
};

void srs_runsc_argv(const struct sandbox_runsc *rs, const char **argv, const char *const *words);
int srs_rm_tree(const char *path);
int srs_mkdir_p(const char *path, mode_t mode);
/* runsc delete --force, a few tries. */
int srs_delete(struct sandbox_runsc *rs, const char *id);
struct sandbox_runsc_box *srs_box_new(struct sandbox_runsc *rs);
void srs_box_free(struct sandbox_runsc_box *b);
/* The box's bundle (config.json from body; hostname NULL: from its id) and
 * memory cgroup; ret_image_id (72 bytes) gets the image's id. */
int srs_box_prepare(struct sandbox_runsc *rs, struct sandbox_runsc_box *b, const char *body,
                    const char *hostname, char *ret_image_id, struct sg_error *err);
/* The end of a launch into b: on failure (r < 0) b is freed and r returned;
 * else ret holds it (id, timings from t0 to t1 to now). */
int srs_launched(struct sandbox_runsc_box *b, int r, double t0, double t1, struct sandbox *ret);
/* A sandbox booted with `runsc run` (sandbox.h's launch without restore);
 * hostname as srs_box_prepare's. */
int srs_boot(struct sandbox_runsc *rs, const char *body, const char *hostname, struct sandbox *ret,
             struct sg_error *err);

int srs_spawn(const char *const argv[], int in, int out, int errfd, pid_t *ret_pid);
int srs_reap(pid_t pid, double deadline, int *ret_status);
int srs_exit_code(int status);
/* Run argv to its end (killed after timeout_ms): its exit code, and its
 * stdout into out (capped; NULL: discarded). in: its stdin (-1: none). */
int srs_run(const char *const argv[], int in, struct sg_buf *out, long timeout_ms, int *ret_code);
int srs_start(struct sandbox_runsc_box *b, const char *const argv[], int *ret_fd);
/* Like srs_run, with stderr into out too (a runsc call's error message). */
int srs_run_both(const char *const argv[], struct sg_buf *out, long timeout_ms, int *ret_code);
/* A restored sandbox: `runsc create` with the runner's stdio on three new
 * pipes (the restored runner's fds 0-2 are these), `runsc restore --detach`
 * from the image, then `runsc wait` as the process the relay reaps (its
 * stdout carries the exit status). Each call bounded; on failure nothing of
 * this box runs (the sandbox deleted) and errbuf says why. */
int srs_start_restored(struct sandbox_runsc_box *b, const char *const create[],
                       const char *const restore[], const char *const wait[], int *ret_fd,
                       struct sg_buf *errbuf);

/* sandbox_runsc_restore.c: the checkpoint generations. */
int srs_restore_new(struct sandbox_runsc *rs, const struct sandbox_runsc_config *cfg,
                    struct sg_error *err);
void srs_restore_free(struct sandbox_runsc *rs);
/* A restored sandbox for body: 0, or -EAGAIN when no checkpoint serves now
 * (being made, backing off), or another error after a failed checkpoint or
 * restore (counted, logged, backed off): the caller boots instead. */
int srs_restore_launch(struct sandbox_runsc *rs, const char *body, struct sandbox *ret,
                       struct sg_error *err);

#endif
