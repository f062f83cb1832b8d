#include "gw_ruleset.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Every policy a tenant may name must exist, or requests would fail later. */
static int check_tenants(const struct gw_ruleset *rs, const char *tokens_file, struct sg_error *err)
{
    for (size_t i = 0; rs->tenants && i < rs->tenants->count; i++) {
        const struct gw_tenant *t = &rs->tenants->items[i];
        for (size_t j = 0; j < t->policy_count; j++)
            if (!sg_policy_set_find(rs->policies, t->policies[j]))
                return sg_error_set(err, -ENOENT, "%s: tenant %s: policy '%s' is not loaded",
                                    tokens_file, t->name, t->policies[j]);
        if (t->default_policy && !sg_policy_set_find(rs->policies, t->default_policy))
            return sg_error_set(err, -ENOENT, "%s: tenant %s: default_policy '%s' is not loaded",
                                tokens_file, t->name, t->default_policy);
    }
    return 0;
}

/* Trusted networks are weaker than tokens: say at every load which sources
 * need none. */
static void log_networks(const struct gw_tenants *ts)
{
    for (size_t i = 0; ts && i < ts->nets.count; i++) {
        char txt[SG_CIDR_TEXT_MAX];
        sg_cidr_format(&ts->nets.items[i].net, txt, sizeof(txt));
        sg_log(SG_LOG_INFO, "trusted_network", "tenant=%s network=%s token=not_required",
               ts->items[ts->nets.items[i].owner].name, txt);
    }
}

/* Every policy's run-time sections, once: the job path only references them. */
static int build_runtime(struct gw_ruleset *rs, struct sg_error *err)
{
    size_t n = rs->policies->count;
    rs->runtime = calloc(n ? n : 1, sizeof(*rs->runtime));
    if (!rs->runtime)
        return sg_error_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            const struct sg_policy *p = rs->policies->items[i];
            int js = k & 1;
            if (k >= 2)
                p = p->network;
            rs->runtime[i][k] = sg_policy_runtime_json(js ? &p->javascript : &p->python, js);
            if (!rs->runtime[i][k])
                return sg_error_set(err, -ENOMEM, "out of memory");
        }
    return 0;
}

json_t *gw_ruleset_runtime(const struct gw_ruleset *rs, const struct sg_policy *p, int js)
{
    for (size_t i = 0; i < rs->policies->count; i++) {
        const struct sg_policy *q = rs->policies->items[i];
        if (q == p || q->network == p)
            return rs->runtime[i][(q == p ? 0 : 2) + (js != 0)];
    }
    return NULL;
}

int gw_ruleset_load(const char *policies_dir, const char *default_policy, const char *tokens_file,
                    struct gw_ruleset **ret, struct sg_error *err)
{
    struct gw_ruleset *rs = calloc(1, sizeof(*rs));
    if (!rs)
        return sg_error_set(err, -ENOMEM, "out of memory");
    atomic_init(&rs->refs, 1);
    rs->generation = 1;
    int r = sg_policy_set_load_dir(policies_dir, &rs->policies, err);
    if (r < 0 || (r = build_runtime(rs, err)) < 0)
        goto fail;
    rs->default_policy = sg_policy_set_find(rs->policies, default_policy);
    if (!rs->default_policy) {
        r = sg_error_set(err, -ENOENT, "default policy '%s' is not in %s", default_policy,
                         policies_dir);
        goto fail;
    }
    if (tokens_file && *tokens_file &&
        ((r = gw_tenants_load_file(tokens_file, &rs->tenants, err)) < 0 ||
         (r = check_tenants(rs, tokens_file, err)) < 0))
        goto fail;
    log_networks(rs->tenants);
    *ret = rs;
    return 0;
fail:
    gw_ruleset_unref(rs);
    return r;
}

struct gw_ruleset *gw_ruleset_ref(struct gw_ruleset *rs)
{
    if (rs)
        atomic_fetch_add(&rs->refs, 1);
    return rs;
}

void gw_ruleset_unref(struct gw_ruleset *rs)
{
    if (!rs || atomic_fetch_sub(&rs->refs, 1) != 1)
        return;
    for (size_t i = 0; rs->runtime && i < rs->policies->count; i++) {
        for (int k = 0; k < 4; k++)
            json_decref(rs->runtime[i][k]);
    }
    free(rs->runtime);
    sg_policy_set_free(rs->policies);
    gw_tenants_free(rs->tenants);
    free(rs);
}

const struct sg_policy *gw_ruleset_policy(const struct gw_ruleset *rs,
                                          const struct gw_tenant *tenant, const char *requested)
{
    if (requested && *requested)
        return sg_policy_set_find(rs->policies, requested);
    if (tenant && tenant->default_policy)
        return sg_policy_set_find(rs->policies, tenant->default_policy);
    return rs->default_policy;
}

void gw_ruleset_slot_init(struct gw_ruleset_slot *slot, struct gw_ruleset *initial)
{
    pthread_mutex_init(&slot->lock, NULL);
    slot->current = initial;
}

struct gw_ruleset *gw_ruleset_slot_get(struct gw_ruleset_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    struct gw_ruleset *rs = gw_ruleset_ref(slot->current);
    pthread_mutex_unlock(&slot->lock);
    return rs;
}

void gw_ruleset_slot_swap(struct gw_ruleset_slot *slot, struct gw_ruleset *next)
{
    pthread_mutex_lock(&slot->lock);
    struct gw_ruleset *old = slot->current;
    if (old && next)
        next->generation = old->generation + 1;
    slot->current = next;
    pthread_mutex_unlock(&slot->lock);
    gw_ruleset_unref(old);
}

void gw_ruleset_slot_destroy(struct gw_ruleset_slot *slot)
{
    gw_ruleset_unref(slot->current);
    slot->current = NULL;
    pthread_mutex_destroy(&slot->lock);
}
