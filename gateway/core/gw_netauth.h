/* gw_netauth.h - trusted source networks: tenants identified by where a
 * request comes from instead of by a token.
 *
 * RAGFlow's client sends no token and no extra header, so a tenant in the
 * tokens file may list "networks": ["172.28.0.0/16", "127.0.0.1/32"]. A
 * request that carries no token and whose peer address lies in one of those
 * networks is that tenant. This is weaker than a token: anyone who can send
 * from such an address is that tenant. Networks of two tenants must not
 * overlap, so a peer address maps to at most one tenant.
 *
 * A table is built once per tokens-file load and is immutable afterwards, so
 * threads may share it.
 */
#ifndef SG_GW_NETAUTH_H
#define SG_GW_NETAUTH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sg_cidr.h"
#include "sg_error.h"

#define GW_NETWORKS_PER_TENANT_MAX 16
#define GW_NETAUTH_MAX 1024 /* networks in one tokens file */
struct gw_netauth_entry {
    struct sg_cidr net;
    size_t owner; /* index of the tenant in its table */
};

struct gw_netauth {
    struct gw_netauth_entry *items; /* owned */
    size_t count, cap;
};

/* Append the networks of tenant `owner` from a JSON array of strings; `path`
 * names the array in error messages. */
int gw_netauth_add_json(struct gw_netauth *na, size_t owner, json_t *arr, const char *path,
                        struct sg_error *err);

/* Refuse networks of two different owners that overlap; the message names
 * both owners (names[owner]) and both networks. */
int gw_netauth_check(const struct gw_netauth *na, const char *const *names, const char *origin,
                     struct sg_error *err);

/* The owner whose network holds the textual peer address, or -1 (also for
 * NULL, "unknown" or anything that is not an address). When ret_net is not
 * NULL it receives the matching network. */
long gw_netauth_lookup(const struct gw_netauth *na, const char *peer,
                       const struct sg_cidr **ret_net);

/* Release the entries (na itself is caller-owned). NULL is a no-op. */
void gw_netauth_clear(struct gw_netauth *na);

#endif
