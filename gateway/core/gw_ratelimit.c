#include "gw_ratelimit.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64

struct bucket {
    char name[NAME_MAX_LEN + 1]; /* "" = free slot */
    double tokens;
    uint64_t last_ns;
};

struct gw_ratelimit {
    pthread_mutex_t lock;
    struct bucket slots[GW_RATELIMIT_SLOTS];
    struct bucket overflow;
};

struct gw_ratelimit *gw_ratelimit_new(void)
{
    struct gw_ratelimit *rl = calloc(1, sizeof(*rl));
    if (rl)
        pthread_mutex_init(&rl->lock, NULL);
    return rl;
}

void gw_ratelimit_free(struct gw_ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->lock);
    free(rl);
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Find or claim name's slot (linear probing); the overflow bucket when full. */
static struct bucket *find_bucket(struct gw_ratelimit *rl, const char *name, double burst,
                                  uint64_t now_ns)
{
    uint32_t h = hash_name(name);
    for (uint32_t i = 0; i < GW_RATELIMIT_SLOTS; i++) {
        struct bucket *b = &rl->slots[(h + i) % GW_RATELIMIT_SLOTS];
        if (strncmp(b->name, name, NAME_MAX_LEN) == 0 && b->name[0])
            return b;
        if (!b->name[0]) {
            snprintf(b->name, sizeof(b->name), "%s", name);
            b->tokens = burst;
            b->last_ns = now_ns;
            return b;
        }
    }
    return &rl->overflow;
}

int gw_ratelimit_take(struct gw_ratelimit *rl, const char *name, uint64_t rate, uint64_t burst,
                      uint64_t now_ns, uint64_t *ret_retry_after_ms)
{
    if (rate == 0)
        return 1;
    double cap = (double)(burst ? burst : rate);
    int allowed;
    pthread_mutex_lock(&rl->lock);
    struct bucket *b = find_bucket(rl, name[0] ? name : "-", cap, now_ns);
    if (now_ns > b->last_ns) {
        b->tokens += (double)(now_ns - b->last_ns) * (double)rate / 1e9;
        b->last_ns = now_ns;
    }
    if (b->tokens > cap)
        b->tokens = cap; /* a lowered burst after reload applies at once */
    allowed = b->tokens >= 1.0;
    if (allowed) {
        b->tokens -= 1.0;
    } else {
        double wait_ms = (1.0 - b->tokens) * 1000.0 / (double)rate;
        *ret_retry_after_ms = (uint64_t)wait_ms + 1;
    }
    pthread_mutex_unlock(&rl->lock);
    return allowed;
}
