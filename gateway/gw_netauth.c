#include "gw_netauth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static unsigned family_bits(int family)
{
    return family == AF_INET ? 32u : 128u;
}

/* 1 when the first `bits` bits of a and b are equal. */
static int prefix_equal(const uint8_t *a, const uint8_t *b, unsigned bits)
{
    unsigned full = bits / 8, rest = bits % 8;
    if (memcmp(a, b, full) != 0)
        return 0;
    if (!rest)
        return 1;
    uint8_t mask = (uint8_t)(0xffu << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}

static int host_bits_clear(const struct gw_cidr *c)
{
    unsigned bits = family_bits(c->family);
    for (unsigned i = c->prefix; i < bits; i++)
        if (c->addr[i / 8] & (0x80u >> (i % 8)))
            return 0;
    return 1;
}

/* Digits only, no sign, no leading junk: strtoul would take " +8". */
static int parse_prefix(const char *s, unsigned max, unsigned *ret)
{
    size_t n = strlen(s);
    if (n == 0 || n > 3)
        return -EINVAL;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > max)
        return -ERANGE;
    *ret = v;
    return 0;
}

/* The address part; fills family and addr. */
static int parse_addr(const char *s, struct gw_cidr *c)
{
    memset(c->addr, 0, sizeof(c->addr));
    if (inet_pton(AF_INET, s, c->addr) == 1) {
        c->family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, s, c->addr) == 1) {
        c->family = AF_INET6;
        return 0;
    }
    return -EINVAL;
}

int gw_cidr_parse(const char *text, struct gw_cidr *ret, struct sg_error *err)
{
    char buf[GW_CIDR_TEXT_MAX];
    size_t n = text ? strlen(text) : 0;
    int printable = n > 0 && n < sizeof(buf);
    for (size_t i = 0; printable && i < n; i++)
        printable = text[i] > ' ' && text[i] < 0x7f;
    /* messages quote the text: only when it is one short printable word */
    if (!printable)
        return sg_error_set(err, -EINVAL, "expected an address or network such as 10.0.0.0/8");
    memcpy(buf, text, n + 1);
    char *slash = strchr(buf, '/');
    if (slash)
        *slash = '\0';
    struct gw_cidr c = {0};
    if (parse_addr(buf, &c) < 0)
        return sg_error_set(err, -EINVAL, "'%s' is not an IPv4 or IPv6 address or network", text);
    c.prefix = family_bits(c.family);
    if (slash && parse_prefix(slash + 1, c.prefix, &c.prefix) < 0)
        return sg_error_set(err, -EINVAL, "'%s': the prefix length is 0-%u", text,
                            family_bits(c.family));
    if (c.family == AF_INET6 && !memcmp(c.addr, v4_mapped_prefix, 12)) {
        if (c.prefix < 96)
            return sg_error_set(err, -EINVAL,
                                "'%s': an IPv4-mapped network needs a prefix "
                                "of at least 96",
                                text);
        memmove(c.addr, c.addr + 12, 4);
        memset(c.addr + 4, 0, 12);
        c.family = AF_INET;
        c.prefix -= 96;
    }
    if (c.prefix == 0)
        return sg_error_set(err, -EINVAL,
                            "'%s' is every address: bind a narrower network, "
                            "or use tokens",
                            text);
    if (!host_bits_clear(&c))
        return sg_error_set(err, -EINVAL, "'%s' has bits set past the /%u prefix", text, c.prefix);
    *ret = c;
    return 0;
}

void gw_cidr_format(const struct gw_cidr *c, char *out, size_t outsz)
{
    char a[INET6_ADDRSTRLEN] = "?";
    inet_ntop(c->family, c->addr, a, sizeof(a));
    snprintf(out, outsz, "%s/%u", a, c->prefix);
}

int gw_cidr_overlap(const struct gw_cidr *a, const struct gw_cidr *b)
{
    if (a->family != b->family)
        return 0;
    return prefix_equal(a->addr, b->addr, a->prefix < b->prefix ? a->prefix : b->prefix);
}

static int push(struct gw_netauth *na, const struct gw_cidr *c, size_t owner)
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
        struct gw_cidr c;
        struct sg_error e = {0};
        if (!json_is_string(v))
            return sg_error_set(err, -EINVAL, "%s[%zu]: expected a string", path, i);
        if (gw_cidr_parse(json_string_value(v), &c, &e) < 0)
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
            if (a->owner == b->owner || !gw_cidr_overlap(&a->net, &b->net))
                continue;
            char ta[GW_CIDR_TEXT_MAX], tb[GW_CIDR_TEXT_MAX];
            gw_cidr_format(&a->net, ta, sizeof(ta));
            gw_cidr_format(&b->net, tb, sizeof(tb));
            return sg_error_set(err, -EINVAL,
                                "%s: networks of tenants %s (%s) and %s (%s) "
                                "overlap: a source address must identify one tenant",
                                origin, names[a->owner], ta, names[b->owner], tb);
        }
    return 0;
}

long gw_netauth_lookup(const struct gw_netauth *na, const char *peer,
                       const struct gw_cidr **ret_net)
{
    struct gw_cidr p;
    if (ret_net)
        *ret_net = NULL;
    if (!na || !na->count || !peer || gw_cidr_parse(peer, &p, NULL) < 0 ||
        p.prefix != family_bits(p.family))
        return -1;
    for (size_t i = 0; i < na->count; i++)
        if (gw_cidr_overlap(&na->items[i].net, &p)) {
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
