/* gw_ratelimit.h - per-tenant token buckets.
 *
 * Buckets are keyed by tenant name and live outside the reloadable tenant set,
 * so a SIGHUP reload neither refills nor empties anyone's bucket; the rate and
 * burst are passed with each call and so follow the newest tokens file.
 * Thread-safe (one short mutex section per call). The table is bounded; past
 * GW_RATELIMIT_SLOTS distinct names, new names share an overflow bucket.
 */
#ifndef SG_GW_RATELIMIT_H
#define SG_GW_RATELIMIT_H

#include <stdint.h>

#define GW_RATELIMIT_SLOTS 4096

struct gw_ratelimit;

/* Caller frees with gw_ratelimit_free(). NULL on out of memory. */
struct gw_ratelimit *gw_ratelimit_new(void);

void gw_ratelimit_free(struct gw_ratelimit *rl);

/* Take one token from name's bucket at time now_ns (monotonic). rate 0 means
 * unlimited. Returns 1 when allowed; 0 when limited, with *ret_retry_after_ms
 * the wait until a token is available (at least 1). */
int gw_ratelimit_take(struct gw_ratelimit *rl, const char *name, uint64_t rate, uint64_t burst,
                      uint64_t now_ns, uint64_t *ret_retry_after_ms);

#endif
