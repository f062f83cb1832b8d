/* egress.h - networked sandboxes (README, "Network"): their create spec and
 * the hand-over of a job's allow-list to the egress proxy.
 *
 * The executor and the proxy share a state directory (cfg->egress_dir):
 *   allow/<sandbox address>      written here when a job is handed over,
 *                                removed when it ends: the proxy's helper
 *                                allows nothing for an address without one;
 *   decisions/<sandbox address>  appended by the helper (one JSON line per
 *                                decision) and by the proxy's logfile daemon
 *                                (one line per finished request: status,
 *                                bytes in and out), read and removed here at
 *                                job end.
 * A sandbox between jobs, or after its job, reaches nothing.
 */
#ifndef SG_EXEC_EGRESS_H
#define SG_EXEC_EGRESS_H

#include <jansson.h>

#include "docker.h"
#include "exec_config.h"
#include "sg_error.h"

#define EGRESS_DECISIONS_MAX (64u * 1024u) /* bytes of one job's decision log */
#define EGRESS_HOSTS_MAX 64                /* hosts listed per verdict in a result */
/* How long a job's end waits for the proxy's log line of each allowed
 * request (its bytes), in slices: Squid logs a request when it finishes. */
#define EGRESS_LOG_WAIT_MS 300u
#define EGRESS_LOG_SLICE_MS 10u

/* The create body of networked sandboxes: base_body (sandbox_create_body)
 * on cfg->egress_network under cfg->egress_runtime, with the proxy address
 * in SANDGATE_EGRESS_PROXY (the runner points the job's HTTP clients at it
 * when the job has network). Caller frees *ret_body with free(). */
int egress_create_body(const struct exec_config *cfg, const char *base_body, char **ret_body,
                       struct sg_error *err);

/* Docker's embedded resolver (127.0.0.11) lives in each sandbox's own network
 * namespace, where the host packet filter never sees a query to it. Each new
 * networked sandbox therefore gets, before it may serve a job, one short-lived
 * runc container of cfg->egress_guard_image joined to its namespace
 * (NetworkMode container:<id>, only NET_ADMIN and NET_RAW) that inserts
 * "OUTPUT -d 127.0.0.11 -j REJECT" there: the resolver then refuses every
 * connection and datagram of the job. Labelled EGRESS_GUARD_LABEL=instance,
 * removed at once. */
#define EGRESS_GUARD_LABEL "org.sandgate.egress-guard"
#define EGRESS_GUARD_TIMEOUT_MS 30000L

/* The create body of that container for the sandbox with this id. Caller
 * frees *ret_body with free(). */
int egress_guard_body(const struct exec_config *cfg, const char *sandbox_id, char **ret_body,
                      struct sg_error *err);

/* Run it (create, start, wait, remove); 0 only when iptables exited 0. A
 * pool's prepare hook (pool.h): ctx is the struct exec_config. */
int egress_close_resolver(const void *ctx, struct docker_client *dc, const char *sandbox_id,
                          struct sg_error *err);

/* Remove every allow-list left by an earlier run (a crash mid-job): an
 * address may now belong to another sandbox. */
int egress_reset(const struct exec_config *cfg, struct sg_error *err);

/* Hand the job's allow-list (canonical entries, exec_api.h) to the proxy for
 * the sandbox at ip. */
int egress_grant(const struct exec_config *cfg, const char *ip, const char *job_id, json_t *allow,
                 struct sg_error *err);

/* Withdraw the grant, then collect the job's decisions: *ret_network is
 * {"allowed": ["host:port", ...], "denied": [...], "connections": [{"host",
 * "port", "status", "bytes_in", "bytes_out"}, ...]} (each bounded by
 * EGRESS_HOSTS_MAX), one log line per decision and one per request. Waits
 * up to EGRESS_LOG_WAIT_MS for the log lines of allowed requests. The grant
 * is removed even when reading fails. */
int egress_withdraw(const struct exec_config *cfg, const char *ip, const char *job_id,
                    json_t **ret_network, struct sg_error *err);

#endif
