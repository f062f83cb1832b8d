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

#define RUNNER_TOKEN_BYTES 16 /* random bytes of the report token (hex on the wire) */

struct runner_child {
    pid_t pid;
    char token[2 * RUNNER_TOKEN_BYTES + 1]; /* the report token, hex */
    int job_w;                              /* parent ends; -1 once closed */
    int out_r;
    int err_r;
    int res_r;
    int ready_r; /* EOF once the child pre-imported (or died); see runner_main.c */
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
    int status;            /* wait status */
    long max_rss_kb;       /* the child's peak RSS (0 when unknown) */
    double elapsed_ms;     /* from handing over the arguments to the stop */
    struct runner_stream stream;
};

/* Installs the SIGCHLD handler and returns the read end of its self-pipe (the
 * watch loop polls it), or a negative errno. Call once, before spawning. */
int runner_sigchld_fd(void);

/* Starts argv (execvp) as the child described above, in workspace, with the
 * environment envp. Returns 0 or a negative errno (err says what failed). */
int runner_child_spawn(char *const argv[], char *const envp[], const char *workspace,
                       struct runner_child *ret_child, struct sg_error *err);

/* SIGKILL to the child's whole process group (what the program started too). */
void runner_child_kill(const struct runner_child *child);

/* Hands the token and args (args_len bytes) to the child and watches it until
 * it stops (see enum runner_stop), sending its output to fn as it comes when
 * fn is not NULL. ret_watch is always filled; caller frees it with
 * runner_watch_free(). The child is left running (kill it with
 * runner_child_kill()). */
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
