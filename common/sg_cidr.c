/* sg_cidr.c - IPv4/IPv6 networks in text: parse, format, overlap. */
#include "sg_cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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

static int host_bits_clear(const struct sg_cidr *c)
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
static int parse_addr(const char *s, struct sg_cidr *c)
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

int sg_cidr_parse(const char *text, struct sg_cidr *ret, struct sg_error *err)
{
    char buf[SG_CIDR_TEXT_MAX];
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
    struct sg_cidr c = {0};
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

void sg_cidr_format(const struct sg_cidr *c, char *out, size_t outsz)
{
    char a[INET6_ADDRSTRLEN] = "?";
    inet_ntop(c->family, c->addr, a, sizeof(a));
    snprintf(out, outsz, "%s/%u", a, c->prefix);
}

int sg_cidr_overlap(const struct sg_cidr *a, const struct sg_cidr *b)
{
    if (a->family != b->family)
        return 0;
    return prefix_equal(a->addr, b->addr, a->prefix < b->prefix ? a->prefix : b->prefix);
}

int sg_cidr_contains(const struct sg_cidr *outer, const struct sg_cidr *inner)
{
    return outer->family == inner->family && outer->prefix <= inner->prefix &&
           prefix_equal(outer->addr, inner->addr, outer->prefix);
}

int sg_cidr_is_address(const struct sg_cidr *c)
{
    return c->prefix == family_bits(c->family);
}
