#include "httpsrv_conns.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sg_time.h"

#define SWEEP_INTERVAL_MS 250u
#define ADDR_SLOTS 1024u /* hash chains of client addresses (a power of two) */

/* One client address and its open connections, oldest clock first. */
struct addr_slot {
    struct addr_slot *next; /* hash chain */
    unsigned char key[16];  /* IPv6, or IPv4 mapped into it */
    unsigned open, cut;     /* open connections; of them shut down, not yet closed */
    unsigned busy;          /* of them with a complete request (not cut) */
    struct sg_conn_rec *first, *last;
};

/* An owner (a tenant) and its connections between head and complete request. */
struct owner_slot {
    struct owner_slot *next;
    unsigned n;
    char name[SG_CONN_OWNER_MAX + 1];
};

struct sg_conn_rec {
    struct sg_conn_rec *prev, *next;   /* the register's list (sweep) */
    struct owner_slot *owner;          /* NULL: none (sg_conns_own) */
    struct sg_conn_rec *aprev, *anext; /* its address's list, oldest clock first */
    struct addr_slot *slot;
    int fd;
    uint64_t since_ms; /* when the current request's clocks started */
    enum sg_conn_phase phase;
    int cut; /* shut down by the register; the event loop closes it */
};

struct sg_conns {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct sg_conn_rec head; /* list sentinel */
    struct addr_slot *table[ADDR_SLOTS];
    struct owner_slot *owners; /* with at least one connection; few: the tenants */
    struct sg_conn_limits lim;
    unsigned open, cut;
    struct sg_conn_stats stats; /* counters only; open is filled on read */
    pthread_t thread;
    int started, stop;
};

/* The client's key: an IPv4 address whole (as ::ffff:a.b.c.d, which is also
 * how a dual-stack socket reports an IPv4 peer), an IPv6 address by its /64
 * (one host is commonly given a whole /64, so its addresses are one client). */
static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(key, 0, 16);
    if (sa && sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        if (memcmp(key, v4mapped, sizeof(v4mapped)) != 0)
            memset(key + 8, 0, 8);
    } else if (sa && sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    }
}

static unsigned addr_hash(const unsigned char key[16])
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 16777619u;
    return h & (ADDR_SLOTS - 1);
}

static struct addr_slot *slot_find(struct sg_conns *r, const unsigned char key[16])
{
    for (struct addr_slot *s = r->table[addr_hash(key)]; s; s = s->next)
        if (memcmp(s->key, key, 16) == 0)
            return s;
    return NULL;
}

static void slot_append(struct addr_slot *s, struct sg_conn_rec *c)
{
    c->anext = NULL;
    c->aprev = s->last;
    if (s->last)
        s->last->anext = c;
    else
        s->first = c;
    s->last = c;
}

static void slot_unlink(struct addr_slot *s, struct sg_conn_rec *c)
{
    if (c->aprev)
        c->aprev->anext = c->anext;
    else
        s->first = c->anext;
    if (c->anext)
        c->anext->aprev = c->aprev;
    else
        s->last = c->aprev;
}

static void slot_drop(struct sg_conns *r, struct addr_slot *s)
{
    struct addr_slot **p = &r->table[addr_hash(s->key)];
    while (*p != s)
        p = &(*p)->next;
    *p = s->next;
    free(s);
}

/* Shut down (not close: the event loop owns the fd). Under r->lock, which
 * also keeps the fd open: a connection leaves the register before its fd is
 * closed. */
static void cut(struct sg_conns *r, struct sg_conn_rec *c, uint64_t *counter)
{
    if (c->phase == SG_CONN_BUSY)
        c->slot->busy--; /* counted as cut from now on */
    shutdown(c->fd, SHUT_RDWR);
    c->cut = 1;
    r->cut++;
    c->slot->cut++;
    (*counter)++;
}

/* The address's oldest connection still waiting for a head (its list is in
 * clock order): a client that connects and sends its head at once is the
 * last of its address to be chosen, after every connection that came before
 * it, so that new connections evict each other only once they have cycled
 * through all the address holds. */
static struct sg_conn_rec *oldest_evictable(struct addr_slot *s)
{
    for (struct sg_conn_rec *c = s->first; c; c = c->anext)
        if (c->phase == SG_CONN_HEAD && !c->cut)
            return c;
    return NULL;
}

/* What an address holds against its limit: its connections not yet served
 * (waiting for or receiving a request). One whose request is complete is
 * bounded by the worker pool and its queue, and counts in the total only. */
static unsigned held(const struct addr_slot *s)
{
    return s->open - s->cut - s->busy;
}

/* The victim when the whole server is full: from the address holding the
 * most connections that has one to give. */
static struct sg_conn_rec *global_victim(struct sg_conns *r)
{
    struct sg_conn_rec *best = NULL;
    unsigned best_held = 0;
    for (unsigned i = 0; i < ADDR_SLOTS; i++) {
        for (struct addr_slot *s = r->table[i]; s; s = s->next) {
            unsigned h = held(s);
            if (h <= best_held)
                continue;
            struct sg_conn_rec *c = oldest_evictable(s);
            if (c) {
                best = c;
                best_held = h;
            }
        }
    }
    return best;
}

int sg_conns_admit(struct sg_conns *r, const struct sockaddr *addr)
{
    unsigned char key[16];
    addr_key(addr, key);
    int ret = 0;
    pthread_mutex_lock(&r->lock);
    struct addr_slot *s = slot_find(r, key);
    struct sg_conn_rec *victim = NULL;
    uint64_t *refused = NULL;
    if (r->lim.per_address && s && held(s) >= r->lim.per_address) {
        /* the address's own connection makes room, also within the total */
        victim = oldest_evictable(s);
        refused = &r->stats.refused_per_address;
    } else if (r->open - r->cut >= r->lim.max_open) {
        victim = global_victim(r);
        refused = &r->stats.refused_global;
    }
    if (victim) {
        cut(r, victim, &r->stats.evicted);
    } else if (refused) {
        (*refused)++;
        ret = -EBUSY;
    }
    pthread_mutex_unlock(&r->lock);
    return ret;
}

static void sweep(struct sg_conns *r, uint64_t now)
{
    for (struct sg_conn_rec *c = r->head.next; c != &r->head; c = c->next) {
        if (c->cut || c->phase == SG_CONN_BUSY)
            continue;
        if (c->phase == SG_CONN_HEAD && now - c->since_ms >= r->lim.head_ms)
            cut(r, c, &r->stats.cut_head);
        else if (now - c->since_ms >= r->lim.request_ms)
            cut(r, c, &r->stats.cut_request);
    }
}

static void *sweeper_main(void *arg)
{
    struct sg_conns *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)SWEEP_INTERVAL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r->wake, &r->lock, &ts);
        sweep(r, sg_time_mono_ms());
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

struct sg_conns *sg_conns_new(const struct sg_conn_limits *lim)
{
    struct sg_conns *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->head.next = r->head.prev = &r->head;
    r->lim = *lim;
    if (pthread_create(&r->thread, NULL, sweeper_main, r) != 0) {
        sg_conns_free(r);
        return NULL;
    }
    r->started = 1;
    return r;
}

void sg_conns_free(struct sg_conns *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    while (r->head.next != &r->head)
        sg_conns_remove(r, r->head.next);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    free(r);
}

struct sg_conn_rec *sg_conns_add(struct sg_conns *r, int fd, const struct sockaddr *addr)
{
    unsigned char key[16];
    addr_key(addr, key);
    struct sg_conn_rec *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->fd = fd;
    pthread_mutex_lock(&r->lock);
    struct addr_slot *s = slot_find(r, key);
    if (!s && (s = calloc(1, sizeof(*s)))) {
        memcpy(s->key, key, 16);
        s->next = r->table[addr_hash(key)];
        r->table[addr_hash(key)] = s;
    }
    if (!s) {
        pthread_mutex_unlock(&r->lock);
        free(c);
        return NULL;
    }
    c->slot = s;
    c->since_ms = sg_time_mono_ms();
    slot_append(s, c);
    s->open++;
    r->open++;
    c->next = r->head.next;
    c->prev = &r->head;
    r->head.next->prev = c;
    r->head.next = c;
    pthread_mutex_unlock(&r->lock);
    return c;
}

/* Under r->lock: c no longer counts against its owner. */
static void disown_locked(struct sg_conns *r, struct sg_conn_rec *c)
{
    struct owner_slot *o = c->owner;
    c->owner = NULL;
    if (!o || --o->n)
        return;
    for (struct owner_slot **p = &r->owners; *p; p = &(*p)->next)
        if (*p == o) {
            *p = o->next;
            break;
        }
    free(o);
}

int sg_conns_own(struct sg_conns *r, struct sg_conn_rec *c, const char *owner)
{
    if (!c || !owner)
        return 0;
    char name[SG_CONN_OWNER_MAX + 1];
    snprintf(name, sizeof(name), "%s", owner);
    int ret = 0;
    pthread_mutex_lock(&r->lock);
    disown_locked(r, c);
    struct owner_slot *o = r->owners;
    while (o && strcmp(o->name, name) != 0)
        o = o->next;
    if (o && r->lim.per_owner && o->n >= r->lim.per_owner) {
        r->stats.refused_per_owner++;
        ret = -EBUSY;
    } else if (!o && !(o = calloc(1, sizeof(*o)))) {
        ret = -ENOMEM;
    } else {
        if (!o->n) {
            memcpy(o->name, name, sizeof(name));
            o->next = r->owners;
            r->owners = o;
        }
        o->n++;
        c->owner = o;
    }
    pthread_mutex_unlock(&r->lock);
    return ret;
}

void sg_conns_remove(struct sg_conns *r, struct sg_conn_rec *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&r->lock);
    disown_locked(r, c);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    struct addr_slot *s = c->slot;
    slot_unlink(s, c);
    s->open--;
    r->open--;
    if (c->cut) {
        s->cut--;
        r->cut--;
    } else if (c->phase == SG_CONN_BUSY) {
        s->busy--;
    }
    if (!s->open)
        slot_drop(r, s);
    pthread_mutex_unlock(&r->lock);
    free(c);
}

void sg_conns_mark(struct sg_conns *r, struct sg_conn_rec *c, enum sg_conn_phase phase)
{
    if (!c)
        return;
    pthread_mutex_lock(&r->lock);
    if (phase != SG_CONN_BODY)
        disown_locked(r, c);
    if (!c->cut && (c->phase == SG_CONN_BUSY) != (phase == SG_CONN_BUSY)) {
        if (phase == SG_CONN_BUSY)
            c->slot->busy++;
        else
            c->slot->busy--;
    }
    c->phase = phase;
    if (phase == SG_CONN_HEAD) { /* the next request: its clocks start now */
        c->since_ms = sg_time_mono_ms();
        slot_unlink(c->slot, c);
        slot_append(c->slot, c);
    }
    pthread_mutex_unlock(&r->lock);
}

void sg_conns_get_stats(struct sg_conns *r, struct sg_conn_stats *ret)
{
    pthread_mutex_lock(&r->lock);
    *ret = r->stats;
    ret->open = r->open;
    pthread_mutex_unlock(&r->lock);
}
