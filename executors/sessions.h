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
 * call to the executor that holds it. Without a session directory
 * (cfg->session_dir) the boot id is new in each life of the executor and an
 * id from an earlier life is unknown; with one, the boot id is kept there
 * and each open session has a record (sessions_store.h), so an executor that
 * died takes its sessions back at start (sessions_recover). A stop
 * (sessions_free) ends every session. Each session belongs to one tenant (an opaque string
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
#define SESSIONS_START_MS 30000u               /* the runner's answer to the session start */
#define SESSIONS_FILE_OP_MS 10000u             /* one file operation */
#define SESSIONS_FILE_MAX (8u * 1024u * 1024u) /* one upload, or one download */
/* A download's answer line: the file in base64 and the line's own fields. */
#define SESSIONS_DOWNLOAD_LINE_MAX ((SESSIONS_FILE_MAX / 3u + 1u) * 4u + 64u * 1024u)
/* What a download holds at once, reserved whole in the daemon's memory budget
 * before it is asked for: the line as read, its parsed string, the decoded
 * file (held until it is sent). */
#define SESSIONS_DOWNLOAD_MEMORY (2u * SESSIONS_DOWNLOAD_LINE_MAX + SESSIONS_FILE_MAX)
#define SESSIONS_REAP_MS 250u
/* The runner interrupts a cell at its time limit and kills the interpreter
 * this long after (images/python/session.py: CANCEL_GRACE_S). */
#define SESSIONS_CANCEL_GRACE_MS 2000u

struct sessions;
struct sg_membudget;

struct sessions_config {
    struct docker_client *dc; /* borrowed */
    struct pool_set *pools;   /* borrowed */
    struct metrics *metrics;  /* borrowed, may be NULL */
    const struct exec_config *cfg;
    unsigned max_sessions;       /* at once on this executor */
    struct sg_membudget *budget; /* borrowed, may be NULL: the daemon's (downloads) */
};

int sessions_new(const struct sessions_config *c, struct sessions **ret, struct sg_error *err);

/* End every session (their sandboxes are released) and stop the reaper. */
void sessions_free(struct sessions *s);

/* The executor's boot id (hex, SESSIONS_BOOT_HEX digits). */
const char *sessions_boot_id(const struct sessions *s);

/* Open sessions (not lost) now. */
unsigned sessions_count(struct sessions *s);

/* What sessions_recover did: sessions taken back, lost (their container
 * gone or silent, or an operation ran when the executor died: each answers
 * 410 session_lost saying the executor restarted, its container removed)
 * and expired meanwhile (removed), and how long it took. */
struct sessions_recovery {
    unsigned recovered, lost, expired;
    double ms;
};

struct sstore_record;

/* Take back the sessions of the n records read at start (sstore_load; the
 * caller kept their containers from the start-up reap and frees recs): each
 * record's container is inspected, attached again and its runner probed
 * with a keyed request; only then is the session open again. Call before
 * serving requests. */
void sessions_recover(struct sessions *s, const struct sstore_record *recs, size_t n,
                      struct sessions_recovery *ret);

/* Handle /v1/sessions and /v1/sessions/... (the caller checked the token).
 * Returns false when the URL is not a sessions URL. */
bool sessions_handle(struct sessions *s, const struct sg_http_request *req,
                     struct sg_http_response *resp);

#endif
