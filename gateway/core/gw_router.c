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
#include "gw_router_int.h"
#include "log.h"

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
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

/* The executor's job capacity ("max_jobs") and boot id from its /healthz;
 * an executor that did not answer keeps its last boot id, so the calls of
 * its sessions are refused as "not reachable now" (503) rather than "gone". */
static void note_capacity(struct gw_router *r, struct upstream *u, const struct sg_buf *body)
{
    json_t *o = body->data ? json_loadb(body->data, body->len, 0, NULL) : NULL;
    json_t *v = json_object_get(o, "max_jobs");
    if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= UINT32_MAX)
        atomic_store(&u->capacity, (unsigned)json_integer_value(v));
    const char *b = json_string_value(json_object_get(o, "boot_id"));
    json_t *pools = gw_overview_pools(o);
    pthread_mutex_lock(&r->slots_lock);
    if (o) /* no answer (down, restarting) keeps it: the sessions may come back */
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
                gw_router_setup(h[n], ups[n]->health_url, r->connect_timeout_ms, HEALTH_TIMEOUT_MS,
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
                                                 (json_int_t)gw_router_limit(r, u)));
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
                "limit", (json_int_t)gw_router_limit(r, u), "pools", json_deep_copy(u->pools));
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
