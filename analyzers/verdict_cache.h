/* verdict_cache.h - a bounded cache of analysis results.
 *
 * An analysis is a pure function of (policy bytes, language, source bytes),
 * so its result can be reused: workflow tools submit the same code again and
 * again with different arguments. Entries are keyed by
 * sha256(policy sha256 || language || sha256(source)); a policy reload
 * changes the policy's sha256, so old entries simply stop matching and age
 * out. The cache holds at most max_entries entries and max_bytes bytes
 * (entry header, violations, their messages and snippets), evicting the
 * least recently used entry of a shard first; shards have their own locks.
 * Thread-safe. A NULL cache (disabled) misses every lookup and stores
 * nothing.
 */
#ifndef SG_VERDICT_CACHE_H
#define SG_VERDICT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze.h"

#define SG_VCACHE_KEY_LEN 32
#define SG_VCACHE_SHARDS 16
/* Below this many entries per shard the cache uses one shard, so small
 * caches evict in exact LRU order. */
#define SG_VCACHE_MIN_PER_SHARD 8
/* Caps accepted by sg_vcache_new (the gateway validates its config
 * against the same numbers). */
#define SG_VCACHE_ENTRIES_MAX 1000000u
#define SG_VCACHE_BYTES_MAX (4ull << 30)

struct sg_vcache;

struct sg_vcache_stats {
    uint64_t hits, misses, insertions, evictions;
    size_t entries, bytes;
};

/* A cache of at most max_entries entries and max_bytes bytes. max_entries 0
 * disables caching: returns 0 with *ret = NULL. Caller frees with
 * sg_vcache_free(). Returns 0, -EINVAL (caps out of range) or -ENOMEM. */
int sg_vcache_new(size_t max_entries, size_t max_bytes, struct sg_vcache **ret);

/* NULL is a no-op. */
void sg_vcache_free(struct sg_vcache *c);

/* The key of an analysis of a source whose sha256 (lowercase hex) is
 * source_sha256, under a policy whose file has sha256 policy_sha256. */
void sg_vcache_key(const char *policy_sha256, enum sg_lang lang, const char *source_sha256,
                   uint8_t ret_key[SG_VCACHE_KEY_LEN]);

/* Look key up. On a hit returns 1 and fills *ret with a copy of the stored
 * result (release with sg_analysis_free()); its phase timings (canon_us,
 * parse_us, eval_us) are 0 because nothing was analysed. Returns 0 on a
 * miss, -ENOMEM when the copy cannot be made (counted as a miss). */
int sg_vcache_get(struct sg_vcache *c, const uint8_t key[SG_VCACHE_KEY_LEN],
                  struct sg_analysis *ret);

/* Store a copy of analysis under key (an existing entry is kept and
 * refreshed), evicting least recently used entries to stay within the
 * caps. An entry larger than a shard's byte share is not stored. Returns 0
 * or -ENOMEM. */
int sg_vcache_put(struct sg_vcache *c, const uint8_t key[SG_VCACHE_KEY_LEN],
                  const struct sg_analysis *analysis);

/* Counters since creation and the current size (all 0 for NULL). */
void sg_vcache_get_stats(struct sg_vcache *c, struct sg_vcache_stats *ret);

#endif
