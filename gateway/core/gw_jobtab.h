/* gw_jobtab.h - the gateway's table of jobs in flight, for
 * POST /v1/jobs/{job_id}/cancel.
 *
 * A bounded table (one entry per job the gateway runs at once: the workers)
 * maps a job id to its tenant and, once the router chose one, its executor;
 * ended ids are remembered in a ring of GW_JOBTAB_ENDED_MAX (409 rather than
 * 404 for a job that ran and ended). Cancel and the router's choice of
 * executor meet under one lock, so a cancel that comes before the job is
 * sent is forwarded when it is (gw_jobtab_set_executor()). Thread-safe.
 */
#ifndef SG_GW_JOBTAB_H
#define SG_GW_JOBTAB_H

#include <stddef.h>

#include "gw_config.h"

#define GW_JOBTAB_ENDED_MAX 4096
#define GW_JOBTAB_ID_MAX 32
#define GW_JOBTAB_TENANT_MAX 64

struct gw_jobtab;

enum gw_jobtab_state { GW_JOB_UNKNOWN = 0, GW_JOB_RUNNING, GW_JOB_ENDED };

/* A table for max jobs in flight. NULL when out of memory. */
struct gw_jobtab *gw_jobtab_new(size_t max);
void gw_jobtab_free(struct gw_jobtab *t);

/* A job starts (tenant: its name, "anonymous" without one). -ENOSPC when the
 * table is full: the job runs, but cannot be cancelled. */
int gw_jobtab_add(struct gw_jobtab *t, const char *id, const char *tenant);

/* The router is sending the job to executor; returns 1 when a cancel came
 * first (the caller forwards it now). */
int gw_jobtab_set_executor(struct gw_jobtab *t, const char *id, const char *executor);

/* 1 when a cancel was asked for the running job id. */
int gw_jobtab_cancel_asked(struct gw_jobtab *t, const char *id);

/* The job ended: remembered as ended. */
void gw_jobtab_end(struct gw_jobtab *t, const char *id);

/* Ask to cancel id for tenant: its state as that tenant may see it (another
 * tenant's job is UNKNOWN). When RUNNING, the cancel is recorded and
 * ret_executor gets the executor's URL ("" when not chosen yet). */
enum gw_jobtab_state gw_jobtab_cancel(struct gw_jobtab *t, const char *id, const char *tenant,
                                      char ret_executor[GW_URL_MAX]);

#endif
