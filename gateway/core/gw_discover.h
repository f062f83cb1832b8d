/* gw_discover.h - executor discovery through DNS (Docker Swarm's tasks.<service>).
 *
 * An executor URL is a discovery URL when its host begins with "tasks." (Swarm's
 * DNS answers tasks.<service> with one address per running task) or its scheme
 * is "dns+http://" (any name; every address it resolves to is an executor).
 * The router re-resolves each discovery URL on its health thread and routes to
 * "http://<address>:<port>" per address; static URLs are left as they are.
 *
 * Resolution is bounded: at most GW_DISCOVER_ADDRS_MAX addresses, and at most
 * GW_DISCOVER_TIMEOUT_MS per name per round (glibc's getaddrinfo_a; a lookup still
 * running after that is left to finish and read on a later round, never
 * waited for, and a new one is not started meanwhile).
 *
 * Ownership: struct gw_discover is owned by its caller (gw_discover_free()).
 * Not thread-safe: one thread (the router's health round) uses each.
 */
#ifndef SG_GW_DISCOVER_H
#define SG_GW_DISCOVER_H

#include <netdb.h>
#include <stddef.h>
#include <stdint.h>

#include "gw_config.h"
#include "sg_error.h"

#define GW_DISCOVER_ADDRS_MAX 32     /* addresses taken from one name */
#define GW_DISCOVER_TIMEOUT_MS 1000u /* one resolution round */
#define GW_DISCOVER_HOST_MAX 200

/* Outcome of one resolution. */
enum gw_discover_result {
    GW_DISCOVER_ADDRS = 0, /* urls[0..n) is the new set (n may be 0: the name is gone) */
    GW_DISCOVER_KEEP,      /* no answer this round (timeout, server failure): keep the old set */
};

/* A resolver: fill addrs with up to max numeric addresses (IPv6 without
 * brackets) of host and return their count, 0 when the name does not exist,
 * or a negative errno when there is no answer now. Tests inject one; the
 * default is getaddrinfo_a bounded by GW_DISCOVER_TIMEOUT_MS. */
typedef int (*gw_resolve_fn)(void *ud, const char *host, char (*addrs)[INET6_ADDRSTRLEN],
                             size_t max);

struct gw_discover;

/* 1 when url is a discovery URL, 0 when it is a static one. */
int gw_discover_is_dynamic(const char *url);

/* Parse a discovery URL ("http://tasks.x:9401", "dns+http://name:9401").
 * The port is required. */
int gw_discover_new(const char *url, struct gw_discover **ret, struct sg_error *err);

void gw_discover_free(struct gw_discover *d);

/* The URL it was made from (for logs and /readyz). */
const char *gw_discover_source(const struct gw_discover *d);

/* Resolve once (resolver NULL: the bounded system resolver) and write the
 * executor URLs, sorted and without duplicates, to urls[0..*n). */
enum gw_discover_result gw_discover_resolve(struct gw_discover *d, gw_resolve_fn resolver, void *ud,
                                            char (*urls)[GW_URL_MAX], size_t max, size_t *n);

#endif
