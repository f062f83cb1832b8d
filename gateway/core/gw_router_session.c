/* gw_router_session.c - session calls routed to the executor with the
 * session's boot id (gw_router.h: gw_router_session, gw_router_sessions_list). */
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_router.h"
#include "gw_router_int.h"
#include "sg_lang.h"

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
    struct gw_answer b;
    gw_answer_init(&b, GW_EXEC_RESPONSE_MAX, r->budget, c->hooks ? c->hooks->answer_paid : 0);
    CURL *cu = gw_router_take(u);
    struct curl_slist *h = session_headers(r, c->tenant);
    enum gw_exec_outcome out = GW_EXEC_FAILED;
    snprintf(ret->executor, sizeof(ret->executor), "%s", u->url);
    if (!cu || !h) {
        snprintf(ret->message, sizeof(ret->message), "out of memory");
        goto out;
    }
    gw_router_setup(cu, url, r->connect_timeout_ms, c->timeout_ms, NULL);
    gw_router_to_answer(cu, &b);
    curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, c->method);
    if (c->body) {
        curl_easy_setopt(cu, CURLOPT_POSTFIELDS, c->body);
        curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len);
    }
    curl_easy_setopt(cu, CURLOPT_FRESH_CONNECT, 1L); /* as for jobs: never re-sent */
    curl_easy_setopt(cu, CURLOPT_FORBID_REUSE, 1L);
    ret->message[0] = '\0';
    CURLcode rc =
        gw_router_perform(cu, c->hooks, &b, ret); /* a streamed cell goes through the relay */
    ret->http_status = 0;
    if (b.refused) {
        out = gw_router_over_budget(u->url, b.refused_at, ret);
    } else if (rc == CURLE_OK) {
        curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &ret->http_status);
        out = GW_EXEC_OK;
    } else {
        out = gw_router_never_sent(cu, rc) ? GW_EXEC_UNREACHABLE : GW_EXEC_FAILED;
        if (!ret->message[0]) /* else the relay said why */
            snprintf(ret->message, sizeof(ret->message), "executor %.120s: %.100s", u->url,
                     curl_easy_strerror(rc));
    }
    gw_router_keep_answer(r, &b, ret);
out:
    curl_slist_free_all(h);
    if (cu)
        gw_router_put(u, cu);
    gw_answer_free(&b);
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
        gw_router_count(u, ret->over_budget ? GW_EXEC_OK : ret->outcome);
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
        gw_router_count(u, ret->over_budget ? GW_EXEC_OK : ret->outcome);
        atomic_fetch_sub(&u->inflight, 1);
        if (ret->outcome == GW_EXEC_FAILED || ret->over_budget ||
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
