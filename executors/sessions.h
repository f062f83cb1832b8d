/* sessions.h - stateful sessions: one warm sandbox kept for many cells.
 *
 * A session takes a fresh sandbox from the pools (never used before) and
 * keeps it until it is deleted, idles past its idle timeout, outlives its
 * maximum lifetime or its interpreter dies; then the sandbox goes back to its
 * pool for teardown and is never used again. The runner speaks the session
 * protocol (PROTOCOL.md, "Sessions"): every request line carries the
 * session's key, a secret the program never sees.
 *
 * The table is bounded (cfg->max_sessions); its ids are
 * "<executor boot id>-<128 random bits>" in hex, so the gateway can route a
 * call to the executor that holds it, and an id from an earlier life of the
 * executor is unknown. Each session belongs to one tenant (an opaque string
 * the gateway passes); a call naming another tenant is answered as if the
 * session did not exist. A reaper thread ends sessions past their timeouts.
 * Sessions whose interpreter died stay as "lost" tombstones (answering
 * session_lost) until their idle timeout. Thread-safe.
 */
#ifndef SG_EXEC_SESSIONS_H
#define SG_EXEC_SESSIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "docker.h"
#include "exec_config.h"
#include "httpsrv.h"
#include "metrics.h"
#include "pools.h"
#include "sg_error.h"

#define SESSIONS_BOOT_HEX 16
#define SESSIONS_RAND_HEX 32 /* 128 random bits */
#define SESSIONS_ID_LEN (SESSIONS_BOOT_HEX + 1 + SESSIONS_RAND_HEX)
#define SESSIONS_KEY_HEX 32
#define SESSIONS_TENANT_MAX 80
#define SESSIONS_LABEL_MAX 128 /* "label": what the gateway keeps with a session */
/* Accepted cells kept for the gateway's analysis of the next one. */
#define SESSIONS_HISTORY_MAX (1024u * 1024u)
#define SESSIONS_IDLE_DEFAULT_S 600u
#define SESSIONS_LIFE_DEFAULT_S 3600u
#define SESSIONS_IDLE_MAX_S 86400u
#define SESSIONS_LIFE_MAX_S 86400u
#define SESSIONS_START_MS 30000u   /* the runner's answer to the session start */
#define SESSIONS_FILE_OP_MS 10000u /* one file operation */
#define SESSIONS_FILE_MAX (8u * 1024u * 1024u)
#define SESSIONS_REAP_MS 250u
/* The runner interrupts a cell at its time limit and kills the interpreter
 * this long after (images/python/session.py: CANCEL_GRACE_S). */
#define SESSIONS_CANCEL_GRACE_MS 2000u

struct sessions;

struct sessions_config {
    struct docker_client *dc; /* borrowed */
    struct pool_set *pools;   /* borrowed */
    struct metrics *metrics;  /* borrowed, may be NULL */
    const struct exec_config *cfg;
    unsigned max_sessions; /* at once on this executor */
};

int sessions_new(const struct sessions_config *c, struct sessions **ret, struct sg_error *err);

/* End every session (their sandboxes are released) and stop the reaper. */
void sessions_free(struct sessions *s);

/* The executor's boot id (hex, SESSIONS_BOOT_HEX digits). */
const char *sessions_boot_id(const struct sessions *s);

/* Open sessions (not lost) now. */
unsigned sessions_count(struct sessions *s);

/* Handle /v1/sessions and /v1/sessions/... (the caller checked the token).
 * Returns false when the URL is not a sessions URL. */
bool sessions_handle(struct sessions *s, const struct sg_http_request *req,
                     struct sg_http_response *resp);

#endif
