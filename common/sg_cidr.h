/* sg_cidr.h - IPv4/IPv6 networks in text form, shared by the gateway's
 * trusted source networks (gw_netauth) and the network allow-lists
 * (sg_netallow). Pure functions, no state. */
#ifndef SG_CIDR_H
#define SG_CIDR_H

#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

#define SG_CIDR_TEXT_MAX 64 /* "ffff:...:ffff/128" fits */

/* An address (prefix 32/128) or a network, IPv4 or IPv6, host bits clear. */
struct sg_cidr {
    int family;       /* AF_INET or AF_INET6 */
    uint8_t addr[16]; /* network byte order; 4 bytes used for AF_INET */
    unsigned prefix;  /* 1..32 or 1..128 (0, "everything", is refused) */
};

/* Parse "A.B.C.D/N", "X:Y::Z/N" or a bare address (a host network).
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address. Host bits set
 * ("10.0.0.1/8") and /0 are errors. */
int sg_cidr_parse(const char *text, struct sg_cidr *ret, struct sg_error *err);

/* The canonical text ("10.0.0.0/8"); out holds SG_CIDR_TEXT_MAX bytes. */
void sg_cidr_format(const struct sg_cidr *c, char *out, size_t outsz);

/* 1 when the two networks share at least one address. */
int sg_cidr_overlap(const struct sg_cidr *a, const struct sg_cidr *b);

/* 1 when c is one address (prefix 32 or 128), as a parsed bare address is. */
int sg_cidr_is_address(const struct sg_cidr *c);

/* 1 when network `outer` holds every address of network `inner`. */
int sg_cidr_contains(const struct sg_cidr *outer, const struct sg_cidr *inner);

#endif
