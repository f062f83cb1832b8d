/* exec_jobs.h - the executor's table of running jobs, so that
 * POST /v1/exec/{job_id}/cancel can stop one (PROTOCOL.md).
 *
 * One slot per job the executor runs at once (max_jobs), each with an
 * eventfd the job's read loop polls: a cancel makes it readable and the job
 * ends as cancelled, its sandbox destroyed. A cancel that names no running
 * job is remembered for EXEC_JOBS_EARLY_MS (at most EXEC_JOBS_EARLY_MAX ids):
 * the gateway forwards a cancel as soon as it knows the executor, which may
 * be a moment before the job's request has arrived here; such a job ends as
 * cancelled on arrival. Cancel runs on an event thread: it never blocks.
 * Thread-safe.
 */
#ifndef SG_EXEC_JOBS_H
#define SG_EXEC_JOBS_H

#include "exec_api.h"

#define EXEC_JOBS_EARLY_MAX 64
#define EXEC_JOBS_EARLY_MS 10000u

struct exec_jobs;
struct exec_job_slot;

/* A table for max running jobs. 0 or -errno; free with exec_jobs_free(). */
int exec_jobs_new(unsigned max, struct exec_jobs **ret);
void exec_jobs_free(struct exec_jobs *t);

/* Register a running job. NULL when the table is full (the job runs without
 * cancel). The slot is borrowed until exec_jobs_remove(). */
struct exec_job_slot *exec_jobs_add(struct exec_jobs *t, const char *job_id);

/* The descriptor that becomes readable when the job is cancelled. */
int exec_job_cancel_fd(const struct exec_job_slot *s);

/* 1 when the job was cancelled (also before it was added: see above). */
int exec_job_cancelled(const struct exec_job_slot *s);

/* The job ended. NULL is a no-op. */
void exec_jobs_remove(struct exec_jobs *t, struct exec_job_slot *s);

/* Cancel job_id: 1 when a running job had that id, 0 when none had (the id
 * is remembered, see above). */
int exec_jobs_cancel(struct exec_jobs *t, const char *job_id);

#endif
