/* runner_watch.h - the child process that runs the program, seen from the
 * protocol-holding parent (sandgate-runner).
 *
 * The child is started before the job exists, in its own process group, with
 *   fd 0  /dev/null           fd 3  job pipe: the report token and '\n', then
 *   fd 1  stdout pipe               the arguments (JSON), then EOF
 *   fd 2  stderr pipe         fd 4  result pipe: one report line, '\n'-terminated
 *                             fd 5  ready pipe: closed once SANDGATE_PREIMPORT is done
 * and nothing else open. The parent then watches the pipes until the report
 * line is complete (the answer: it does not wait for the child to exit), the
 * child exits without one, the deadline passes or an output cap is hit.
 *
 * The report token is fresh per child (one child per job), made by
 * runner_child_spawn() and handed over on fd 3 before the program is
 * compiled; the child's runner keeps it where the program's code cannot
 * reach it and writes it before its report. The program can write to fd 4
 * too (it is the child's), so a line that does not carry the token is the
 * program's, not a report: it is dropped and the watch goes on.
 */
#ifndef RUNNER_WATCH_H
#define RUNNER_WATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"
#include "sg_error.h"

/* The job's identity when the runner runs as root (identity split,
 * images/nodejs/README.md): the node child drops to it before the job, and
 * the runner writes and reads the workspace under it. */
#define RUNNER_JOB_UID 65534
#define RUNNER_JOB_GID 65534
#define RUNNER_TOKEN_BYTES 16 /* random bytes of the report token (hex on the wire) */

struct runner_child {
    pid_t pid;
    char token[2 * RUNNER_TOKEN_BYTES + 1]; /* the report token, hex */
    int job_w;                              /* parent ends; -1 once closed */
    int out_r;
    int err_r;
    int res_r;
    int ready_r;  /* EOF once the child pre-imported (or died); see runner_main.c */
    int split;    /* identity split: own PID and mount namespace, drops to the job's uid */
    int verified; /* runner_child_verify() succeeded */
};

enum runner_stop {
    RUNNER_RUNNING = 0,
    RUNNER_REPORTED,     /* the report line is complete (the child may still run) */
    RUNNER_EXITED,       /* the child exited (report complete or not) */
    RUNNER_TIMEOUT,      /* the deadline passed */
    RUNNER_OUTPUT_LIMIT, /* stdout, stderr or the report went over the cap */
};

/* Stream frames (executors/PROTOCOL.md): output goes out at a newline or at
 * most RUNNER_STREAM_FLUSH_MS after its first unsent byte, in pieces of at
 * most RUNNER_STREAM_FRAME_MAX bytes cut at UTF-8 character boundaries. Only
 * what the capped buffers kept is sent. */
#define RUNNER_STREAM_FLUSH_MS 50.0
#define RUNNER_STREAM_FRAME_MAX (16u * 1024u)

/* Receives one piece of output (name "stdout" or "stderr"). */
typedef void (*runner_stream_fn)(void *ud, const char *name, const char *data, size_t len);

struct runner_stream {
    runner_stream_fn fn; /* NULL: no streaming */
    void *ud;
    size_t sent[2];  /* bytes of out / err already sent */
    double since[2]; /* when the first unsent byte arrived; 0 = none waits */
};

struct runner_watch {
    struct sg_buf out; /* what the child wrote, each capped at max_output */
    struct sg_buf err;
    struct sg_buf res; /* the report (the token and what precedes it removed) */
    enum runner_stop stop;
    int reported;          /* res holds the token-carrying report */
    unsigned forged_lines; /* lines on fd 4 without the token (dropped) */
    const char *limit_hit; /* "stdout", "stderr" or "result" with RUNNER_OUTPUT_LIMIT */
    int reaped;            /* status is valid */
    int filter_killed;     /* a stuck exit seen (runner_child_stuck()): the filter's kill */
    int stuck_ticks;       /* runner_watch_check_stuck()'s count */
    double next_stuck_check;
    int status;      /* wait status */
    long max_rss_kb; /* the child's peak RSS (0 when unknown): wait4's, never the report's */
    const char *sigsys_type; /* set by the caller: the denial type a SIGSYS death is (NULL: none) */
    double elapsed_ms;       /* from handing over the arguments to the stop */
    struct runner_stream stream;
};

/* Installs the SIGCHLD handler and returns the read end of its self-pipe (the
 * watch loop polls it), or a negative errno. Call once, before spawning. */
int runner_sigchld_fd(void);

/* Starts argv (execvp) as the child described above, in workspace, with the
 * environment envp. With split (the caller is uid 0) the child is PID 1 of a
 * PID namespace of its own and has a mount namespace of its own with a /proc
 * of that PID namespace (this process, its environment and its fds are not
 * in it); it starts as root and drops itself to RUNNER_JOB_UID before it
 * closes the ready pipe (runner.js), which runner_child_verify() checks.
 * Returns 0 or a negative errno (err says what failed). */
int runner_child_spawn(char *const argv[], char *const envp[], const char *workspace, int split,
                       struct runner_child *ret_child, struct sg_error *err);

/* Before the job is handed over (split only; else 0 at once): waits for the
 * ready pipe's EOF (at most RUNNER_READY_MAX_MS) and checks in /proc that
 * every thread of the child runs as uid and gid RUNNER_JOB_UID/GID (real,
 * effective, saved, filesystem), with no supplementary group but that gid
 * and no capability. Once it succeeded, returns 0 at once (call it early:
 * as soon as the ready pipe ends, before any job). Returns 0, or -EPERM /
 * -ETIMEDOUT (err says what). */
#define RUNNER_READY_MAX_MS 60000
int runner_child_verify(struct runner_child *child, struct sg_error *err);

/* Pure: 0 when the text of a /proc/<pid>/status is the job's identity as
 * runner_child_verify() requires it, else -EPERM. */
int runner_status_is_job(const char *status);

/* The peak RSS of a live child from /proc (VmHWM), or its current RSS
 * (VmRSS) where the kernel keeps no peak (gVisor); 0 if unreadable. */
long runner_child_rss_kb(pid_t pid);

/* gVisor (20240729, systrap) does not finish a seccomp kill of a
 * multi-threaded process: the child becomes a zombie with no memory that its
 * parent is never told of. In this sandbox nothing else leaves the child so:
 * call runner_child_stuck() at most every RUNNER_STUCK_CHECK_MS while the
 * child runs; it returns 1 once /proc shows it a zombie on
 * RUNNER_STUCK_CHECKS checks in a row (*ticks counts them; start at 0). */
#define RUNNER_STUCK_CHECK_MS 50.0
#define RUNNER_STUCK_CHECKS 3
int runner_child_stuck(pid_t pid, int *ticks);

/* runner_child_stuck() on w's child when due: a stuck child is killed and
 * reaped, w->filter_killed set and w->stop RUNNER_EXITED. Returns 1 then. */
struct runner_watch;
int runner_watch_check_stuck(struct runner_child *c, struct runner_watch *w);

/* Pure: the state letter of a /proc/<pid>/stat text ('?' when unreadable). */
char runner_stat_state(const char *stat);

/* SIGKILL to the child's whole process group (what the program started too). */
void runner_child_kill(const struct runner_child *child);

/* Hands the token and args (args_len bytes) to the child and watches it until
 * it stops (see enum runner_stop), sending its output to fn as it comes when
 * fn is not NULL. ret_watch is always filled; caller frees it with
 * runner_watch_free(). Then the child's process group is killed. Its exit
 * status, signal and memory are this process's observations, never the
 * report's: wait4's when it exited (or was killed for a limit), else the
 * highest /proc reading taken while it ran and at the report. */
void runner_watch_run(struct runner_child *child, int sigchld_fd, const char *args, size_t args_len,
                      size_t max_output, unsigned timeout_ms, runner_stream_fn fn, void *ud,
                      struct runner_watch *ret_watch);

/* The stream frames of a watch loop of one's own (the session runner's
 * cells): w->stream set, note new bytes of stream i (0 stdout, 1 stderr;
 * old its length before), tick every round (returns ms until the next flush
 * is due, -1 none), and finish (sends all that is left) at the end. */
void runner_watch_stream_note(struct runner_watch *w, int i, size_t old);
double runner_watch_stream_tick(struct runner_watch *w);
void runner_watch_stream_finish(struct runner_watch *w);

/* Pure: the length of data[0..len) without a UTF-8 sequence cut at its end. */
size_t runner_utf8_boundary(const char *data, size_t len);

/* NULL is a no-op. */
void runner_watch_free(struct runner_watch *watch);

#endif
