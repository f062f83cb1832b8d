#include "gw_netauth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(struct gw_netauth *na, const struct sg_cidr *c, size_t owner)
{
    if (na->count == na->cap) {
        size_t cap = na->cap ? na->cap * 2 : 8;
        struct gw_netauth_entry *p = realloc(na->items, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        na->items = p;
        na->cap = cap;
    }
    na->items[na->count++] = (struct gw_netauth_entry){.net = *c, .owner = owner};
    return 0;
}

int gw_netauth_add_json(struct gw_netauth *na, size_t owner, json_t *arr, const char *path,
                        struct sg_error *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > GW_NETWORKS_PER_TENANT_MAX)
        return sg_error_set(err, -EINVAL, "%s: expected an array of at most %d networks", path,
                            GW_NETWORKS_PER_TENANT_MAX);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        struct sg_cidr c;
        struct sg_error e = {0};
        if (!json_is_string(v))
            return sg_error_set(err, -EINVAL, "%s[%zu]: expected a string", path, i);
        if (sg_cidr_parse(json_string_value(v), &c, &e) < 0)
            return sg_error_set(err, -EINVAL, "%s[%zu]: %s", path, i, e.msg);
        if (na->count >= GW_NETAUTH_MAX)
            return sg_error_set(err, -E2BIG, "%s: more than %d networks in one file", path,
                                GW_NETAUTH_MAX);
        if (push(na, &c, owner) < 0)
            return sg_error_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

int gw_netauth_check(const struct gw_netauth *na, const char *const *names, const char *origin,
                     struct sg_error *err)
{
    /* Quadratic, but bounded by GW_NETAUTH_MAX and run only at load. */
    for (size_t i = 0; na && i < na->count; i++)
        for (size_t j = i + 1; j < na->count; j++) {
            const struct gw_netauth_entry *a = &na->items[i], *b = &na->items[j];
            if (a->owner == b->owner || !sg_cidr_overlap(&a->net, &b->net))
                continue;
            char ta[SG_CIDR_TEXT_MAX], tb[SG_CIDR_TEXT_MAX];
            sg_cidr_format(&a->net, ta, sizeof(ta));
            sg_cidr_format(&b->net, tb, sizeof(tb));
            return sg_error_set(err, -EINVAL,
                                "%s: networks of tenants %s (%s) and %s (%s) "
                                "overlap: a source address must identify one tenant",
                                origin, names[a->owner], ta, names[b->owner], tb);
        }
    return 0;
}

long gw_netauth_lookup(const struct gw_netauth *na, const char *peer,
                       const struct sg_cidr **ret_net)
{
    struct sg_cidr p;
    if (ret_net)
        *ret_net = NULL;
    if (!na || !na->count || !peer || sg_cidr_parse(peer, &p, NULL) < 0 || !sg_cidr_is_address(&p))
        return -1;
    for (size_t i = 0; i < na->count; i++)
        if (sg_cidr_overlap(&na->items[i].net, &p)) {
            if (ret_net)
                *ret_net = &na->items[i].net;
            return (long)na->items[i].owner;
        }
    return -1;
}

void gw_netauth_clear(struct gw_netauth *na)
{
    if (!na)
        return;
    free(na->items);
    na->items = NULL;
    na->count = na->cap = 0;
}
