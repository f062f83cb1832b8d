#include "gw_router.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_discover.h"
#include "gw_overview.h"
#include "log.h"

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
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static CURL *pool_take(struct upstream *u)
{
    CURL *c = NULL;
    pthread_mutex_lock(&u->pool_lock);
    if (u->pool_n)
        c = u->pool[--u->pool_n];
    pthread_mutex_unlock(&u->pool_lock);
    return c ? c : curl_easy_init();
}

static void pool_put(struct upstream *u, CURL *c)
{
    pthread_mutex_lock(&u->pool_lock);
    if (u->pool_n < HANDLE_POOL_MAX) {
        u->pool[u->pool_n++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&u->pool_lock);
    if (c)
        curl_easy_cleanup(c);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sg_buf *b = ud;
    size_t n = size * nmemb;
    return sg_buf_append(b, data, n) == 0 ? n : 0; /* 0 aborts: CURLE_WRITE_ERROR */
}

static void set_common(CURL *c, const char *url, uint64_t connect_ms, uint64_t total_ms,
                       struct sg_buf *body)
{
    curl_easy_reset(c); /* keeps the connection cache */
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)total_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
}

/* 1 when the request cannot have reached the executor (safe to fail over). */
static int never_sent(CURL *c, CURLcode rc)
{
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
        rc == CURLE_COULDNT_RESOLVE_PROXY)
        return 1;
    long sent = 0;
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
    return rc == CURLE_OPERATION_TIMEDOUT && sent == 0;
}

/* The transfer: plain, or streamed through the relay. */
static CURLcode perform(CURL *c, const struct gw_exec_hooks *hooks, struct sg_buf *resp,
                        struct gw_exec_result *ret)
{
    if (!hooks || !hooks->event)
        return curl_easy_perform(c);
    CURLcode rc;
    enum gw_relay_end e = gw_relay_perform(c, hooks, resp, &rc);
    if (e == GW_RELAY_DONE)
        return rc;
    ret->client_gone = e == GW_RELAY_ABORTED;
    snprintf(ret->message, sizeof(ret->message), "%s",
             e == GW_RELAY_ABORTED     ? "the client went away"
             : e == GW_RELAY_NO_RESULT ? "the event stream ended without a result"
                                       : "malformed event stream");
    return CURLE_RECV_ERROR;
}

static enum gw_exec_outcome attempt(struct gw_router *r, struct upstream *u, const char *body,
                                    size_t len, uint64_t timeout_ms,
                                    const struct gw_exec_hooks *hooks, struct gw_exec_result *ret)
{
    struct sg_buf resp;
    sg_buf_init(&resp, GW_EXEC_RESPONSE_MAX);
    CURL *c = pool_take(u);
    if (!c) {
        snprintf(ret->message, sizeof(ret->message), "out of memory");
        return GW_EXEC_FAILED;
    }
    set_common(c, u->exec_url, r->connect_timeout_ms, timeout_ms, &resp);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    /* A job never goes over a reused connection: on one the executor closed,
     * libcurl re-sends the request by itself, and a job it thinks was lost
     * may have started. A fresh connection per job also leaves no idle
     * connection holding one of the executor's slots between jobs. */
    curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    if (hooks && hooks->attempt)
        hooks->attempt(hooks->ud, u->url);
    ret->message[0] = '\0';
    CURLcode rc = perform(c, hooks, &resp, ret);
    enum gw_exec_outcome out;
    snprintf(ret->executor, sizeof(ret->executor), "%s", u->url);
    ret->http_status = 0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->http_status);
        out = ret->http_status == 200   ? GW_EXEC_OK
              : ret->http_status == 503 ? GW_EXEC_BUSY
                                        : GW_EXEC_FAILED;
        snprintf(ret->message, sizeof(ret->message), "executor %s answered HTTP %ld", u->url,
                 ret->http_status);
    } else if (never_sent(c, rc)) {
        out = GW_EXEC_UNREACHABLE;
        snprintf(ret->message, sizeof(ret->message), "executor %s unreachable: %s", u->url,
                 curl_easy_strerror(rc));
    } else if (ret->message[0]) { /* the relay said why */
        out = GW_EXEC_FAILED;
    } else {
        out = GW_EXEC_FAILED;
        snprintf(ret->message, sizeof(ret->message), "executor %s: %s", u->url,
                 rc == CURLE_WRITE_ERROR          ? "answer larger than the cap"
                 : rc == CURLE_OPERATION_TIMEDOUT ? "no answer within the job's time budget"
                                                  : curl_easy_strerror(rc));
    }
    pool_put(u, c);
    free(ret->body);
    ret->body = sg_buf_steal(&resp, &ret->body_len);
    sg_buf_free(&resp);
    return out;
}

static void count_outcome(struct upstream *u, enum gw_exec_outcome o)
{
    atomic_uint_fast64_t *ctr = o == GW_EXEC_OK            ? &u->ok
                                : o == GW_EXEC_BUSY        ? &u->busy
                                : o == GW_EXEC_UNREACHABLE ? &u->unreachable
                                                           : &u->failed;
    atomic_fetch_add(ctr, 1);
    if (o == GW_EXEC_UNREACHABLE && atomic_exchange(&u->healthy, 0))
        sg_log(SG_LOG_WARN, "executor_down", "url=%s reason=connect_failed", u->url);
    else if (o != GW_EXEC_UNREACHABLE)
        atomic_store(&u->healthy, 1); /* it connected, so it is up */
}

/* The gateway never sends an executor more jobs than it takes at once: the
 * smaller of the configured cap and what the executor advertises. */
static unsigned upstream_limit(const struct gw_router *r, struct upstream *u)
{
    unsigned cap = atomic_load(&u->capacity);
    return cap && cap < r->max_inflight ? cap : (unsigned)r->max_inflight;
}

void gw_router_exec(struct gw_router *r, enum sg_lang lang, const char *body, size_t len,
                    uint64_t timeout_ms, const struct gw_exec_hooks *hooks,
                    struct gw_exec_result *ret)
{
    memset(ret, 0, sizeof(*ret));
    size_t n = r->count[lang];
    unsigned start = atomic_fetch_add(&r->rr[lang], 1);
    uint64_t busy_left = r->busy_retries;
    int tried[ROUTER_SLOTS_MAX] = {0}, saturated = 0, busy = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < n; k++) {
            size_t i = (start + k) % n;
            struct upstream *u = &r->up[lang][i];
            if (tried[i] || !atomic_load(&u->active) || (pass == 0 && !atomic_load(&u->healthy)))
                continue; /* pass 1 also tries executors marked down: the mark may be stale */
            if (atomic_fetch_add(&u->inflight, 1) >= upstream_limit(r, u)) {
                atomic_fetch_sub(&u->inflight, 1);
                saturated = 1;
                continue;
            }
            if (!atomic_load(&u->active)) { /* retired meanwhile; inflight > 0 pins it now */
                atomic_fetch_sub(&u->inflight, 1);
                continue;
            }
            tried[i] = 1;
            ret->attempts++;
            enum gw_exec_outcome o = attempt(r, u, body, len, timeout_ms, hooks, ret);
            count_outcome(u, o); /* before the release: it logs u->url */
            atomic_fetch_sub(&u->inflight, 1);
            ret->outcome = o;
            if (o == GW_EXEC_OK || o == GW_EXEC_FAILED)
                return;
            if (o == GW_EXEC_BUSY) {
                busy = 1;
                if (busy_left == 0)
                    return;
                busy_left--;
            }
        }
    }
    if (saturated || busy) {
        ret->outcome = GW_EXEC_BUSY;
        if (saturated && !busy)
            snprintf(ret->message, sizeof(ret->message),
                     "every %s executor is at its limit of concurrent jobs", sg_lang_name(lang));
    } else {
        ret->outcome = GW_EXEC_UNREACHABLE;
        if (!ret->attempts)
            snprintf(ret->message, sizeof(ret->message), "no %s executor", sg_lang_name(lang));
    }
}

void gw_exec_result_free(struct gw_exec_result *res)
{
    if (!res)
        return;
    free(res->body);
    res->body = NULL;
}

static int find_url(char (*urls)[GW_URL_MAX], size_t n, const char *url)
{
    for (size_t j = 0; j < n; j++)
        if (strcmp(urls[j], url) == 0)
            return (int)j;
    return -1;
}

/* A slot for a new executor: a retired one nobody uses, else a fresh one. */
static struct upstream *free_slot(struct gw_router *r, int l)
{
    size_t n = atomic_load(&r->count[l]);
    for (size_t i = 0; i < n; i++) {
        struct upstream *u = &r->up[l][i];
        if (!atomic_load(&u->active) && atomic_load(&u->inflight) == 0)
            return u;
    }
    return n < ROUTER_SLOTS_MAX ? &r->up[l][n] : NULL;
}

static void slot_fill(struct gw_router *r, int l, struct upstream *u, int src, const char *url)
{
    snprintf(u->url, sizeof(u->url), "%s", url);
    snprintf(u->exec_url, sizeof(u->exec_url), "%s/v1/exec", u->url);
    snprintf(u->health_url, sizeof(u->health_url), "%s/healthz", u->url);
    u->source = src;
    atomic_store(&u->healthy, 0); /* this round's health check decides */
    atomic_store(&u->ok, 0);
    atomic_store(&u->failed, 0);
    atomic_store(&u->unreachable, 0);
    atomic_store(&u->busy, 0);
    atomic_store(&u->capacity, 0); /* a new executor: its /healthz says its own */
    u->boot_id[0] = '\0';
    json_decref(u->pools); /* under slots_lock (discovery), or before the thread starts */
    u->pools = NULL;
    atomic_store(&u->active, 1); /* publishes the URL to request threads */
    if (u == &r->up[l][atomic_load(&r->count[l])])
        atomic_fetch_add(&r->count[l], 1);
}

/* Make the slots of discovery source src match urls[0..n). */
static void discovery_apply(struct gw_router *r, int l, int src, char (*urls)[GW_URL_MAX], size_t n)
{
    int seen[ROUTER_SLOTS_MAX] = {0};
    pthread_mutex_lock(&r->slots_lock);
    for (size_t i = 0; i < atomic_load(&r->count[l]); i++) {
        struct upstream *u = &r->up[l][i];
        if (!atomic_load(&u->active) || u->source != src)
            continue;
        int j = find_url(urls, n, u->url);
        if (j >= 0) {
            seen[j] = 1;
        } else {
            atomic_store(&u->active, 0); /* jobs in flight on it finish */
            sg_log(SG_LOG_INFO, "executor_left", "language=%s url=%s source=%s", sg_lang_name(l),
                   u->url, gw_discover_source(r->disc[l][src]));
        }
    }
    for (size_t j = 0; j < n; j++) {
        struct upstream *u = seen[j] ? NULL : free_slot(r, l);
        if (!seen[j] && !u) {
            sg_log(SG_LOG_WARN, "discovery_full", "language=%s slots=%d dropped=%s",
                   sg_lang_name(l), ROUTER_SLOTS_MAX, urls[j]);
            continue;
        }
        if (u) {
            slot_fill(r, l, u, src, urls[j]);
            sg_log(SG_LOG_INFO, "executor_joined", "language=%s url=%s source=%s", sg_lang_name(l),
                   u->url, gw_discover_source(r->disc[l][src]));
        }
    }
    pthread_mutex_unlock(&r->slots_lock);
}

/* Re-resolve every discovery URL (bounded: gw_discover.h). */
static void discovery_round(struct gw_router *r)
{
    char(*urls)[GW_URL_MAX] = r->disc_urls; /* round_lock held: one user */
    for (int l = 0; l < SG_LANG_COUNT; l++)
        for (size_t k = 0; k < r->disc_n[l]; k++) {
            size_t n = 0;
            if (gw_discover_resolve(r->disc[l][k], r->resolver, r->resolver_ud, urls,
                                    ROUTER_SLOTS_MAX, &n) == GW_DISCOVER_ADDRS)
                discovery_apply(r, l, (int)k, urls, n);
        }
}

void gw_router_set_resolver(struct gw_router *r, gw_resolve_fn fn, void *ud)
{
    pthread_mutex_lock(&r->round_lock);
    r->resolver = fn;
    r->resolver_ud = ud;
    pthread_mutex_unlock(&r->round_lock);
}

/* The boot id is the executor's own word: it only ever selects among the
 * configured or discovered executors, never names a URL. */
static bool boot_id_ok(const char *b)
{
    size_t n = b ? strlen(b) : 0;
    return n > 0 && n <= GW_BOOT_ID_MAX && strspn(b, "0123456789abcdef") == n;
}

/* The executor's job capacity ("max_jobs") and boot id from its /healthz. */
static void note_capacity(struct gw_router *r, struct upstream *u, const struct sg_buf *body)
{
    json_t *o = body->data ? json_loadb(body->data, body->len, 0, NULL) : NULL;
    json_t *v = json_object_get(o, "max_jobs");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= UINT32_MAX)
        atomic_store(&u->capacity, (unsigned)json_integer_value(v));
    const char *b = json_string_value(json_object_get(o, "boot_id"));
    json_t *pools = gw_overview_pools(o);
    pthread_mutex_lock(&r->slots_lock);
    snprintf(u->boot_id, sizeof(u->boot_id), "%s", boot_id_ok(b) ? b : "");
    json_decref(u->pools);
    u->pools = pools;
    pthread_mutex_unlock(&r->slots_lock);
    json_decref(o);
}

/* Re-resolve the discovery URLs, then check every executor's /healthz in
 * parallel with one curl multi handle. */
void gw_router_check_now(struct gw_router *r)
{
    pthread_mutex_lock(&r->round_lock);
    discovery_round(r);
    CURLM *m = curl_multi_init();
    CURL *h[SG_LANG_COUNT * ROUTER_SLOTS_MAX] = {0};
    struct upstream *ups[SG_LANG_COUNT * ROUTER_SLOTS_MAX];
    struct sg_buf sink[SG_LANG_COUNT * ROUTER_SLOTS_MAX];
    size_t n = 0;
    for (int l = 0; m && l < SG_LANG_COUNT; l++)
        for (size_t i = 0; i < atomic_load(&r->count[l]); i++) {
            if (!atomic_load(&r->up[l][i].active))
                continue;
            ups[n] = &r->up[l][i];
            sg_buf_init(&sink[n], HEALTH_BODY_MAX);
            if ((h[n] = curl_easy_init())) {
                set_common(h[n], ups[n]->health_url, r->connect_timeout_ms, HEALTH_TIMEOUT_MS,
                           &sink[n]);
                curl_multi_add_handle(m, h[n]);
            }
            n++;
        }
    int running = 1;
    while (m && running) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        if (running)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    for (size_t k = 0; k < n; k++) {
        long status = 0;
        if (h[k]) {
            curl_easy_getinfo(h[k], CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(m, h[k]);
            curl_easy_cleanup(h[k]);
        }
        note_capacity(r, ups[k], &sink[k]);
        sg_buf_free(&sink[k]);
        int now = status == 200, before = atomic_exchange(&ups[k]->healthy, now);
        if (now != before)
            sg_log(now ? SG_LOG_INFO : SG_LOG_WARN, now ? "executor_up" : "executor_down",
                   "url=%s status=%ld", ups[k]->url, status);
    }
    curl_multi_cleanup(m);
    pthread_mutex_unlock(&r->round_lock);
}

static void *health_main(void *arg)
{
    struct gw_router *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + (r->health_interval_ms % 1000) * 1000000u;
        ts.tv_sec += (time_t)(r->health_interval_ms / 1000 + ns / 1000000000u);
        ts.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&r->wake, &r->lock, &ts);
        if (r->stop)
            break;
        pthread_mutex_unlock(&r->lock);
        gw_router_check_now(r);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static int build_headers(struct gw_router *r, const char *token, struct sg_error *err)
{
    /* "Expect:" stops curl waiting for 100-continue on larger bodies. */
    r->headers = curl_slist_append(NULL, "Content-Type: application/json");
    r->headers = r->headers ? curl_slist_append(r->headers, "Expect:") : NULL;
    if (r->headers && token && *token) {
        char h[600];
        if (snprintf(h, sizeof(h), "Authorization: Bearer %s", token) >= (int)sizeof(h))
            return sg_error_set(err, -E2BIG, "executor token too long");
        struct curl_slist *t = curl_slist_append(r->headers, h);
        if (!t)
            return sg_error_set(err, -ENOMEM, "out of memory");
        r->headers = t;
    }
    return r->headers ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
}

int gw_router_new(const struct gw_config *cfg, const char *executor_token, struct gw_router **ret,
                  struct sg_error *err)
{
    pthread_once(&curl_once, curl_init_once);
    struct gw_router *r = calloc(1, sizeof(*r));
    if (!r)
        return sg_error_set(err, -ENOMEM, "out of memory");
    r->connect_timeout_ms = cfg->connect_timeout_ms;
    r->health_interval_ms = cfg->health_interval_ms;
    r->busy_retries = cfg->busy_retries;
    r->max_inflight = cfg->executor_max_inflight;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    pthread_mutex_init(&r->round_lock, NULL);
    pthread_mutex_init(&r->slots_lock, NULL);
    int rc = 0;
    for (int l = 0; l < SG_LANG_COUNT; l++) {
        for (size_t i = 0; i < ROUTER_SLOTS_MAX; i++)
            pthread_mutex_init(&r->up[l][i].pool_lock, NULL);
        for (size_t i = 0; rc == 0 && i < cfg->executor_count[l]; i++) {
            const char *url = cfg->executors[l][i];
            if (gw_discover_is_dynamic(url))
                rc = gw_discover_new(url, &r->disc[l][r->disc_n[l]++], err);
            else
                slot_fill(r, l, &r->up[l][atomic_load(&r->count[l])], -1, url);
        }
    }
    if (rc == 0)
        rc = build_headers(r, executor_token, err);
    if (rc < 0) {
        gw_router_free(r);
        return rc;
    }
    gw_router_check_now(r);
    if ((rc = pthread_create(&r->thread, NULL, health_main, r)) != 0) {
        gw_router_free(r);
        return sg_error_set(err, -rc, "cannot start the health checker: %s", strerror(rc));
    }
    *ret = r;
    return 0;
}

void gw_router_free(struct gw_router *r)
{
    if (!r)
        return;
    if (r->thread) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    for (int l = 0; l < SG_LANG_COUNT; l++) {
        for (size_t i = 0; i < ROUTER_SLOTS_MAX; i++) {
            struct upstream *u = &r->up[l][i];
            for (size_t k = 0; k < u->pool_n; k++)
                curl_easy_cleanup(u->pool[k]);
            json_decref(u->pools);
            pthread_mutex_destroy(&u->pool_lock);
        }
        for (size_t k = 0; k < r->disc_n[l]; k++)
            gw_discover_free(r->disc[l][k]);
    }
    curl_slist_free_all(r->headers);
    pthread_mutex_destroy(&r->round_lock);
    pthread_mutex_destroy(&r->slots_lock);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    free(r);
}

size_t gw_router_healthy(struct gw_router *r, int lang)
{
    size_t n = 0;
    for (size_t i = 0; i < atomic_load(&r->count[lang]); i++)
        n += atomic_load(&r->up[lang][i].active) && atomic_load(&r->up[lang][i].healthy);
    return n;
}

json_t *gw_router_status(struct gw_router *r)
{
    json_t *o = json_object();
    pthread_mutex_lock(&r->slots_lock);
    for (int l = 0; o && l < SG_LANG_COUNT; l++) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < atomic_load(&r->count[l]); i++) {
            struct upstream *u = &r->up[l][i];
            if (!atomic_load(&u->active))
                continue;
            json_array_append_new(arr, json_pack("{s:s,s:b,s:I,s:I}", "url", u->url, "healthy",
                                                 atomic_load(&u->healthy), "inflight",
                                                 (json_int_t)atomic_load(&u->inflight), "limit",
                                                 (json_int_t)upstream_limit(r, u)));
        }
        json_object_set_new(o, sg_lang_name(l), arr ? arr : json_null());
    }
    pthread_mutex_unlock(&r->slots_lock);
    return o;
}

json_t *gw_router_overview(struct gw_router *r, int with_urls)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&r->slots_lock);
    for (int l = 0; arr && l < SG_LANG_COUNT; l++)
        for (size_t i = 0; i < atomic_load(&r->count[l]); i++) {
            struct upstream *u = &r->up[l][i];
            if (!atomic_load(&u->active))
                continue;
            json_t *e = json_pack(
                "{s:s,s:b,s:I,s:I,s:o?}", "language", sg_lang_name(l), "healthy",
                atomic_load(&u->healthy), "jobs_in_flight", (json_int_t)atomic_load(&u->inflight),
                "limit", (json_int_t)upstream_limit(r, u), "pools", json_deep_copy(u->pools));
            if (e && with_urls)
                json_object_set_new(e, "url", json_string(u->url));
            json_array_append_new(arr, e);
        }
    pthread_mutex_unlock(&r->slots_lock);
    return arr;
}

int gw_router_render_metrics(struct gw_router *r, struct sg_buf *out)
{
    int rc = sg_buf_printf(out, "# HELP sandgate_executor_up 1 when the executor passes its "
                                "health check.\n# TYPE sandgate_executor_up gauge\n"
                                "# HELP sandgate_executor_inflight Jobs in flight per executor.\n"
                                "# TYPE sandgate_executor_inflight gauge\n"
                                "# HELP sandgate_executor_jobs_total Job attempts by result.\n"
                                "# TYPE sandgate_executor_jobs_total counter\n");
    pthread_mutex_lock(&r->slots_lock);
    for (int l = 0; rc == 0 && l < SG_LANG_COUNT; l++)
        for (size_t i = 0; rc == 0 && i < atomic_load(&r->count[l]); i++) {
            struct upstream *u = &r->up[l][i];
            const char *lg = sg_lang_name(l);
            if (!atomic_load(&u->active))
                continue;
            rc = sg_buf_printf(
                out,
                "sandgate_executor_up{language=\"%s\",url=\"%s\"} %d\n"
                "sandgate_executor_inflight{language=\"%s\",url=\"%s\"} %u\n"
                "sandgate_executor_jobs_total{language=\"%s\",url=\"%s\",result=\"ok\"} %llu\n"
                "sandgate_executor_jobs_total{language=\"%s\",url=\"%s\",result=\"failed\"} %llu\n"
                "sandgate_executor_jobs_total{language=\"%s\",url=\"%s\",result=\"unreachable\"} "
                "%llu\n"
                "sandgate_executor_jobs_total{language=\"%s\",url=\"%s\",result=\"busy\"} %llu\n",
                lg, u->url, atomic_load(&u->healthy), lg, u->url, atomic_load(&u->inflight), lg,
                u->url, (unsigned long long)atomic_load(&u->ok), lg, u->url,
                (unsigned long long)atomic_load(&u->failed), lg, u->url,
                (unsigned long long)atomic_load(&u->unreachable), lg, u->url,
                (unsigned long long)atomic_load(&u->busy));
        }
    pthread_mutex_unlock(&r->slots_lock);
    return rc;
}

void gw_router_get(struct gw_router *r, int lang, const char *path, uint64_t timeout_ms,
                   struct gw_exec_result *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->outcome = GW_EXEC_UNREACHABLE;
    snprintf(ret->message, sizeof(ret->message), "no healthy %s executor", sg_lang_name(lang));
    for (size_t i = 0; i < r->count[lang]; i++) {
        struct upstream *u = &r->up[lang][i];
        if (!atomic_load(&u->healthy))
            continue;
        char url[GW_URL_MAX + 64];
        snprintf(url, sizeof(url), "%s%s", u->url, path);
        struct sg_buf b;
        sg_buf_init(&b, GW_EXEC_RESPONSE_MAX);
        CURL *c = pool_take(u);
        if (!c)
            break;
        set_common(c, url, r->connect_timeout_ms, timeout_ms, &b);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
        CURLcode rc = curl_easy_perform(c);
        ret->attempts++;
        ret->http_status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->http_status);
        pool_put(u, c);
        snprintf(ret->executor, sizeof(ret->executor), "%s", u->url);
        if (rc != CURLE_OK)
            snprintf(ret->message, sizeof(ret->message), "executor %s: %s", u->url,
                     curl_easy_strerror(rc));
        else
            snprintf(ret->message, sizeof(ret->message), "executor %s answered HTTP %ld", u->url,
                     ret->http_status);
        free(ret->body);
        ret->body = sg_buf_steal(&b, &ret->body_len);
        sg_buf_free(&b);
        if (rc == CURLE_OK && ret->http_status == 200) {
            ret->outcome = GW_EXEC_OK;
            return;
        }
        ret->outcome = GW_EXEC_FAILED;
    }
}

/* ------------------------------------------------------------- sessions */

static struct curl_slist *session_headers(const struct gw_router *r, const char *tenant)
{
    struct curl_slist *h = NULL, *t;
    for (const struct curl_slist *i = r->headers; i; i = i->next)
        if (!(t = curl_slist_append(h, i->data)))
            goto fail;
        else
            h = t;
    char line[128];
    snprintf(line, sizeof(line), "X-Sandgate-Tenant: %s", tenant);
    if ((t = curl_slist_append(h, line)))
        return t;
fail:
    curl_slist_free_all(h);
    return NULL;
}

/* One request on u; the outcome is OK whenever an HTTP answer came. */
static enum gw_exec_outcome session_attempt(struct gw_router *r, struct upstream *u,
                                            const struct gw_session_call *c,
                                            struct gw_exec_result *ret)
{
    char url[GW_URL_MAX + 256];
    snprintf(url, sizeof(url), "%s%s", u->url, c->path);
    struct sg_buf b;
    sg_buf_init(&b, GW_EXEC_RESPONSE_MAX);
    CURL *cu = pool_take(u);
    struct curl_slist *h = session_headers(r, c->tenant);
    enum gw_exec_outcome out = GW_EXEC_FAILED;
    snprintf(ret->executor, sizeof(ret->executor), "%s", u->url);
    if (!cu || !h) {
        snprintf(ret->message, sizeof(ret->message), "out of memory");
        goto out;
    }
    set_common(cu, url, r->connect_timeout_ms, c->timeout_ms, &b);
    curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, c->method);
    if (c->body) {
        curl_easy_setopt(cu, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len);
    }
    curl_easy_setopt(cu, CURLOPT_FRESH_CONNECT, 1L); /* as for jobs: never re-sent */
    curl_easy_setopt(cu, CURLOPT_FORBID_REUSE, 1L);
    ret->message[0] = '\0';
    CURLcode rc = perform(cu, c->hooks, &b, ret); /* a streamed cell goes through the relay */
    ret->http_status = 0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &ret->http_status);
        out = GW_EXEC_OK;
    } else {
        out = never_sent(cu, rc) ? GW_EXEC_UNREACHABLE : GW_EXEC_FAILED;
        if (!ret->message[0]) /* else the relay said why */
            snprintf(ret->message, sizeof(ret->message), "executor %.120s: %.100s", u->url,
                     curl_easy_strerror(rc));
    }
    free(ret->body);
    ret->body = sg_buf_steal(&b, &ret->body_len);
out:
    curl_slist_free_all(h);
    if (cu)
        pool_put(u, cu);
    sg_buf_free(&b);
    return out;
}

/* The slot of lang whose executor has boot id boot, or NULL. */
static struct upstream *by_boot(struct gw_router *r, int lang, const char *boot)
{
    struct upstream *found = NULL;
    pthread_mutex_lock(&r->slots_lock);
    for (size_t i = 0; !found && i < atomic_load(&r->count[lang]); i++) {
        struct upstream *u = &r->up[lang][i];
        if (atomic_load(&u->active) && u->boot_id[0] && strcmp(u->boot_id, boot) == 0)
            found = u;
    }
    if (found)
        atomic_fetch_add(&found->inflight, 1); /* pins the slot */
    pthread_mutex_unlock(&r->slots_lock);
    return found;
}

void gw_router_session(struct gw_router *r, int lang, const struct gw_session_call *c,
                       struct gw_exec_result *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->outcome = GW_EXEC_UNREACHABLE;
    if (c->boot) {
        struct upstream *u = by_boot(r, lang, c->boot);
        if (!u) {
            snprintf(ret->message, sizeof(ret->message),
                     "the executor holding this session is gone");
            return;
        }
        ret->attempts = 1;
        ret->outcome = session_attempt(r, u, c, ret);
        count_outcome(u, ret->outcome);
        atomic_fetch_sub(&u->inflight, 1);
        return;
    }
    /* a new session: the next healthy executor, another only when the
     * request provably did not start one (never sent, or 503) */
    size_t n = atomic_load(&r->count[lang]);
    unsigned start = atomic_fetch_add(&r->rr[lang], 1);
    snprintf(ret->message, sizeof(ret->message), "no healthy %s executor", sg_lang_name(lang));
    for (size_t k = 0; k < n; k++) {
        struct upstream *u = &r->up[lang][(start + k) % n];
        if (!atomic_load(&u->active) || !atomic_load(&u->healthy))
            continue;
        atomic_fetch_add(&u->inflight, 1);
        ret->attempts++;
        ret->outcome = session_attempt(r, u, c, ret);
        count_outcome(u, ret->outcome);
        atomic_fetch_sub(&u->inflight, 1);
        if (ret->outcome == GW_EXEC_FAILED ||
            (ret->outcome == GW_EXEC_OK && ret->http_status != 503))
            return;
    }
}

json_t *gw_router_sessions_list(struct gw_router *r, const char *tenant, uint64_t timeout_ms,
                                unsigned *ret_open)
{
    json_t *all = json_array();
    *ret_open = 0;
    struct gw_session_call c = {
        .method = "GET", .path = "/v1/sessions", .tenant = tenant, .timeout_ms = timeout_ms};
    for (int l = 0; all && l < SG_LANG_COUNT; l++)
        for (size_t i = 0; i < atomic_load(&r->count[l]); i++) {
            struct upstream *u = &r->up[l][i];
            if (!atomic_load(&u->active) || !atomic_load(&u->healthy))
                continue;
            struct gw_exec_result res = {0};
            atomic_fetch_add(&u->inflight, 1);
            enum gw_exec_outcome o = session_attempt(r, u, &c, &res);
            atomic_fetch_sub(&u->inflight, 1);
            json_t *j = o == GW_EXEC_OK && res.http_status == 200 && res.body
                            ? json_loadb(res.body, res.body_len, 0, NULL)
                            : NULL;
            json_t *open = json_object_get(j, "open"), *v;
            size_t k;
            if (json_is_integer(open) && json_integer_value(open) >= 0)
                *ret_open += (unsigned)json_integer_value(open);
            json_array_foreach(json_object_get(j, "sessions"), k, v)
            {
                json_object_set_new(v, "language", json_string(sg_lang_name(l)));
                json_array_append(all, v);
            }
            json_decref(j);
            gw_exec_result_free(&res);
        }
    return all;
}

/* The slot whose base URL is url, or NULL. */
static struct upstream *find_upstream(struct gw_router *r, const char *url)
{
    for (int l = 0; l < SG_LANG_COUNT; l++)
        for (size_t i = 0; i < r->count[l]; i++)
            if (strcmp(r->up[l][i].url, url) == 0)
                return &r->up[l][i];
    return NULL;
}

int gw_router_cancel(struct gw_router *r, const char *executor, const char *job_id,
                     long *ret_status)
{
    struct upstream *u = find_upstream(r, executor);
    if (!u)
        return -ENOENT;
    char url[GW_URL_MAX + 128];
    snprintf(url, sizeof(url), "%s/%s/cancel", u->exec_url, job_id);
    struct sg_buf b;
    sg_buf_init(&b, HEALTH_BODY_MAX);
    CURL *c = pool_take(u);
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    if (c) {
        set_common(c, url, r->connect_timeout_ms, HEALTH_TIMEOUT_MS, &b);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        rc = curl_easy_perform(c);
        *ret_status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
        pool_put(u, c);
    }
    sg_buf_free(&b);
    return rc == CURLE_OK ? 0 : -EIO;
}
