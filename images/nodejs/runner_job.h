/* runner_job.h - the job line of executors/PROTOCOL.md, as the sandbox's
 * protocol-holding process (sandgate-runner) reads it: settings from the
 * environment, parsing and validating the one job line, and writing the
 * program and its input files into the workspace.
 *
 * Everything here comes from the executor, which has validated it already;
 * the runner checks it again because a bad line must become a clear bad_job
 * result, never a crash or a file outside the workspace.
 */
#ifndef RUNNER_JOB_H
#define RUNNER_JOB_H

#include <stddef.h>

#include <jansson.h>

#include "sg_error.h"

#define RUNNER_NONCE_MIN 16
#define RUNNER_NONCE_MAX 128
#define RUNNER_DEFAULT_TIMEOUT_MS 10000
#define RUNNER_MAX_TIMEOUT_MS 600000
#define RUNNER_DEFAULT_MAX_OUTPUT (1u << 20)
#define RUNNER_MAX_MAX_OUTPUT (64u << 20)
#define RUNNER_ARTIFACT_DIR "artifacts"

/* Tunables, read once from SANDGATE_* variables (defaults and bounds as in
 * images/python/runner.py). */
struct runner_cfg {
    const char *workspace; /* where the program runs; borrowed */
    const char *main_file; /* the program's file name in it; borrowed */
    const char *preimport; /* borrowed from the environment; "" when unset */
    size_t max_job;
    size_t max_files;
    size_t max_files_bytes;
    size_t art_files;
    size_t art_bytes;
    size_t art_total;
    int split; /* --identity-split: the job runs as RUNNER_JOB_UID (runner_main.c) */
};

struct runner_file {
    char *name;          /* owned */
    unsigned char *data; /* owned */
    size_t len;
};

struct runner_job {
    char nonce[RUNNER_NONCE_MAX + 1]; /* "" when the job carried none */
    char *code;                       /* owned, code_len bytes (+ NUL) */
    size_t code_len;
    /* owned: what the child gets on fd 3, compact JSON:
     * {"arguments": {...}, "runtime": {...} | null, "mode"?: "script"} (the
     * run-time policy, executors/PROTOCOL.md; null: none) */
    char *payload_json;
    struct runner_file *files;
    size_t n_files;
    unsigned timeout_ms;
    size_t max_output;
    int stream; /* send stream frames (PROTOCOL.md) while the program runs */
    /* the kernel filter's refusals (runtime.processes / runtime.network
     * false): what a SIGSYS kill of the child was (runner_result.c) */
    const char *sigsys_type;
};

/* Fills the limits from the environment; workspace and main_file are the
 * caller's (their defaults: /workspace, main.js). */
void runner_cfg_from_env(struct runner_cfg *ret_cfg);

/* Parses one job line (without its newline). Returns 0, or -EINVAL for a job
 * that must be answered with bad_job (err says why; ret_job->nonce is set if
 * the line carried a well-formed one), or -ENOMEM. Caller frees ret_job with
 * runner_job_free() whatever the return. */
int runner_job_parse(const struct runner_cfg *cfg, const char *line, size_t len,
                     struct runner_job *ret_job, struct sg_error *err);

/* 1 when name may be written to the workspace: non-empty, at most 255 bytes,
 * no '/', "..", NUL or leading dot, and not main_file or the artifacts dir. */
/* 16-128 characters of [A-Za-z0-9]: a nonce (or a session key's alphabet). */
int runner_nonce_ok(const char *s, size_t len);

int runner_name_ok(const char *name, size_t len, const char *main_file);

/* Writes the code as cfg->main_file, creates artifacts/ and writes the input
 * files, all new (O_EXCL, never following links) under cfg->workspace.
 * Returns 0, -EEXIST (a name given twice: bad_job) or another negative errno
 * (the workspace is unusable: runner_error); err says which. */
int runner_job_write(const struct runner_cfg *cfg, const struct runner_job *job,
                     struct sg_error *err);

/* With cfg->split, switches the effective uid and gid to the job's
 * (as_job 1) or back to root (0): the files the runner writes into the
 * workspace are the job's, and what it reads there it reads with the job's
 * rights only. Without split a no-op. Returns 0 or a negative errno. */
int runner_as_job(const struct runner_cfg *cfg, int as_job);

/* The denial type of a child the kernel filter killed (SIGSYS), from the job's
 * runtime section (NULL: no run-time policy): what the policy leaves possible,
 * since the kernel does not say which call it was. "process_or_network" when
 * both are refused offline, "process" when a networked job refuses processes
 * (its refused sockets are EPERM, never a kill), "network" when only sockets
 * are refused; NULL when neither is. */
const char *runner_sigsys_type(json_t *runtime);

/* Releases what runner_job_parse() filled; NULL is a no-op. */
void runner_job_free(struct runner_job *job);

#endif
