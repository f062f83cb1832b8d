/* outcome.h - classification of a job's end into RAGFlow's statuses and codes.
 *
 * Pure functions: the runner's result line (untrusted: the sandbox wrote it)
 * and the container's final state go in, one exec_outcome comes out. The
 * codes are fixed in executors/PROTOCOL.md.
 */
#ifndef SG_EXEC_OUTCOME_H
#define SG_EXEC_OUTCOME_H

/* Docker reports a container killed by SIGKILL as exit 128 + 9. */
#define OUTCOME_SIGKILL_EXIT 137

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "docker.h"

enum exec_status {
    EXEC_SUCCESS = 0,
    EXEC_PROGRAM_ERROR,
    EXEC_RESOURCE_LIMIT,
    EXEC_UNAUTHORIZED,
    EXEC_RUNTIME_ERROR,
    EXEC_RUNNER_ERROR,
    EXEC_CANCELLED, /* stopped by a cancel or by its streaming client going away; a session
                       cell interrupted on request */
    EXEC_STATUS_COUNT
};

#define EXEC_CODE_TIME (-124)
#define EXEC_CODE_OUTPUT (-125)
#define EXEC_CODE_PIDS (-126)
#define EXEC_CODE_MEMORY (-137)
#define EXEC_CODE_RUNNER (-3)
#define EXEC_CODE_UNAUTHORIZED (-13) /* a run-time rule stopped the program */
/* cancelled: the sandbox was destroyed (a session's cell: interrupted, the session lives on) */
#define EXEC_CODE_CANCELLED (-130)
/* Denials a result may carry (the runner caps its own list likewise). */
#define OUTCOME_DENIALS_MAX 16
#define OUTCOME_TARGET_MAX 256

#define OUTCOME_DETAIL_MAX 512
#define OUTCOME_LOG_DETAIL_MAX 1024

struct exec_outcome {
    enum exec_status status;
    int exit_code;
    const char *resource_limit_type; /* static: time | memory | output | pids, or NULL */
    const char *runtime_error_type;  /* static: nonzero_exit | signalled, or NULL */
    /* static: process | network | process_or_network | import | native_code | unpickle | file |
     * reflection */
    const char *unauthorized_access_type;
    json_t *denials;                 /* [{rule, type, target}] the runner recorded, or NULL */
    char detail[OUTCOME_DETAIL_MAX]; /* empty means null */
    json_t *out, *err;               /* strings (owned references) or NULL for "" */
    json_t *result;                  /* {"present", "value"} or {"present", "value_json"}
                                        (the value as checked JSON text, for integers beyond
                                        64 bits: common/json_raw.h), NULL for not present */
    json_t *artifacts;               /* array or NULL for [] */
    json_t *artifacts_skipped;       /* runner's list of files over its caps, or NULL */
    long long memory_used_kb;        /* -1: unknown */
    double time_used_ms;             /* -1: unknown (the caller uses its own clock) */
    /* For the executor's log only, never a response: what the runner said on
     * its way out (its traceback, paths); detail stays a fixed message. */
    char log_detail[OUTCOME_LOG_DETAIL_MAX];
};

void outcome_init(struct exec_outcome *o);
/* Drop the JSON references; the struct may be reused after outcome_init. */
void outcome_clear(struct exec_outcome *o);
const char *outcome_status_name(enum exec_status s);

/* Classify the runner's result line. Returns 0, or -EPROTO when the line is
 * not a well-formed runner result (o is then left for the caller to fill
 * with a runner error). */
int outcome_from_runner(const char *line, size_t len, struct exec_outcome *o);
/* The same from an already parsed line (borrowed). */
int outcome_from_runner_json(json_t *j, struct exec_outcome *o);

/* The sandbox ended without a result line; state is its final state, or
 * NULL when it could not be inspected. Classified by evidence: out of memory
 * only when the engine says so (OOMKilled), a bare SIGKILL is a signalled
 * program_error (the program runs as the runner's uid and can kill it).
 * runner_stderr (may be NULL) is the runner's own diagnostics: copied to
 * log_detail, never into detail. */
void outcome_from_dead(const struct docker_state *state, const char *runner_stderr,
                       struct exec_outcome *o);

/* Pure: the canonical name for a denial type from a runner, or NULL when it
 * is not one of the seven above. */
const char *outcome_denial_type(const char *type);

/* A resource limit enforced by the executor itself (time, output). */
void outcome_limit(struct exec_outcome *o, const char *type, int exit_code, const char *detail);

/* The job was cancelled (detail: "cancelled" or "client_gone"); the output
 * the runner reported is lost with its sandbox. */
void outcome_cancelled(struct exec_outcome *o, const char *detail);

/* An infrastructure failure: program_runner_error, exit -3, detail. */
void outcome_runner_error(struct exec_outcome *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
