/* job.h - one job on one sandbox: send the job line over the attach stream,
 * read until the runner's result line, enforce the wall-clock deadline and
 * the byte cap, and classify the end.
 */
#ifndef SG_EXEC_JOB_H
#define SG_EXEC_JOB_H

#include <stddef.h>

#include "attach.h"
#include "buf.h"
#include "docker.h"
#include "outcome.h"
#include "sandbox.h"

/* The runner enforces the time limit itself and reports it; the executor's
 * own deadline is this much later and kills the sandbox. */
#define JOB_GRACE_MS 1500u
#define JOB_DIAG_MAX (16u * 1024u) /* runner diagnostics kept from stderr */
#define JOB_RESULT_SLACK (256u * 1024u)
#define JOB_DEAD_WAIT_MS 5000L /* how long to wait for a dead sandbox's state */
/* A sandbox killed by SIGKILL that dockerd did not flag OOMKilled: how long to
 * look for its "oom" event, which can arrive after the exit, and how often. */
#define JOB_OOM_EVENT_WAIT_MS 1500.0
#define JOB_OOM_EVENT_STEP_MS 150L
/* Artifact bytes a result may carry: the runners' default total (20 MiB). */
#define JOB_ARTIFACTS_MAX (20u * 1024u * 1024u)
#define JOB_NONCE_LEN 32

/* What a job may be watched for besides its sandbox (all optional). */
struct job_hooks {
    int cancel_fd;         /* readable: the job was cancelled; -1 none */
    int client_fd;         /* POLLRDHUP / POLLHUP: the streaming client went; -1 none */
    unsigned heartbeat_ms; /* call heartbeat after this long without a frame; 0 never */
    /* A stream frame of the runner (name "stdout" or "stderr", text a JSON
     * string, borrowed). A negative return ends the job as client_gone. */
    int (*frame)(void *ud, const char *name, json_t *text);
    int (*heartbeat)(void *ud); /* negative: the client went */
    /* When set, the client's going does not end the job: this is called once
     * (a session cell is interrupted as by a cancel, and its result still
     * read), and no frame or heartbeat is sent after it. */
    void (*client_gone)(void *ud);
    void *ud;
    /* The daemon's memory budget (membudget.h), or NULL: each growth of the
     * result line is reserved in it JOB_LINE_MEMORY_COPIES times before the
     * buffer grows: the line and its parsed copy while it is parsed, then
     * (the line freed by job_io_free() before the answer is made) the parsed
     * copy and the answer encoded from it into one buffer of its exact size
     * (json_out.h) or straight into the client's stream. Handed to the
     * caller by job_run() (*ret_reserved). A growth it refuses ends the job
     * as output over its cap (JOB_END_OVERFLOW, io->budget_refused set). */
    struct sg_membudget *budget;
    /* Called once the job has been written to the sandbox (or its write
     * failed), with sent_ud: the request's input may be let go then. */
    void (*sent)(void *sent_ud);
    void *sent_ud;
};
#define JOB_LINE_MEMORY_COPIES 2u

enum job_end {
    JOB_END_RESULT,    /* a complete result line arrived */
    JOB_END_EOF,       /* the stream closed first: the sandbox died */
    JOB_END_TIMEOUT,   /* deadline passed */
    JOB_END_OVERFLOW,  /* more bytes than the result may hold */
    JOB_END_IO,        /* write/read failed on the stream */
    JOB_END_CANCELLED, /* cancelled, or the streaming client went (io->cancel_detail) */
};

struct job_io {
    enum job_end end;
    char nonce[JOB_NONCE_LEN + 1]; /* the job's nonce: only a line echoing it is a result */
    struct sg_buf line;            /* the stdout line being read */
    size_t stdout_total;           /* all stdout bytes so far, capped like the line */
    json_t *result;                /* the parsed result line (when end == RESULT), owned */
    struct sg_buf diag;            /* runner stderr, truncated at JOB_DIAG_MAX */
    int io_errno;
    double run_ms;                 /* from the first job byte sent to the end */
    const struct job_hooks *hooks; /* borrowed, NULL: none */
    const char *cancel_detail;     /* static: "cancelled" or "client_gone" */
    int sink_failed;               /* a frame hook said the client went */
    int client_left;               /* the client went and hooks->client_gone was told */
    double last_frame_ms;          /* attach_now_ms() of the last frame or heartbeat */
    size_t reserved;               /* bytes reserved in hooks->budget for line */
    int budget_refused;            /* the budget refused the line's growth */
};

/* Initialise io (its buffers) with the cap on stdout bytes and the job's
 * nonce (NULL: any line is a result, for probes); free with job_io_free(). */
void job_io_init(struct job_io *io, size_t max_stdout, const char *nonce);
void job_io_free(struct job_io *io);

/* Pure: feed bytes from the attach stream into io. Returns 1 when the result
 * line is complete (io->result set), 0 for more, or a negative error
 * (-EPROTO malformed frames, -E2BIG stdout over its cap, -ECONNRESET a frame
 * hook failed). Lines that are blank, not JSON, or lack sandgate_runner:1 and
 * the nonce are ignored; a line with them and a "stream" key is a stream
 * frame (PROTOCOL.md), given to io->hooks->frame when it is well-formed,
 * never a result. */
int job_feed(struct job_io *io, struct attach_parser *p, const void *data, size_t len);

/* Write the job line and read until the result, EOF, deadline or (with
 * io->hooks) a cancel or the client's hang-up. */
void job_exchange(int fd, const char *job_line, size_t len, unsigned deadline_ms,
                  struct job_io *io);

/* The same with the job as a JSON object, written to the stream as it is
 * encoded (attach_write_json: no copy of the line is built, the deadline
 * bounds the write as it does the read). job is consumed: released as soon
 * as it is written, then io->hooks->sent is called (when set). */
void job_exchange_json(int fd, json_t *job, unsigned deadline_ms, struct job_io *io);

/* Read until the result line for io->nonce, EOF, error or deadline_ms from
 * now (nothing is written: sessions write their own lines). */
void job_read_result(int fd, unsigned deadline_ms, struct job_io *io);

/* Classify how io ended into *o (the result line, or the sandbox's state
 * when the stream closed). */
/* runsc 20240729 ends the program that reaches the container's memory limit
 * with exit status 1 and keeps the sandbox (runsc 20221219 killed the whole
 * sandbox); the engine reports an "oom" event for the container either way.
 * A program error with a positive exit becomes the memory limit when the
 * engine reports one since the job started (waits up to
 * JOB_OOM_EVENT_WAIT_MS for it): the engine's word, never the program's.
 * Callers ask only when the job came near the limit or its interpreter died. */
void job_confirm_oom_exit(struct docker_client *dc, const struct sandbox *sb, double run_ms,
                          struct exec_outcome *o);

void job_classify(struct docker_client *dc, struct sandbox *sb, struct job_io *io,
                  struct exec_outcome *o);

/* Cap on the result line for a job with these limits (stdout + stderr each up
 * to max_output, JSON escaping, artifacts). */
size_t job_result_cap(size_t max_output, size_t max_artifacts);

/* Pure: whether line[0..len) is the runner's result for nonce; the parsed
 * object goes to *ret (caller decrefs) when it is. */
int job_line_is_result(const char *line, size_t len, const char *nonce, json_t **ret);

/* Run a whole job on sb and classify it into *o (outcome_init'ed by caller).
 * job is consumed as job_exchange_json() says. sb stays owned by the caller (who tears it down
 * afterwards). What the result line reserved in hooks->budget is added to *ret_reserved: the caller
 * releases it once the answer made of the result is gone. */
void job_run(struct docker_client *dc, struct sandbox *sb, const char *nonce, json_t *job,
             unsigned timeout_ms, size_t max_output, const struct job_hooks *hooks,
             struct exec_outcome *o, double *ret_run_ms, size_t *ret_reserved);

#endif
