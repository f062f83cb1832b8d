#include "gw_egress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A JSON array of 0..SG_NETALLOW_LIST_MAX entries into list. */
static int load_list(json_t *arr, const char *path, struct gw_netlist *list, struct sg_error *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > SG_NETALLOW_LIST_MAX)
        return sg_error_set(err, -EINVAL, "%s: expected an array of at most %d entries", path,
                            SG_NETALLOW_LIST_MAX);
    size_t n = json_array_size(arr);
    list->items = calloc(n ? n : 1, sizeof(*list->items));
    if (!list->items)
        return sg_error_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct sg_error e = {0};
        if (sg_netallow_parse(json_string_value(json_array_get(arr, i)), &list->items[i], &e) < 0)
            return sg_error_set(err, -EINVAL, "%s[%zu]: %s", path, i, e.msg);
        list->count = i + 1;
    }
    return 0;
}

int gw_egress_tenant_load(json_t *v, const char *path, struct gw_tenant_network *ret,
                          struct sg_error *err)
{
    char sub[600];
    const char *k;
    json_t *x;
    if (!json_is_object(v))
        return sg_error_set(err, -EINVAL, "%s: expected {\"allow\": [...], \"default\": [...]}",
                            path);
    json_object_foreach(v, k, x)
    {
        snprintf(sub, sizeof(sub), "%.500s.%.32s", path, k);
        int is_allow = strcmp(k, "allow") == 0;
        if (!is_allow && strcmp(k, "default") != 0)
            return sg_error_set(err, -EINVAL, "%s: unknown key (allow, default)", sub);
        int r = load_list(x, sub, is_allow ? &ret->allow : &ret->def, err);
        if (r < 0)
            return r;
    }
    for (size_t i = 0; i < ret->def.count; i++)
        if (!sg_netallow_list_covers(ret->allow.items, ret->allow.count, &ret->def.items[i])) {
            char t[SG_NETALLOW_TEXT_MAX];
            sg_netallow_format(&ret->def.items[i], t, sizeof(t));
            return sg_error_set(err, -EINVAL, "%s.default: '%s' is not covered by allow", path, t);
        }
    return 0;
}

void gw_egress_tenant_clear(struct gw_tenant_network *tn)
{
    if (!tn)
        return;
    free(tn->allow.items);
    free(tn->def.items);
    memset(tn, 0, sizeof(*tn));
}

int gw_egress_request_check(json_t *v, struct sg_error *err)
{
    json_t *allow = json_is_object(v) ? json_object_get(v, "allow") : NULL;
    if (!allow || json_object_size(v) != 1 || !json_is_array(allow) ||
        json_array_size(allow) == 0 || json_array_size(allow) > SG_NETALLOW_LIST_MAX)
        return sg_error_set(err, -EINVAL,
                            "network: expected {\"allow\": [1..%d host patterns or networks]}",
                            SG_NETALLOW_LIST_MAX);
    struct gw_netlist l = {0};
    int r = load_list(allow, "network.allow", &l, err);
    free(l.items);
    return r;
}

static json_t *canonical(const struct sg_netallow_entry *e)
{
    char t[SG_NETALLOW_TEXT_MAX];
    sg_netallow_format(e, t, sizeof(t));
    return json_string(t);
}

int gw_egress_job_list(const struct gw_tenant_network *tn, json_t *requested, json_t **ret_allow,
                       struct sg_error *err)
{
    *ret_allow = NULL;
    if (!requested) {
        if (!tn || tn->def.count == 0)
            return 0;
        json_t *a = json_array();
        for (size_t i = 0; a && i < tn->def.count; i++)
            json_array_append_new(a, canonical(&tn->def.items[i]));
        *ret_allow = a;
        return a ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
    }
    struct gw_netlist want = {0};
    int r = load_list(requested, "network.allow", &want, err);
    json_t *a = r == 0 ? json_array() : NULL;
    for (size_t i = 0; a && i < want.count; i++) {
        if (!tn || !sg_netallow_list_covers(tn->allow.items, tn->allow.count, &want.items[i])) {
            char t[SG_NETALLOW_TEXT_MAX];
            sg_netallow_format(&want.items[i], t, sizeof(t));
            r = sg_error_set(err, -EACCES,
                             "network.allow[%zu]: '%s' is not in this tenant's network allow-list "
                             "(an operator adds it under the tenant's \"network\": {\"allow\"} "
                             "in the tokens file)",
                             i, t);
            break;
        }
        json_array_append_new(a, canonical(&want.items[i]));
    }
    free(want.items);
    if (r < 0 || !a) {
        json_decref(a);
        return r < 0 ? r : sg_error_set(err, -ENOMEM, "out of memory");
    }
    *ret_allow = a;
    return 0;
}
