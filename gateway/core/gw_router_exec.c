/* gw_router_exec.c - the one-job transport over libcurl (gw_router.h):
 * a job with failover, a GET on the first healthy executor, a cancel. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_router.h"
#include "gw_router_int.h"
#include "log.h"
#include "membudget.h"

CURL *gw_router_take(struct upstream *u)
{
    CURL *c = NULL;
    pthread_mutex_lock(&u->pool_lock);
    if (u->pool_n)
        c = u->pool[--u->pool_n];
    pthread_mutex_unlock(&u->pool_lock);
    return c ? c : curl_easy_init();
}

void gw_router_put(struct upstream *u, CURL *c)
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

static size_t on_answer(char *data, size_t size, size_t nmemb, void *ud)
{
    size_t n = size * nmemb;
    return gw_answer_append(ud, data, n) == 0 ? n : 0; /* 0 aborts: CURLE_WRITE_ERROR */
}

void gw_router_to_answer(CURL *c, struct gw_answer *a)
{
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
}

enum gw_exec_outcome gw_router_over_budget(const char *url, size_t got, struct gw_exec_result *ret)
{
    ret->over_budget = 1;
    snprintf(ret->message, sizeof(ret->message),
             "the answer of executor %.120s (%zu KiB and more) does not fit in the gateway's "
             "memory budget now; the call ran, retry shortly",
             url, got / 1024);
    return GW_EXEC_BUSY;
}

void gw_router_keep_answer(struct gw_router *r, struct gw_answer *a, struct gw_exec_result *ret)
{
    gw_exec_result_free(ret);
    ret->budget = r->budget;
    ret->body = gw_answer_steal(a, &ret->body_len, &ret->mem);
}

void gw_router_set_budget(struct gw_router *r, struct sg_membudget *budget)
{
    r->budget = budget;
}

void gw_router_setup(CURL *c, const char *url, uint64_t connect_ms, uint64_t total_ms,
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
int gw_router_never_sent(CURL *c, CURLcode rc)
{
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
        rc == CURLE_COULDNT_RESOLVE_PROXY)
        return 1;
    long sent = 0;
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
    return rc == CURLE_OPERATION_TIMEDOUT && sent == 0;
}

/* The transfer: plain, or streamed through the relay. */
CURLcode gw_router_perform(CURL *c, const struct gw_exec_hooks *hooks, struct gw_answer *resp,
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
    struct gw_answer resp;
    gw_answer_init(&resp, GW_EXEC_RESPONSE_MAX, r->budget, hooks ? hooks->answer_paid : 0);
    CURL *c = gw_router_take(u);
    if (!c) {
        snprintf(ret->message, sizeof(ret->message), "out of memory");
        return GW_EXEC_FAILED;
    }
    gw_router_setup(c, u->exec_url, r->connect_timeout_ms, timeout_ms, NULL);
    gw_router_to_answer(c, &resp);
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
    CURLcode rc = gw_router_perform(c, hooks, &resp, ret);
    enum gw_exec_outcome out;
    snprintf(ret->executor, sizeof(ret->executor), "%s", u->url);
    ret->http_status = 0;
    if (resp.refused) {
        out = gw_router_over_budget(u->url, resp.refused_at, ret);
    } else if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->http_status);
        out = ret->http_status == 200   ? GW_EXEC_OK
              : ret->http_status == 503 ? GW_EXEC_BUSY
                                        : GW_EXEC_FAILED;
        snprintf(ret->message, sizeof(ret->message), "executor %s answered HTTP %ld", u->url,
                 ret->http_status);
    } else if (gw_router_never_sent(c, rc)) {
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
    gw_router_put(u, c);
    gw_router_keep_answer(r, &resp, ret);
    gw_answer_free(&resp);
    return out;
}

void gw_router_count(struct upstream *u, enum gw_exec_outcome o)
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
unsigned gw_router_limit(const struct gw_router *r, struct upstream *u)
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
            if (atomic_fetch_add(&u->inflight, 1) >= gw_router_limit(r, u)) {
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
            /* before the release: it logs u->url; an answer over the budget
             * is the gateway's refusal, not the executor's */
            gw_router_count(u, ret->over_budget ? GW_EXEC_OK : o);
            atomic_fetch_sub(&u->inflight, 1);
            ret->outcome = o;
            if (o == GW_EXEC_OK || o == GW_EXEC_FAILED || ret->over_budget)
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
    res->body_len = 0;
    sg_membudget_release(res->budget, res->mem);
    res->mem = 0;
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
        CURL *c = gw_router_take(u);
        if (!c)
            break;
        gw_router_setup(c, url, r->connect_timeout_ms, timeout_ms, &b);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
        CURLcode rc = curl_easy_perform(c);
        ret->attempts++;
        ret->http_status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ret->http_status);
        gw_router_put(u, c);
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
    CURL *c = gw_router_take(u);
    CURLcode rc = CURLE_OUT_OF_MEMORY;
    if (c) {
        gw_router_setup(c, url, r->connect_timeout_ms, HEALTH_TIMEOUT_MS, &b);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
        rc = curl_easy_perform(c);
        *ret_status = 0;
        if (rc == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
        gw_router_put(u, c);
    }
    sg_buf_free(&b);
    return rc == CURLE_OK ? 0 : -EIO;
}
