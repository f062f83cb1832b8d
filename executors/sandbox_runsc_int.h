/* sandbox_runsc_int.h - what sandbox_runsc.c and sandbox_runsc_io.c share. */
#ifndef SG_EXEC_SANDBOX_RUNSC_INT_H
#define SG_EXEC_SANDBOX_RUNSC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "buf.h"
#include "sandbox_runsc.h"

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
};

int srs_spawn(const char *const argv[], int in, int out, int errfd, pid_t *ret_pid);
int srs_reap(pid_t pid, double deadline, int *ret_status);
int srs_exit_code(int status);
/* Run argv to its end (killed after timeout_ms): its exit code, and its
 * stdout into out (capped; NULL: discarded). in: its stdin (-1: none). */
int srs_run(const char *const argv[], int in, struct sg_buf *out, long timeout_ms, int *ret_code);
int srs_start(struct sandbox_runsc_box *b, const char *const argv[], int *ret_fd);

#endif
