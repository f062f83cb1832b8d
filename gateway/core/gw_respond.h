/* gw_respond.h - the result bodies clients read.
 *
 * /run answers exactly RAGFlow's shape: {status, stdout, stderr, exit_code,
 * detail, time_used_ms, memory_used_kb, resource_limit_type,
 * unauthorized_access_type, runtime_error_type, artifacts, result}. A policy
 * rejection uses what RAGFlow's own sandbox returns for unsafe code
 * (program_runner_error, exit_code -999, detail "Code is unsafe", stderr one
 * "Line N: message" per violation) plus a `violations` array.
 */
#ifndef SG_GW_RESPOND_H
#define SG_GW_RESPOND_H

#include <jansson.h>

#include "httpsrv.h"
#include "violation.h"

#define GW_UNSAFE_EXIT_CODE (-999)
/* RAGFlow's executor manager: no container free within its wait. */
#define GW_POOL_BUSY_EXIT_CODE (-10)
/* RAGFlow's manager: a caller over its rate (HTTP 429). */
#define GW_RATE_LIMITED_EXIT_CODE (-429)
#define GW_RATE_LIMITED_STDERR "Too many requests, please try again later"
/* A job sent to an executor that failed before answering: it may have run,
 * so /run answers 200 (RAGFlow's client retries a 5xx, running it again). */
#define GW_EXEC_FAILED_EXIT_CODE (-1)
/* Reals (milliseconds) with at most 10 significant digits, not 17. */
#define GW_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(10))

/* Serialise o (reference taken over, may be NULL = out of memory) as the
 * response body with status. */
void gw_respond_json(struct sg_http_response *resp, int status, json_t *o);

/* "Line N: message [rule]" lines joined by "\n"; caller frees with free(). */
char *gw_violation_lines(const struct sg_violations *vs);

/* The RAGFlow-shaped rejection (with `violations`); nothing ran, so
 * memory_used_kb is null (unknown, not 0). Caller owns the reference; NULL
 * on out of memory. */
json_t *gw_result_rejected(const struct sg_violations *vs);

/* RAGFlow's program_runner_error shape with nothing run (memory_used_kb
 * null): exit_code, stderr and detail as given (copied). Caller owns the
 * reference. */
json_t *gw_result_runner_error(int exit_code, const char *stderr_text, const char *detail);

/* What RAGFlow's executor manager answers (HTTP 200) when no container
 * became free: program_runner_error, exit_code -10, stderr "Container pool
 * is busy", detail "no_available_container". Caller owns the reference. */
json_t *gw_result_pool_busy(void);

/* The RAGFlow fields of an executor answer, with defaults for missing ones
 * (unknown fields are dropped, wrong types replaced by defaults). Caller owns
 * the reference; NULL on out of memory. */
json_t *gw_result_from_executor(json_t *exec);

/* Maps o's values that RAGFlow does not know onto its own, for /run only:
 * resource_limit_type "pids" becomes "memory" (the native API keeps "pids"). */
void gw_result_ragflow_shape(json_t *o);

/* The run-time denials of an executor answer (`denials`, written by the
 * runner inside the sandbox, rebuilt by the executor) as violations with
 * "phase": "runtime": {rule, severity, message, phase, target}. Only rules
 * "runtime.<type>" of the documented types pass; a new array (maybe empty),
 * caller decrefs; NULL on out of memory. */
json_t *gw_runtime_violations(json_t *exec);

#endif
