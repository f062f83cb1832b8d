/* verdict_cache.c - sharded LRU cache of analysis results (verdict_cache.h).
 *
 * Each entry is one allocation: the header, the violations array, then
 * their messages and snippets. A shard is a chained hash table plus a
 * doubly linked recency list (head = most recently used); its lock is held
 * only to find, link, unlink and copy, never during an analysis.
 */
#include "verdict_cache.h"

#include <errno.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct vc_entry {
    struct vc_entry *hnext;       /* hash chain */
    struct vc_entry *prev, *next; /* recency list */
    uint8_t key[SG_VCACHE_KEY_LEN];
    size_t bytes; /* charged against the byte cap */
    int accepted;
    struct sg_analysis_stats stats;
    size_t count, dropped;
    struct sg_violation items[]; /* strings follow the array */
};

struct vc_shard {
    pthread_mutex_t lock;
    struct vc_entry **buckets;
    size_t bucket_mask;
    struct vc_entry *head, *tail;
    size_t entries, bytes, max_entries, max_bytes;
};

struct sg_vcache {
    size_t nshards;
    struct vc_shard shards[SG_VCACHE_SHARDS];
    atomic_uint_fast64_t hits, misses, insertions, evictions;
};

static size_t pow2_at_least(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

int sg_vcache_new(size_t max_entries, size_t max_bytes, struct sg_vcache **ret)
{
    *ret = NULL;
    if (max_entries == 0)
        return 0;
    if (max_entries > SG_VCACHE_ENTRIES_MAX || max_bytes == 0 || max_bytes > SG_VCACHE_BYTES_MAX)
        return -EINVAL;
    struct sg_vcache *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->nshards = max_entries >= SG_VCACHE_SHARDS * SG_VCACHE_MIN_PER_SHARD ? SG_VCACHE_SHARDS : 1;
    for (size_t i = 0; i < c->nshards; i++) {
        struct vc_shard *s = &c->shards[i];
        /* the first shards take the remainders, so the totals are exact */
        s->max_entries = max_entries / c->nshards + (i < max_entries % c->nshards);
        s->max_bytes = max_bytes / c->nshards + (i < max_bytes % c->nshards);
        size_t nb = pow2_at_least(s->max_entries);
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized by its element */
        s->buckets = calloc(nb, sizeof(*s->buckets));
        s->bucket_mask = nb - 1;
        pthread_mutex_init(&s->lock, NULL);
        if (!s->buckets) {
            c->nshards = i + 1;
            sg_vcache_free(c);
            return -ENOMEM;
        }
    }
    *ret = c;
    return 0;
}

void sg_vcache_free(struct sg_vcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nshards; i++) {
        struct vc_shard *s = &c->shards[i];
        for (struct vc_entry *e = s->head, *next; e; e = next) {
            next = e->next;
            free(e);
        }
        free(s->buckets);
        pthread_mutex_destroy(&s->lock);
    }
    free(c);
}

void sg_vcache_key(const char *policy_sha256, enum sg_lang lang, const char *source_sha256,
                   uint8_t ret_key[SG_VCACHE_KEY_LEN])
{
    /* NUL separators: no field can run into the next */
    char buf[2 * 65 + 16];
    size_t n = 0;
    const char *parts[3] = {policy_sha256, sg_lang_name(lang), source_sha256};
    for (int i = 0; i < 3; i++) {
        size_t l = strnlen(parts[i], 64);
        memcpy(buf + n, parts[i], l);
        n += l;
        buf[n++] = '\0';
    }
    SHA256((const unsigned char *)buf, n, ret_key);
}

static struct vc_shard *shard_of(struct sg_vcache *c, const uint8_t *key)
{
    return &c->shards[key[0] % c->nshards];
}

static size_t bucket_of(const struct vc_shard *s, const uint8_t *key)
{
    uint64_t h;
    memcpy(&h, key + 8, sizeof(h));
    return (size_t)h & s->bucket_mask;
}

static struct vc_entry *find(struct vc_shard *s, const uint8_t *key)
{
    for (struct vc_entry *e = s->buckets[bucket_of(s, key)]; e; e = e->hnext)
        if (memcmp(e->key, key, SG_VCACHE_KEY_LEN) == 0)
            return e;
    return NULL;
}

static void list_unlink(struct vc_shard *s, struct vc_entry *e)
{
    *(e->prev ? &e->prev->next : &s->head) = e->next;
    *(e->next ? &e->next->prev : &s->tail) = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(struct vc_shard *s, struct vc_entry *e)
{
    e->prev = NULL;
    e->next = s->head;
    *(s->head ? &s->head->prev : &s->tail) = e;
    s->head = e;
}

/* Deep copy of e into ret (the caller's struct). */
static int copy_out(const struct vc_entry *e, struct sg_analysis *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->accepted = e->accepted;
    ret->stats = e->stats;
    ret->stats.canon_us = ret->stats.parse_us = ret->stats.eval_us = 0;
    ret->violations.dropped = e->dropped;
    if (e->count == 0)
        return 0;
    ret->violations.items = calloc(e->count, sizeof(struct sg_violation));
    if (!ret->violations.items)
        return -ENOMEM;
    ret->violations.cap = e->count;
    for (size_t i = 0; i < e->count; i++) {
        struct sg_violation *v = &ret->violations.items[i];
        *v = e->items[i];
        v->message = strdup(e->items[i].message);
        v->snippet = strdup(e->items[i].snippet);
        ret->violations.count = i + 1; /* so sg_analysis_free releases what exists */
        if (!v->message || !v->snippet) {
            sg_analysis_free(ret);
            return -ENOMEM;
        }
    }
    return 0;
}

int sg_vcache_get(struct sg_vcache *c, const uint8_t key[SG_VCACHE_KEY_LEN],
                  struct sg_analysis *ret)
{
    if (!c)
        return 0;
    struct vc_shard *s = shard_of(c, key);
    pthread_mutex_lock(&s->lock);
    struct vc_entry *e = find(s, key);
    int r = 0;
    if (e) {
        list_unlink(s, e);
        list_push_front(s, e);
        r = copy_out(e, ret) < 0 ? -ENOMEM : 1;
    }
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(r == 1 ? &c->hits : &c->misses, 1, memory_order_relaxed);
    return r;
}

/* One allocation holding a copy of a (see the file comment). */
static struct vc_entry *entry_new(const uint8_t *key, const struct sg_analysis *a)
{
    const struct sg_violations *vs = &a->violations;
    size_t size = sizeof(struct vc_entry) + vs->count * sizeof(struct sg_violation);
    for (size_t i = 0; i < vs->count; i++)
        size += strlen(vs->items[i].message) + 1 + strlen(vs->items[i].snippet) + 1;
    struct vc_entry *e = malloc(size);
    if (!e)
        return NULL;
    memset(e, 0, sizeof(*e));
    memcpy(e->key, key, SG_VCACHE_KEY_LEN);
    e->bytes = size;
    e->accepted = a->accepted;
    e->stats = a->stats;
    e->count = vs->count;
    e->dropped = vs->dropped;
    char *text = (char *)(e->items + vs->count);
    for (size_t i = 0; i < vs->count; i++) {
        e->items[i] = vs->items[i];
        const char *parts[2] = {vs->items[i].message, vs->items[i].snippet};
        for (int k = 0; k < 2; k++) {
            size_t l = strlen(parts[k]) + 1;
            memcpy(text, parts[k], l);
            *(k == 0 ? &e->items[i].message : &e->items[i].snippet) = text;
            text += l;
        }
    }
    return e;
}

static void evict_tail(struct sg_vcache *c, struct vc_shard *s)
{
    struct vc_entry *e = s->tail;
    struct vc_entry **p = &s->buckets[bucket_of(s, e->key)];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    list_unlink(s, e);
    s->entries--;
    s->bytes -= e->bytes;
    free(e);
    atomic_fetch_add_explicit(&c->evictions, 1, memory_order_relaxed);
}

int sg_vcache_put(struct sg_vcache *c, const uint8_t key[SG_VCACHE_KEY_LEN],
                  const struct sg_analysis *analysis)
{
    if (!c)
        return 0;
    struct vc_entry *e = entry_new(key, analysis); /* outside the lock */
    if (!e)
        return -ENOMEM;
    struct vc_shard *s = shard_of(c, key);
    pthread_mutex_lock(&s->lock);
    struct vc_entry *old = find(s, key);
    if (old || e->bytes > s->max_bytes) {
        if (old) { /* another request stored it first: same result */
            list_unlink(s, old);
            list_push_front(s, old);
        }
        pthread_mutex_unlock(&s->lock);
        free(e);
        return 0;
    }
    while (s->tail && (s->entries + 1 > s->max_entries || s->bytes + e->bytes > s->max_bytes))
        evict_tail(c, s);
    size_t b = bucket_of(s, key);
    e->hnext = s->buckets[b];
    s->buckets[b] = e;
    list_push_front(s, e);
    s->entries++;
    s->bytes += e->bytes;
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&c->insertions, 1, memory_order_relaxed);
    return 0;
}

void sg_vcache_get_stats(struct sg_vcache *c, struct sg_vcache_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!c)
        return;
    ret->hits = atomic_load(&c->hits);
    ret->misses = atomic_load(&c->misses);
    ret->insertions = atomic_load(&c->insertions);
    ret->evictions = atomic_load(&c->evictions);
    for (size_t i = 0; i < c->nshards; i++) {
        struct vc_shard *s = &c->shards[i];
        pthread_mutex_lock(&s->lock);
        ret->entries += s->entries;
        ret->bytes += s->bytes;
        pthread_mutex_unlock(&s->lock);
    }
}
