#include "gw_discover.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"

struct gw_discover {
    char source[GW_URL_MAX];
    char host[GW_DISCOVER_HOST_MAX];
    unsigned port;
    /* The one lookup in progress, if a round timed out before it finished. */
    struct gaicb req;
    struct addrinfo hints;
    int pending;
};

static int host_ok(const char *h, size_t len)
{
    if (len == 0 || len >= GW_DISCOVER_HOST_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = h[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return 0; /* a DNS name only: no literals, userinfo, brackets */
    }
    return 1;
}

static const char *after_scheme(const char *url)
{
    if (strncmp(url, "dns+http://", 11) == 0)
        return url + 11;
    if (strncmp(url, "http://", 7) == 0)
        return url + 7;
    return NULL;
}

int gw_discover_is_dynamic(const char *url)
{
    const char *h = after_scheme(url);
    return h && (strncmp(url, "dns+", 4) == 0 || strncmp(h, "tasks.", 6) == 0);
}

int gw_discover_new(const char *url, struct gw_discover **ret, struct sg_error *err)
{
    const char *h = after_scheme(url);
    const char *colon = h ? strchr(h, ':') : NULL;
    if (!h || !colon || !gw_discover_is_dynamic(url) || !host_ok(h, (size_t)(colon - h)))
        return sg_error_set(err, -EINVAL,
                            "'%.80s' is not a discovery URL "
                            "(http://tasks.NAME:PORT or dns+http://NAME:PORT)",
                            url);
    char *end = NULL;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno || end == colon + 1 || port == 0 || port > 65535 || (*end && strcmp(end, "/")))
        return sg_error_set(err, -EINVAL, "'%.80s': a discovery URL needs a port and no path", url);
    struct gw_discover *d = calloc(1, sizeof(*d));
    if (!d)
        return sg_error_set(err, -ENOMEM, "out of memory");
    snprintf(d->source, sizeof(d->source), "%s", url);
    memcpy(d->host, h, (size_t)(colon - h));
    d->port = (unsigned)port;
    *ret = d;
    return 0;
}

const char *gw_discover_source(const struct gw_discover *d)
{
    return d->source;
}

static void drop_pending(struct gw_discover *d)
{
    if (d->req.ar_result)
        freeaddrinfo(d->req.ar_result);
    d->req.ar_result = NULL;
    d->pending = 0;
}

void gw_discover_free(struct gw_discover *d)
{
    if (!d)
        return;
    if (d->pending && gai_cancel(&d->req) != EAI_CANCELED) {
        /* Still running in glibc's helper thread: wait for it, bounded. */
        const struct gaicb *list[1] = {&d->req};
        struct timespec ts = {GW_DISCOVER_TIMEOUT_MS / 1000,
                              (long)(GW_DISCOVER_TIMEOUT_MS % 1000) * 1000000L};
        gai_suspend(list, 1, &ts);
        if (gai_error(&d->req) == EAI_INPROGRESS)
            return; /* cannot free what glibc still writes to: leak it at exit */
    }
    drop_pending(d);
    free(d);
}

/* The system resolver through getaddrinfo_a, so a round waits at most
 * GW_DISCOVER_TIMEOUT_MS; a late answer is picked up by the next round. */
static int system_resolve(struct gw_discover *d, char (*addrs)[INET6_ADDRSTRLEN], size_t max)
{
    if (!d->pending) {
        memset(&d->req, 0, sizeof(d->req));
        memset(&d->hints, 0, sizeof(d->hints));
        d->hints.ai_socktype = SOCK_STREAM;
        d->req.ar_name = d->host;
        d->req.ar_request = &d->hints;
        struct gaicb *list[1] = {&d->req};
        if (getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0)
            return -EAGAIN;
        d->pending = 1;
    }
    const struct gaicb *wait[1] = {&d->req};
    struct timespec ts = {GW_DISCOVER_TIMEOUT_MS / 1000,
                          (long)(GW_DISCOVER_TIMEOUT_MS % 1000) * 1000000L};
    gai_suspend(wait, 1, &ts);
    int rc = gai_error(&d->req);
    if (rc == EAI_INPROGRESS)
        return -ETIMEDOUT;
    int n = 0;
    if (rc == 0) {
        for (struct addrinfo *ai = d->req.ar_result; ai && (size_t)n < max; ai = ai->ai_next) {
            const void *a = ai->ai_family == AF_INET
                                ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                                : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
            if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
                inet_ntop(ai->ai_family, a, addrs[n], INET6_ADDRSTRLEN))
                n++;
        }
    } else if (rc != EAI_NONAME && rc != EAI_NODATA) {
        n = -EAGAIN; /* EAI_AGAIN, EAI_FAIL, ...: no answer, not "no tasks" */
    }
    drop_pending(d);
    return n;
}

static int cmp_url(const void *a, const void *b)
{
    return strcmp(a, b);
}

enum gw_discover_result gw_discover_resolve(struct gw_discover *d, gw_resolve_fn resolver, void *ud,
                                            char (*urls)[GW_URL_MAX], size_t max, size_t *n)
{
    char addrs[GW_DISCOVER_ADDRS_MAX][INET6_ADDRSTRLEN];
    size_t cap = max < GW_DISCOVER_ADDRS_MAX ? max : GW_DISCOVER_ADDRS_MAX;
    int got = resolver ? resolver(ud, d->host, addrs, cap) : system_resolve(d, addrs, cap);
    *n = 0;
    if (got < 0) {
        sg_log(SG_LOG_WARN, "discovery_no_answer", "source=%s error=%d", d->source, -got);
        return GW_DISCOVER_KEEP;
    }
    for (int i = 0; i < got && (size_t)i < cap; i++) {
        char a[INET6_ADDRSTRLEN];
        memcpy(a, addrs[i], sizeof(a));
        a[sizeof(a) - 1] = '\0';
        int v6 = strchr(a, ':') != NULL;
        snprintf(urls[*n], GW_URL_MAX, "http://%s%.45s%s:%u", v6 ? "[" : "", a, v6 ? "]" : "",
                 d->port);
        (*n)++;
    }
    qsort(urls, *n, GW_URL_MAX, cmp_url);
    size_t w = 0;
    for (size_t i = 0; i < *n; i++)
        if (w == 0 || strcmp(urls[i], urls[w - 1]) != 0)
            memmove(urls[w++], urls[i], GW_URL_MAX);
    *n = w;
    return GW_DISCOVER_ADDRS;
}
