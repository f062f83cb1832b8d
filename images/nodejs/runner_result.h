/* runner_result.h - the one result line of executors/PROTOCOL.md: outcome
 * classification from what the parent watched, the artifacts, and writing the
 * nonce-stamped line to the container's real stdout.
 */
#ifndef RUNNER_RESULT_H
#define RUNNER_RESULT_H

#include <stddef.h>

#include <jansson.h>

#include "runner_job.h"
#include "runner_watch.h"

#define RUNNER_EXIT_TIMEOUT (-124)
#define RUNNER_EXIT_OUTPUT (-125)
#define RUNNER_EXIT_RUNNER (-3)

/* A new result object (caller frees with json_decref()) with every field of
 * the line but the nonce: outcome, exit_code, signal, stdout, stderr, result,
 * artifacts, memory_used_kb, time_used_ms, message. The child's report is
 * trusted only for what the program could produce itself (outcome ok /
 * exception / no_main / unauthorized, its message and value); memory and
 * time are this process's (w), and a child the kernel filter killed
 * (SIGSYS, w->sigsys_type set) is unauthorized whatever it reported.
 * NULL when out of memory. */
json_t *runner_result_from_watch(const struct runner_cfg *cfg, const struct runner_watch *w,
                                 size_t max_output);

/* A new result object for a job that never ran (bad_job / runner_error). */
json_t *runner_result_failed(const char *outcome, const char *message);

/* Regular files directly under <workspace>/artifacts with a known extension,
 * in name order, within cfg's caps, never following links; sets "artifacts"
 * (and "artifacts_skipped" when some were left out) on result. */
void runner_result_artifacts(const struct runner_cfg *cfg, json_t *result);

/* A JSON string of data with every invalid UTF-8 sequence replaced by
 * U+FFFD (caller owns the reference); NULL when out of memory. */
json_t *runner_text(const char *data, size_t len);

/* Writes one stream frame (PROTOCOL.md, "Stream frames") for name ("stdout"
 * or "stderr") with text data[0..len) to fd 1. 0 or a negative errno. */
int runner_stream_write(const char *nonce, const char *name, const char *data, size_t len);

/* Writes "\n" + the line + "\n" to fd 1 with nonce ("" = null) added.
 * Returns 0 or a negative errno. */
int runner_result_write(json_t *result, const char *nonce);

#endif
