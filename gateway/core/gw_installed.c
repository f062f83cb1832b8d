#include "gw_installed.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gw_util.h"
#include "sg_lang.h"

#define RUNTIME_FETCH_TIMEOUT_MS 5000u
#define MODULE_NAME_MAX 256u /* bytes of one import name checked against the listings */

/* The modules of a list of packages, each once, appended to all. */
void gw_installed_package_modules(json_t *all, json_t *packages)
{
    size_t i, j, k;
    json_t *pkg, *m, *seen;
    json_array_foreach(packages, i, pkg)
    {
        json_array_foreach(json_object_get(pkg, "modules"), j, m)
        {
            bool dup = false;
            json_array_foreach(all, k, seen)
            {
                if ((dup = json_equal(seen, m)))
                    break;
            }
            if (!dup && json_is_string(m))
                json_array_append(all, m);
        }
    }
}

/* Every module name of a listing: the standard ones, each package's, then
 * each package set's (the executor's manifests, "sets"). */
json_t *gw_installed_listing_modules(json_t *listing)
{
    json_t *all = json_array();
    json_array_extend(all, json_object_get(listing, "stdlib_modules"));
    size_t i;
    json_t *set, *pkg;
    json_array_foreach(json_object_get(listing, "packages"), i, pkg)
        json_array_extend(all, json_object_get(pkg, "modules"));
    json_array_foreach(json_object_get(listing, "sets"), i, set)
        gw_installed_package_modules(all, json_object_get(set, "packages"));
    return all;
}

/* Every module name the executors of each language install (a JSON object
 * used as a set; NULL: unknown), and until when it is reused. */
static struct {
    pthread_mutex_t mu;
    json_t *modules[SG_LANG_COUNT];
    uint64_t until_ns[SG_LANG_COUNT];
} installed = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The module set of lang's listing, fetched now (NULL when there is none). */
static json_t *fetch_installed(struct gw_router *router, int lang)
{
    struct gw_exec_result ex;
    gw_router_get(router, lang, "/v1/runtime", RUNTIME_FETCH_TIMEOUT_MS, &ex);
    json_t *listing = ex.outcome == GW_EXEC_OK ? json_loadb(ex.body, ex.body_len, 0, NULL) : NULL;
    gw_exec_result_free(&ex);
    json_t *set = NULL;
    if (json_is_object(listing)) {
        json_t *mods = gw_installed_listing_modules(listing);
        set = json_object();
        size_t i;
        json_t *m;
        json_array_foreach(mods, i, m)
        {
            if (json_is_string(m))
                json_object_set(set, json_string_value(m), json_true());
        }
        json_decref(mods);
    }
    json_decref(listing);
    return set;
}

/* A new reference to lang's module set, refreshed when stale; NULL: unknown. */
static json_t *installed_modules(struct gw_router *router, int lang)
{
    uint64_t now = gw_now_ns();
    pthread_mutex_lock(&installed.mu);
    json_t *set = now < installed.until_ns[lang] ? json_incref(installed.modules[lang]) : NULL;
    int fresh = now < installed.until_ns[lang];
    pthread_mutex_unlock(&installed.mu);
    if (fresh)
        return set;
    set = fetch_installed(router, lang); /* outside the lock: jobs of the other language go on */
    pthread_mutex_lock(&installed.mu);
    json_decref(installed.modules[lang]);
    installed.modules[lang] = json_incref(set);
    installed.until_ns[lang] =
        now + (uint64_t)(set ? GW_INSTALLED_TTL_MS : GW_INSTALLED_RETRY_MS) * 1000000u;
    pthread_mutex_unlock(&installed.mu);
    return set;
}

int gw_installed_missing_import(struct gw_router *router, int lang, const char *imports, char *ret,
                                size_t retsz)
{
    if (!imports || !imports[0] || lang < 0 || lang >= SG_LANG_COUNT)
        return 0;
    json_t *set = installed_modules(router, lang);
    int found = 0;
    for (const char *p = imports; set && *p && !found;) {
        size_t n = strcspn(p, ",");
        char name[MODULE_NAME_MAX];
        if (n > 0 && n < sizeof(name) && p[0] != '_' && p[0] != '.' && strncmp(p, "node:", 5)) {
            memcpy(name, p, n);
            name[n] = '\0';
            if (!json_object_get(set, name)) {
                snprintf(ret, retsz, "%s", name);
                found = 1;
            }
        }
        p += n + (p[n] == ',');
    }
    json_decref(set);
    return found;
}
