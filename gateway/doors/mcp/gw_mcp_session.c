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
    size_t max, per_tenant;
    uint64_t idle_ns;
    struct slot *slots;
};

struct gw_mcp_sessions *gw_mcp_sessions_new_capped(size_t max, size_t per_tenant, uint64_t idle_ms)
{
    struct gw_mcp_sessions *s = calloc(1, sizeof(*s));
    if (!s || max == 0 || per_tenant == 0 || !(s->slots = calloc(max, sizeof(*s->slots)))) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->max = max;
    s->per_tenant = per_tenant < max ? per_tenant : max;
    s->idle_ns = idle_ms * 1000000ull;
    return s;
}

struct gw_mcp_sessions *gw_mcp_sessions_new(size_t max, uint64_t idle_ms)
{
    return gw_mcp_sessions_new_capped(max, GW_MCP_SESSIONS_PER_TENANT, idle_ms);
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

/* The slot a new session of tenant takes, the lock held: a free one while
 * the tenant is under its cap and the table has room, else the tenant's own
 * least recently used session. NULL when the table is full of other
 * tenants' sessions: one tenant never evicts another's. */
static struct slot *pick_slot(struct gw_mcp_sessions *s, const char *tenant, uint64_t now_ns)
{
    struct slot *free_slot = NULL, *lru = NULL;
    size_t mine = 0;
    for (size_t i = 0; i < s->max; i++) {
        struct slot *sl = &s->slots[i];
        if (!live(s, sl, now_ns)) {
            free_slot = free_slot ? free_slot : sl;
            continue;
        }
        if (strcmp(sl->tenant, tenant) != 0)
            continue;
        mine++;
        if (!lru || sl->last_ns < lru->last_ns)
            lru = sl;
    }
    return free_slot && mine < s->per_tenant ? free_slot : lru;
}

int gw_mcp_session_open(struct gw_mcp_sessions *s, const char *tenant, const char *version,
                        uint64_t now_ns, char id[GW_MCP_SESSION_ID_LEN + 1])
{
    int r = sg_random_hex(id, GW_MCP_SESSION_ID_BYTES);
    if (r < 0)
        return r;
    const char *who = tenant ? tenant : "";
    pthread_mutex_lock(&s->lock);
    struct slot *pick = pick_slot(s, who, now_ns);
    if (!pick) {
        pthread_mutex_unlock(&s->lock);
        id[0] = '\0';
        return -ENOSPC;
    }
    memset(pick, 0, sizeof(*pick));
    pick->used = 1;
    memcpy(pick->id, id, GW_MCP_SESSION_ID_LEN + 1);
    snprintf(pick->tenant, sizeof(pick->tenant), "%s", who);
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
