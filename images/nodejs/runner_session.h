/* runner_session.h - session mode of sandgate-runner (executors/PROTOCOL.md,
 * "Session mode"): one node child kept for many cells.
 *
 * After a job line with "session": true the runner hands the child the
 * run-time policy once, then serves request lines from stdin until it
 * closes: each must carry the session's key (a secret of the executor's the
 * program never sees: it can write to the container's stdin through
 * /proc/1/fd/0); a cell goes to the child, is watched (time limit, output
 * cap, a keyed cancel: SIGINT, then SIGKILL after a grace) and answered with
 * one nonce-stamped result line; file operations are done here, in the
 * workspace, never following links.
 */
#ifndef RUNNER_SESSION_H
#define RUNNER_SESSION_H

#include <jansson.h>

#include "runner_job.h"
#include "runner_watch.h"

#define RUNNER_SESSION_KEY_MIN 32
#define RUNNER_SESSION_KEY_MAX 128
#define RUNNER_SESSION_GRACE_MS 2000  /* SIGINT first, SIGKILL this long after */
#define RUNNER_SESSION_READY_MS 30000 /* the child's ready line */
#define RUNNER_SESSION_FILE_MAX (8u << 20)
#define RUNNER_SESSION_LIST_MAX 1000

/* Serve the session the start line job (parsed, borrowed) opens; nonce is
 * the start line's. Returns the runner's exit status. */
int runner_session_serve(const struct runner_cfg *cfg, struct runner_child *child, int sigfd,
                         json_t *job, const char *nonce);

#endif
