/* sessions_int.h - the session table's internals, shared by sessions.c (the
 * table, its reaper and the runner exchanges) and sessions_http.c (the HTTP
 * handlers). Not for other modules: use sessions.h.
 */
#ifndef SG_EXEC_SESSIONS_INT_H
#define SG_EXEC_SESSIONS_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "buf.h"
#include "httpsrv.h"
#include "job.h"
#include "sandbox.h"
#include "sessions.h"

#define SESSIONS_TENANT_HEADER "X-Sandgate-Tenant"

struct session {
    char id[SESSIONS_ID_LEN + 1];
    char tenant[SESSIONS_TENANT_MAX + 1];
    char key[SESSIONS_KEY_HEX + 1];
    struct sandbox sb;
    unsigned flavour;
    bool has_sb; /* the sandbox is still ours */
    bool busy;   /* a cell or file operation owns the stream */
    bool lost;   /* the interpreter is gone: a tombstone until its idle timeout */
    bool doomed; /* deleted or expired while busy: the busy thread ends it */
    char cell_nonce[JOB_NONCE_LEN + 1]; /* the running cell, for cancel */
    pthread_mutex_t wlock;              /* one writer on the stream at a time */
    double created_ms, used_ms;         /* monotonic */
    time_t created_wall, used_wall;
    unsigned idle_s, life_s;
    unsigned long cells;
    long long memory_kb;
    size_t max_output;
    unsigned timeout_ms;   /* a cell's time limit unless the cell gives its own */
    struct sg_buf history; /* the cells that ran, '\n'-separated */
    char lost_reason[160];
    char label[SESSIONS_LABEL_MAX + 1]; /* the gateway's note (its policy's name) */
};

struct sessions {
    struct sessions_config c;
    char boot[SESSIONS_BOOT_HEX + 1];
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop;
    pthread_t reaper;
    unsigned n_slots;
    struct session **slot;
};

double sess_now_ms(void);

/* Give a session's sandbox back to its pool for teardown; it no longer
 * counts against the memory budget (pool_set_hold). */
void sess_release_sandbox(struct sessions *s, unsigned flavour, struct sandbox *sb);

/* Free x (its sandbox already released). NULL is a no-op. */
void sess_free(struct session *x);

/* Under s->lock: end slot i for why. Returns the session when the caller
 * must release and free it (sess_end_now, after unlocking); NULL when a busy
 * thread will. */
struct session *sess_end_locked(struct sessions *s, unsigned i, const char *why);
void sess_end_now(struct sessions *s, struct session *x);

/* Under s->lock: open sessions of tenant (NULL: all). */
unsigned sess_count_open_locked(const struct sessions *s, const char *tenant);

/* Under s->lock: the slot of the tenant's session id, or -1. */
int sess_find_locked(const struct sessions *s, const char *id, size_t id_len, const char *tenant);

/* The session's public state; with history, the cells that ran. */
json_t *sess_info_json(const struct session *x, bool history);

/* Answer status with j (consumed). */
void sess_answer(struct sg_http_response *resp, int status, json_t *j);

/* 1..SESSIONS_LABEL_MAX bytes of [A-Za-z0-9._-] (tenants and labels; the
 * tenant length is checked on its own). */
bool sess_tenant_ok(const char *t);
void sess_not_found(struct sg_http_response *resp);
void sess_lost(struct sg_http_response *resp, const struct session *x);

/* Take the session for one operation: 0 with *ret set and marked busy, or
 * -1 with the answer (404, 409, 410) in resp. */
int sess_take(struct sessions *s, const char *id, size_t id_len, const char *tenant,
              struct sg_http_response *resp, struct session **ret);

/* The operation on x is over: lost (why != NULL) keeps a tombstone and
 * releases the sandbox; a doomed session is ended. */
void sess_give_back(struct sessions *s, struct session *x, const char *why);

/* Write one keyed request line (o's fields plus key and nonce; o is
 * consumed) and read its answer into io (job_io_init'ed with nonce). */
void sess_exchange(struct session *x, json_t *o, const char *nonce, unsigned deadline_ms,
                   struct job_io *io);

/* Write x's record (sessions_store.h) when the executor keeps them: busy
 * while an operation runs. The caller holds x busy (or owns it). */
void sess_persist(struct sessions *s, const struct session *x, bool busy);

/* Remove x's record (no-op without a session directory). */
void sess_unpersist(struct sessions *s, const struct session *x);

/* The busy x is removed from the table, its sandbox released, x freed. */
void sess_discard(struct sessions *s, struct session *x);

int sess_new_nonce(char out[JOB_NONCE_LEN + 1]);

#endif
