/* policy_runtime.c - a language policy's run-time section as the job carries
 * it: the gateway sends it with each accepted job, the executor checks it and
 * hands it to the runner in the job line (executors/PROTOCOL.md). The import
 * list is the static section's own: one source of truth for both points. */
#include <jansson.h>

#include "policy.h"

static json_t *strset_json(const struct sg_strset *set)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < set->count; i++)
        if (json_array_append_new(a, json_string(set->items[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *imports_json(const struct sg_lang_policy *lp)
{
    if (!lp->runtime.enforce_imports)
        return json_null();
    return json_pack("{s:s,s:o}", "mode", lp->import_mode == SG_IMPORTS_ALLOW ? "allow" : "deny",
                     "modules", strset_json(&lp->modules));
}

json_t *sg_policy_runtime_json(const struct sg_lang_policy *lp, int js)
{
    const struct sg_runtime_policy *rt = &lp->runtime;
    json_t *o = json_pack("{s:b,s:b,s:o}", "processes", rt->processes, "network", rt->network,
                          "imports", imports_json(lp));
    if (!o)
        return NULL;
    int r = 0;
    if (js) {
        r = json_object_set_new(o, "process_properties", strset_json(&rt->process_properties));
    } else {
        r = json_object_set_new(o, "files",
                                json_string(rt->files == SG_RT_FILES_ANY ? "any" : "sandbox"));
        r |= json_object_set_new(o, "read_paths", strset_json(&rt->read_paths));
        r |= json_object_set_new(o, "native_code", json_boolean(rt->native_code));
        r |= json_object_set_new(o, "unpickle", json_boolean(rt->unpickle));
        r |= json_object_set_new(o, "reflection", json_boolean(rt->reflection));
    }
    if (r < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
