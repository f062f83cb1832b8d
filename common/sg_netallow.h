/* sg_netallow.h - network allow-list entries (README, "Network"): what a
 * tenant may grant and what a job asks for, shared by the gateway (tenant
 * lists, the subset check that answers 403 network_not_allowed) and the
 * executor (which re-validates a job's list before the egress proxy sees it).
 *
 * Entry syntax, one string each, at most SG_NETALLOW_TEXT_MAX bytes:
 *   api.example.com        an exact host name
 *   *.corp.internal        any name below corp.internal (not corp.internal)
 *   *                      any host (never link-local, metadata or loopback:
 *                          the proxy refuses those whatever a list says)
 *   10.20.0.0/16, 10.1.2.3 an IPv4 network or address (the job must connect
 *   [2001:db8::/32]        to an address literal in it; IPv6 in brackets)
 * each with an optional ":port" (1-65535); without one, ports 80 and 443.
 * Names are case-insensitive and kept lower-case. Pure functions.
 */
#ifndef SG_NETALLOW_H
#define SG_NETALLOW_H

#include <stddef.h>

#include "sg_cidr.h"
#include "sg_error.h"

#define SG_NETALLOW_TEXT_MAX 272 /* a 253-byte name, "*.", "[]", ":65535" */
#define SG_NETALLOW_HOST_MAX 253 /* DNS name length */
#define SG_NETALLOW_LIST_MAX 64  /* entries in one list */

enum sg_netallow_kind {
    SG_NETALLOW_HOST = 0, /* exact name */
    SG_NETALLOW_SUFFIX,   /* "*.suffix": host holds the suffix without "*." */
    SG_NETALLOW_ANY,      /* "*" */
    SG_NETALLOW_CIDR,     /* address literal inside net */
};

struct sg_netallow_entry {
    enum sg_netallow_kind kind;
    char host[SG_NETALLOW_HOST_MAX + 1]; /* HOST, SUFFIX: lower-case name */
    struct sg_cidr net;                  /* CIDR */
    unsigned port;                       /* 0: the default ports 80 and 443 */
};

/* Parse one entry; the message quotes the text when it is short and printable. */
int sg_netallow_parse(const char *text, struct sg_netallow_entry *ret, struct sg_error *err);

/* The canonical text of e ("*.corp.internal:443", "10.20.0.0/16");
 * out holds SG_NETALLOW_TEXT_MAX bytes. */
void sg_netallow_format(const struct sg_netallow_entry *e, char *out, size_t outsz);

/* 1 when every connection `inner` permits is also permitted by `outer`. */
int sg_netallow_covers(const struct sg_netallow_entry *outer,
                       const struct sg_netallow_entry *inner);

/* 1 when some entry of list[0..n) covers e. */
int sg_netallow_list_covers(const struct sg_netallow_entry *list, size_t n,
                            const struct sg_netallow_entry *e);

/* 1 when e permits a connection to host (a name or an address literal,
 * without brackets) on port: the decision the egress proxy's helper makes. */
int sg_netallow_matches(const struct sg_netallow_entry *e, const char *host, unsigned port);

#endif
