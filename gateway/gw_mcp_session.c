#include "gw_mcp_session.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_tenants.h"
#include "sg_random.h"

struct slot {
    int used;
    char id[GW_MCP_SESSION_ID_LEN + 1];
    char tenant[GW_TENANT_NAME_MAX + 1]; /* "" when auth is off */
    char version[GW_MCP_VERSION_MAX];
    uint64_t last_ns;
};

struct gw_mcp_sessions {
    pthread_mutex_t lock;
    size_t max;
    uint64_t idle_ns;
    struct slot *slots;
};

struct gw_mcp_sessions *gw_mcp_sessions_new(size_t max, uint64_t idle_ms)
{
    struct gw_mcp_sessions *s = calloc(1, sizeof(*s));
    if (!s || max == 0 || !(s->slots = calloc(max, sizeof(*s->slots)))) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->max = max;
    s->idle_ns = idle_ms * 1000000ull;
    return s;
}

void gw_mcp_sessions_free(struct gw_mcp_sessions *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->slots);
    free(s);
}

static int live(const struct gw_mcp_sessions *s, const struct slot *sl, uint64_t now_ns)
{
    return sl->used && now_ns - sl->last_ns <= s->idle_ns;
}

/* Compare every byte: how far a guess matched must not show in the time. */
static int same_id(const char *a, const char *b)
{
    unsigned char d = 0;
    for (size_t i = 0; i < GW_MCP_SESSION_ID_LEN; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int gw_mcp_session_open(struct gw_mcp_sessions *s, const char *tenant, const char *version,
                        uint64_t now_ns, char id[GW_MCP_SESSION_ID_LEN + 1])
{
    int r = sg_random_hex(id, GW_MCP_SESSION_ID_BYTES);
    if (r < 0)
        return r;
    pthread_mutex_lock(&s->lock);
    struct slot *pick = NULL;
    for (size_t i = 0; i < s->max; i++) {
        struct slot *sl = &s->slots[i];
        if (!live(s, sl, now_ns)) {
            pick = sl;
            break;
        }
        if (!pick || sl->last_ns < pick->last_ns)
            pick = sl; /* the least recently used, if none is free */
    }
    if (!pick) { /* max is never 0 (gw_mcp_sessions_new); this keeps the compiler sure */
        pthread_mutex_unlock(&s->lock);
        return -ENOSPC;
    }
    memset(pick, 0, sizeof(*pick));
    pick->used = 1;
    memcpy(pick->id, id, GW_MCP_SESSION_ID_LEN + 1);
    snprintf(pick->tenant, sizeof(pick->tenant), "%s", tenant ? tenant : "");
    snprintf(pick->version, sizeof(pick->version), "%s", version);
    pick->last_ns = now_ns;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* The live slot for id and tenant, or NULL; the caller holds the lock. */
static struct slot *find(struct gw_mcp_sessions *s, const char *id, const char *tenant,
                         uint64_t now_ns)
{
    if (!id || strlen(id) != GW_MCP_SESSION_ID_LEN)
        return NULL;
    struct slot *hit = NULL;
    for (size_t i = 0; i < s->max; i++)
        if (s->slots[i].used && same_id(s->slots[i].id, id))
            hit = &s->slots[i];
    if (!hit || !live(s, hit, now_ns) || strcmp(hit->tenant, tenant ? tenant : "") != 0)
        return NULL;
    return hit;
}

int gw_mcp_session_touch(struct gw_mcp_sessions *s, const char *id, const char *tenant,
                         uint64_t now_ns, char version[GW_MCP_VERSION_MAX])
{
    pthread_mutex_lock(&s->lock);
    struct slot *sl = find(s, id, tenant, now_ns);
    if (sl) {
        sl->last_ns = now_ns;
        memcpy(version, sl->version, GW_MCP_VERSION_MAX);
    }
    pthread_mutex_unlock(&s->lock);
    return sl ? 0 : -ENOENT;
}

int gw_mcp_session_close(struct gw_mcp_sessions *s, const char *id, const char *tenant,
                         uint64_t now_ns)
{
    pthread_mutex_lock(&s->lock);
    struct slot *sl = find(s, id, tenant, now_ns);
    if (sl)
        memset(sl, 0, sizeof(*sl));
    pthread_mutex_unlock(&s->lock);
    return sl ? 0 : -ENOENT;
}

size_t gw_mcp_sessions_count(struct gw_mcp_sessions *s, uint64_t now_ns)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->max; i++)
        n += live(s, &s->slots[i], now_ns);
    pthread_mutex_unlock(&s->lock);
    return n;
}
