/* httpsrv_conns.h - httpsrv's register of open connections: who may connect
 * (the global and per-address limits, and the eviction that keeps them from
 * being held), and the deadlines of a request's head and of the whole
 * request, enforced by a sweeper thread. Not for use outside httpsrv.c.
 *
 * Fairness rule: a connection that has not delivered a complete request head
 * (new, or kept alive after an answer) has shown nothing and holds nothing a
 * caller is accountable for. When a new connection would pass a limit, the
 * oldest such connection of its own address (per-address limit) or of the
 * address that holds the most (global limit) is closed to make room, rather
 * than the new one refused; a
 * connection whose head was accepted (authenticated by the owner's head hook)
 * is never evicted and ends by its request deadline. The per-address limit
 * counts an address's connections not yet served (waiting for or receiving a
 * request): one whose request is complete is bounded by the worker pool and
 * its queue, and counts against the total only. So neither a client
 * holding its address's limit with idle connections nor a few addresses
 * reconnecting with slow heads can lock others out; only when nothing can be
 * evicted is the new connection refused.
 */
#ifndef SG_HTTPSRV_CONNS_H
#define SG_HTTPSRV_CONNS_H

#include <stdint.h>
#include <sys/socket.h>

enum sg_conn_phase {
    SG_CONN_HEAD = 0, /* waiting for (the rest of) a request head: evictable */
    SG_CONN_BODY,     /* head accepted, body arriving */
    SG_CONN_BUSY,     /* request complete: handled or answering, no deadline */
};

struct sg_conn_limits {
    unsigned max_open;    /* connections in total */
    unsigned per_address; /* connections per client address not yet served; 0 = no limit */
    uint64_t head_ms;     /* a request's head must arrive within this */
    uint64_t request_ms;  /* its head and body within this */
    unsigned per_owner;   /* connections whose head was accepted, per owner (a
                             tenant), until their request is complete; 0 = no limit */
};

#define SG_CONN_OWNER_MAX 95 /* bytes of an owner's name */

struct sg_conn_stats {
    unsigned open;                /* connections open now */
    uint64_t refused_global;      /* refused at accept: max_open and nothing evictable */
    uint64_t refused_per_address; /* refused at accept: per_address and nothing evictable */
    uint64_t refused_per_owner;   /* refused on the head: the owner's per_owner held */
    uint64_t evicted;             /* closed waiting for a head, to admit a newer one */
    uint64_t cut_head;            /* closed: no complete head within head_ms */
    uint64_t cut_request;         /* closed: head and body not within request_ms */
};

struct sg_conns;
struct sg_conn_rec;

/* Start the register and its sweeper; NULL on failure. Free with
 * sg_conns_free(). */
struct sg_conns *sg_conns_new(const struct sg_conn_limits *lim);

/* Stop the sweeper and free; every connection must have been removed, or is
 * forgotten. NULL is a no-op. */
void sg_conns_free(struct sg_conns *r);

/* May a connection from addr be accepted now? 0 (possibly after evicting
 * one: its socket is shut down and the event loop closes it), or -EBUSY
 * (refused, counted with its reason). Two event threads may admit at once,
 * so a limit may be passed by one connection per thread. */
int sg_conns_admit(struct sg_conns *r, const struct sockaddr *addr);

/* A new connection on fd from addr, in SG_CONN_HEAD with its head clock
 * started; NULL on out of memory (it is then not tracked). */
struct sg_conn_rec *sg_conns_add(struct sg_conns *r, int fd, const struct sockaddr *addr);

/* The connection is closing (before its fd is closed). NULL is a no-op. */
void sg_conns_remove(struct sg_conns *r, struct sg_conn_rec *c);

/* The connection's phase changes; SG_CONN_HEAD (waiting for the next
 * request) restarts its clocks. NULL is a no-op. */
void sg_conns_mark(struct sg_conns *r, struct sg_conn_rec *c, enum sg_conn_phase phase);

/* The connection's request belongs to owner (a tenant; at most
 * SG_CONN_OWNER_MAX bytes, longer is cut): 0, counted against the owner's
 * per_owner limit until the connection leaves SG_CONN_BODY (its request is
 * complete, or the connection is removed), or -EBUSY (counted; the caller
 * refuses the request). A connection owned before is released first. */
int sg_conns_own(struct sg_conns *r, struct sg_conn_rec *c, const char *owner);

void sg_conns_get_stats(struct sg_conns *r, struct sg_conn_stats *ret);

#endif
