/* gw_egress.h - network allow-lists at the gateway (README, "Network"):
 * a tenant's lists from the tokens file, and the list a job runs with.
 *
 *   "network": {"allow": ["api.example.com", "*.corp.internal:443"],
 *               "default": ["api.example.com"]}
 *
 * `allow` is everything the tenant's jobs may ask for; `default` (a subset
 * of allow) is what RAGFlow's /run, which cannot ask, gets. A job asks with
 * "network": {"allow": [...]} on /v1/run (and /v1/analyze); every entry must
 * be covered by the tenant's allow (common/sg_netallow.h) or the request is
 * refused with 403 network_not_allowed naming the entry. Immutable once
 * loaded; shared by threads with the tenants table.
 */
#ifndef SG_GW_EGRESS_H
#define SG_GW_EGRESS_H

#include <jansson.h>
#include <stddef.h>

#include "sg_error.h"
#include "sg_netallow.h"

struct gw_netlist {
    struct sg_netallow_entry *items; /* owned */
    size_t count;
};

struct gw_tenant_network {
    struct gw_netlist allow;
    struct gw_netlist def;
};

/* Parse a tenant's "network" object; path names it in errors. */
int gw_egress_tenant_load(json_t *v, const char *path, struct gw_tenant_network *ret,
                          struct sg_error *err);

void gw_egress_tenant_clear(struct gw_tenant_network *tn);

/* Check the shape of a job's "network" value (an object with exactly
 * "allow": 1..SG_NETALLOW_LIST_MAX entries, each valid); the message names
 * the bad entry. */
int gw_egress_request_check(json_t *v, struct sg_error *err);

/* The canonical list a job runs with, as a new JSON array, or NULL (no
 * network) in *ret_allow. requested: the job's "allow" array (checked with
 * gw_egress_request_check), or NULL to take the tenant's default list. tn may
 * be NULL (no tenant: no network). A requested entry the tenant does not
 * cover fails with -EACCES and a message naming it. */
int gw_egress_job_list(const struct gw_tenant_network *tn, json_t *requested, json_t **ret_allow,
                       struct sg_error *err);

#endif
