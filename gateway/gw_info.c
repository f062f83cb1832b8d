#include "gw_info.h"

#include <string.h>

#include "gw_installed.h"
#include "gw_jobs.h"
#include "gw_respond.h"
#include "gw_util.h"
#include "sg_lang.h"

#define ANONYMOUS "anonymous"
#define RUNTIME_FETCH_TIMEOUT_MS 5000u

json_t *gw_info_identity(const struct gw_ruleset *rs, const struct gw_tenant *tenant,
                         const struct sg_http_request *req)
{
    if (!rs->tenants || !tenant)
        return json_pack("{s:s,s:s}", "name", ANONYMOUS, "identified_by", "none");
    size_t len = 0;
    if (gw_auth_token(sg_http_header(req, "Authorization"), sg_http_header(req, "X-Sandbox-Token"),
                      &len))
        return json_pack("{s:s,s:s}", "name", tenant->name, "identified_by", "token");
    const struct sg_cidr *net = NULL;
    gw_tenants_lookup_peer(rs->tenants, req->peer, &net);
    char txt[SG_CIDR_TEXT_MAX] = "";
    if (net)
        sg_cidr_format(net, txt, sizeof(txt));
    return json_pack("{s:s,s:s,s:s}", "name", tenant->name, "identified_by", "network", "network",
                     txt);
}

static json_t *tenant_networks(const struct gw_ruleset *rs, const struct gw_tenant *t)
{
    json_t *arr = json_array();
    size_t owner = (size_t)(t - rs->tenants->items);
    for (size_t i = 0; arr && i < rs->tenants->nets.count; i++)
        if (rs->tenants->nets.items[i].owner == owner) {
            char txt[SG_CIDR_TEXT_MAX];
            sg_cidr_format(&rs->tenants->nets.items[i].net, txt, sizeof(txt));
            json_array_append_new(arr, json_string(txt));
        }
    return arr;
}

static json_t *whoami_body(struct gw_server *s, const struct gw_ruleset *rs,
                           const struct gw_tenant *t, const struct sg_http_request *req)
{
    const struct gw_config *c = &s->cfg;
    const struct sg_policy *def = gw_ruleset_policy(rs, t, NULL);
    json_t *pols = json_array();
    for (size_t i = 0; pols && i < rs->policies->count; i++) {
        const struct sg_policy *p = rs->policies->items[i];
        if (!t || p == def || gw_tenant_may_use(t, p->name))
            json_array_append_new(pols, json_string(p->name));
    }
    uint64_t tmax = t && t->max_timeout_ms && t->max_timeout_ms < c->max_timeout_ms
                        ? t->max_timeout_ms
                        : c->max_timeout_ms;
    uint64_t mmax = t && t->max_memory_mb && t->max_memory_mb < c->max_memory_mb ? t->max_memory_mb
                                                                                 : c->max_memory_mb;
    json_t *o =
        json_pack("{s:o,s:s,s:s,s:o,s:s,s:{s:I,s:I},s:{s:I,s:I}}", "tenant",
                  gw_info_identity(rs, t, req), "peer", req->peer ? req->peer : "",
                  "default_policy", def->name, "policies", pols, "auth", rs->tenants ? "on" : "off",
                  "rate_limit", "per_second", (json_int_t)(t ? t->rate : c->anonymous_rate),
                  "burst", (json_int_t)(t ? t->burst : c->anonymous_burst), "max_limits",
                  "timeout_ms", (json_int_t)tmax, "memory_mb", (json_int_t)mmax);
    if (o && t && rs->tenants)
        json_object_set_new(o, "networks", tenant_networks(rs, t));
    return o;
}

void gw_info_whoami(struct gw_server *s, const struct sg_http_request *req,
                    struct sg_http_response *resp)
{
    struct gw_ruleset *rs = gw_ruleset_slot_get(&s->rules);
    const struct gw_tenant *t = NULL;
    if (gw_tenants_authenticate(rs->tenants, req, resp, &t) == 0)
        gw_respond_json(resp, 200, whoami_body(s, rs, t, req));
    gw_ruleset_unref(rs);
}

json_t *gw_info_importable(const struct sg_lang_policy *lp, json_t *modules, char sep)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(modules, i, v)
    {
        if (sg_lang_policy_allows_import(lp, json_string_value(v), sep))
            json_array_append(out, v);
    }
    return out;
}

/* Which of each package set's modules the policy lets a job import: set by
 * set, under set.policies.<policy>.importable. */
static void sets_importable(json_t *listing, const struct sg_policy *p,
                            const struct sg_lang_policy *lp, char sep)
{
    size_t i;
    json_t *set;
    json_array_foreach(json_object_get(listing, "sets"), i, set)
    {
        json_t *mods = json_array(), *pols = json_object_get(set, "policies");
        if (!json_is_object(pols))
            json_object_set_new(set, "policies", pols = json_object());
        gw_installed_package_modules(mods, json_object_get(set, "packages"));
        json_object_set_new(pols, p->name,
                            json_pack("{s:o}", "importable", gw_info_importable(lp, mods, sep)));
        json_decref(mods);
    }
}

static json_t *language_runtime(struct gw_server *s, const struct gw_ruleset *rs,
                                const struct gw_tenant *t, int lang)
{
    struct gw_exec_result ex;
    gw_router_get(s->router, lang, "/v1/runtime", RUNTIME_FETCH_TIMEOUT_MS, &ex);
    json_t *listing = ex.outcome == GW_EXEC_OK ? json_loadb(ex.body, ex.body_len, 0, NULL) : NULL;
    if (!json_is_object(listing)) {
        json_decref(listing);
        json_t *o = json_pack("{s:b,s:s}", "available", 0, "error", ex.message);
        gw_exec_result_free(&ex);
        return o;
    }
    gw_exec_result_free(&ex);
    json_t *mods = gw_installed_listing_modules(listing), *pols = json_object();
    const struct sg_policy *def = gw_ruleset_policy(rs, t, NULL);
    for (size_t i = 0; pols && i < rs->policies->count; i++) {
        const struct sg_policy *p = rs->policies->items[i];
        if (t && p != def && !gw_tenant_may_use(t, p->name))
            continue;
        const struct sg_lang_policy *lp = lang == 0 ? &p->python : &p->javascript;
        json_object_set_new(pols, p->name,
                            json_pack("{s:b,s:o}", "enabled", lp->enabled, "importable",
                                      gw_info_importable(lp, mods, lang == 0 ? '.' : '/')));
        sets_importable(listing, p, lp, lang == 0 ? '.' : '/');
    }
    json_decref(mods);
    json_object_set_new(listing, "available", json_true());
    json_object_set_new(listing, "policies", pols);
    return listing;
}

void gw_info_runtimes(struct gw_server *s, const struct sg_http_request *req,
                      struct sg_http_response *resp)
{
    struct gw_ruleset *rs = gw_ruleset_slot_get(&s->rules);
    const struct gw_tenant *t = NULL;
    if (gw_tenants_authenticate(rs->tenants, req, resp, &t) == 0) {
        const struct sg_policy *def = gw_ruleset_policy(rs, t, NULL);
        json_t *langs = json_object();
        for (int l = 0; langs && l < SG_LANG_COUNT; l++)
            json_object_set_new(langs, sg_lang_name(l), language_runtime(s, rs, t, l));
        gw_respond_json(resp, 200,
                        json_pack("{s:o,s:s}", "runtimes", langs, "default_policy", def->name));
    }
    gw_ruleset_unref(rs);
}
