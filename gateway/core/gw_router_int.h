/* gw_router_int.h - the router's internals, shared by gw_router.c (the slot
 * table: executors per language, discovery, health rounds, status and
 * metrics), gw_router_exec.c (the one-job transport over libcurl: a job with
 * failover, a GET, a cancel) and gw_router_session.c (session calls routed
 * by boot id). Not for other modules: use gw_router.h.
 */
#ifndef SG_GW_ROUTER_INT_H
#define SG_GW_ROUTER_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "buf.h"
#include "gw_discover.h"
#include "gw_relay.h"
#include "gw_router.h"

#define HANDLE_POOL_MAX 64 /* idle curl handles per executor (no connections kept) */
#define HEALTH_BODY_MAX (64u * 1024u)
#define HEALTH_TIMEOUT_MS 2000u /* one health check, whole request */
/* A slot is never freed, only retired (active = 0) and reused once no job is
 * in flight on it, so a request thread's pointer stays valid. */
#define ROUTER_SLOTS_MAX GW_ROUTER_SLOTS_MAX

struct upstream {
    atomic_int active; /* static URLs always; discovered ones while DNS lists them */
    int source;        /* index into disc[lang] for a discovered one, -1 static */
    char url[GW_URL_MAX];
    char exec_url[GW_URL_MAX + 16];
    char health_url[GW_URL_MAX + 16];
    atomic_int healthy;
    atomic_uint inflight;
    atomic_uint capacity; /* max_jobs the executor's /healthz advertises; 0 = not said */
    char boot_id[GW_BOOT_ID_MAX + 1]; /* its /healthz boot_id (sessions); under slots_lock */
    json_t *pools; /* its last /healthz's pools (gw_overview.h), NULL; under slots_lock */
    atomic_uint_fast64_t ok, failed, unreachable, busy;
    pthread_mutex_t pool_lock;
    CURL *pool[HANDLE_POOL_MAX];
    size_t pool_n;
};

struct gw_router {
    struct upstream up[SG_LANG_COUNT][ROUTER_SLOTS_MAX];
    atomic_size_t count[SG_LANG_COUNT]; /* slots ever used; only grows */
    struct gw_discover *disc[SG_LANG_COUNT][GW_EXECUTORS_MAX];
    size_t disc_n[SG_LANG_COUNT];
    char disc_urls[ROUTER_SLOTS_MAX][GW_URL_MAX]; /* one resolution's answer */
    gw_resolve_fn resolver;                       /* NULL: the system's (tests inject one) */
    void *resolver_ud;
    pthread_mutex_t round_lock; /* one health round (with its discovery) at a time */
    pthread_mutex_t slots_lock; /* slot URLs change under it; readers of URLs off
                                   the request path take it */
    atomic_uint rr[SG_LANG_COUNT];
    uint64_t connect_timeout_ms, health_interval_ms, busy_retries, max_inflight;
    struct curl_slist *headers;
    struct sg_membudget *budget; /* answers are counted in it (gw_answer.h); NULL: not */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
};

/* An idle curl handle of u (or a new one; NULL: out of memory). Give it back
 * with gw_router_put(), which keeps at most HANDLE_POOL_MAX per executor. */
CURL *gw_router_take(struct upstream *u);
void gw_router_put(struct upstream *u, CURL *c);

/* Reset c for one HTTP request to url within connect_ms / total_ms, the
 * answer appended to body (its cap aborts the transfer). */
void gw_router_setup(CURL *c, const char *url, uint64_t connect_ms, uint64_t total_ms,
                     struct sg_buf *body);

/* Send c's answer to a (counted in its budget) instead of setup's buffer. */
void gw_router_to_answer(CURL *c, struct gw_answer *a);

/* An answer refused by the budget (got: its length had it been taken) as
 * ret's outcome: GW_EXEC_BUSY, over_budget, the message; never failed over
 * (the executor took the call). */
enum gw_exec_outcome gw_router_over_budget(const char *url, size_t got, struct gw_exec_result *ret);

/* Move a's bytes and reservation into ret (what ret held before freed). */
void gw_router_keep_answer(struct gw_router *r, struct gw_answer *a, struct gw_exec_result *ret);

/* 1 when the request cannot have reached the executor (safe to fail over). */
int gw_router_never_sent(CURL *c, CURLcode rc);

/* The transfer: plain, or streamed through the relay when hooks->event is
 * set (then a relay failure is CURLE_RECV_ERROR with ret->message and
 * ret->client_gone filled). */
CURLcode gw_router_perform(CURL *c, const struct gw_exec_hooks *hooks, struct gw_answer *resp,
                           struct gw_exec_result *ret);

/* Count an attempt's outcome on u and mark it down (connect failure) or up. */
void gw_router_count(struct upstream *u, enum gw_exec_outcome o);

/* Jobs u may have in flight: the smaller of the configured cap and what the
 * executor advertises. */
unsigned gw_router_limit(const struct gw_router *r, struct upstream *u);

#endif
