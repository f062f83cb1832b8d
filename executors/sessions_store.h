/* sessions_store.h - the on-disk record of each open session, so that an
 * executor that died (killed, out of memory, crashed) takes its sessions
 * back when it starts again (sessions_recover.h).
 *
 * A session's sandbox outlives the executor: its container keeps running
 * and its runner keeps waiting for the next line on stdin (the attach stream
 * is opened with StdinOnce off, so a closed stream is no end of input). What
 * the executor alone knew is kept here, in one directory per executor:
 *
 *   boot_id             the executor's boot id, kept across restarts so the
 *                       session ids the gateway holds still name it
 *   <session id>.json   the record: tenant, key, container, flavour, times,
 *                       limits, label, history length, and whether an
 *                       operation was running (replaced atomically)
 *   <session id>.hist   the cells that ran, appended after each cell
 *
 * Files are 0600 in a directory the executor owns; the key in a record is
 * the session's secret (the program never sees it; the directory must be
 * the executor's alone). Everything read back is bounded and checked.
 */
#ifndef SG_EXEC_SESSIONS_STORE_H
#define SG_EXEC_SESSIONS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "docker.h"
#include "sessions.h"
#include "sg_error.h"

/* Records read at start: at most this many (more are removed unread). */
#define SSTORE_RECORDS_MAX (2u * EXEC_MAX_SESSIONS_MAX)
#define SSTORE_RECORD_MAX 4096u /* bytes of one record */

struct session;

/* One record as read back. history is malloc'ed (history_len bytes). */
struct sstore_record {
    char id[SESSIONS_ID_LEN + 1];
    char tenant[SESSIONS_TENANT_MAX + 1];
    char key[SESSIONS_KEY_HEX + 1];
    char container[DOCKER_ID_LEN + 1];
    char flavour[64];
    char label[SESSIONS_LABEL_MAX + 1];
    time_t created, used;
    unsigned idle_s, life_s, timeout_ms;
    unsigned long cells;
    long long memory_kb;
    size_t max_output;
    bool busy; /* an operation was running when the record was last written */
    char *history;
    size_t history_len;
};

/* The boot id kept in dir: read it when valid, else make a new one and
 * write it. *ret_kept tells which. 0 or -errno. */
int sstore_boot_id(const char *dir, char out[SESSIONS_BOOT_HEX + 1], bool *ret_kept,
                   struct sg_error *err);

/* Write x's record (flavour: its name; busy: an operation is starting),
 * replacing the last one. x must not change meanwhile (the caller holds it
 * busy or owns it). 0 or -errno (logged: the session works on, it only
 * would not survive a restart). */
int sstore_save(const char *dir, const struct session *x, const char *flavour, bool busy);

/* Append len bytes of history to the session's history file. 0 or -errno. */
int sstore_append_history(const char *dir, const char *id, const char *data, size_t len);

/* Remove the session's files (no error when they are gone). */
void sstore_remove(const char *dir, const char *id);

/* Read every valid record of dir (at most SSTORE_RECORDS_MAX); invalid ones
 * are removed with a log line. *ret is an array the caller frees with
 * sstore_records_free(). 0 or -errno (an unreadable directory). */
int sstore_load(const char *dir, struct sstore_record **ret, size_t *ret_n, struct sg_error *err);

/* Free the n records of r (their histories) and r. NULL is a no-op. */
void sstore_records_free(struct sstore_record *r, size_t n);

#endif
