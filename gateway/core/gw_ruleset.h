/* gw_ruleset.h - the reloadable rules: policies + tenants, as one immutable,
 * reference-counted object.
 *
 * A request takes a reference at its start (gw_ruleset_slot_get) and keeps
 * using that set until it drops the reference, so a SIGHUP reload that swaps
 * in a new set never changes the rules under a request in flight. A reload
 * builds and validates the complete new set first; if anything is wrong
 * (bad policy file, bad tokens file, a tenant naming a missing policy) the
 * old set stays and the error is reported.
 */
#ifndef SG_GW_RULESET_H
#define SG_GW_RULESET_H

#include <pthread.h>
#include <stdatomic.h>

#include "gw_tenants.h"
#include "policy.h"
#include "sg_error.h"

struct gw_ruleset {
    atomic_uint refs;
    struct sg_policy_set *policies; /* owned */
    /* Each policy's run-time section as jobs carry it (sg_policy_runtime_json),
     * built once per load: [i][0] Python, [i][1] JavaScript for
     * policies->items[i]. Owned; read-only once loaded, shared by the
     * request threads (jansson 2.14: atomic reference counts, and dumping
     * writes nothing to the object). */
    struct json_t *(*runtime)[4];           /* per policy: [networked * 2 + js] */
    const struct sg_policy *default_policy; /* borrowed from policies */
    struct gw_tenants *tenants;             /* owned; NULL when auth is off */
    unsigned generation;                    /* 1 for the first load, +1 per reload */
};

/* Load policies_dir and (when tokens_file is non-empty) the tokens file, and
 * check they fit together. Returns a set with one reference (the caller's). */
int gw_ruleset_load(const char *policies_dir, const char *default_policy, const char *tokens_file,
                    struct gw_ruleset **ret, struct sg_error *err);

struct gw_ruleset *gw_ruleset_ref(struct gw_ruleset *rs);

/* The run-time section a job under policy p (one of rs's, or its networked
 * variant p->network) in language js (0 Python, 1 JavaScript) carries;
 * borrowed from rs (take a reference to keep it past rs). NULL when p is not
 * rs's. */
struct json_t *gw_ruleset_runtime(const struct gw_ruleset *rs, const struct sg_policy *p, int js);

/* Drop a reference; the last one frees the set. NULL is a no-op. */
void gw_ruleset_unref(struct gw_ruleset *rs);

/* The policy a request runs under: requested (if non-empty), else the
 * tenant's default, else the configured default. Borrowed from rs; NULL when
 * the requested name does not exist. */
const struct sg_policy *gw_ruleset_policy(const struct gw_ruleset *rs,
                                          const struct gw_tenant *tenant, const char *requested);

/* The slot holding the current set. */
struct gw_ruleset_slot {
    pthread_mutex_t lock; /* held only to copy the pointer and take a reference */
    struct gw_ruleset *current;
};

void gw_ruleset_slot_init(struct gw_ruleset_slot *slot, struct gw_ruleset *initial);

/* A new reference to the current set (drop with gw_ruleset_unref()). */
struct gw_ruleset *gw_ruleset_slot_get(struct gw_ruleset_slot *slot);

/* Install next (takes over the caller's reference) and drop the slot's
 * reference to the previous set; in-flight holders keep it alive. */
void gw_ruleset_slot_swap(struct gw_ruleset_slot *slot, struct gw_ruleset *next);

/* Drop the current set. */
void gw_ruleset_slot_destroy(struct gw_ruleset_slot *slot);

#endif
