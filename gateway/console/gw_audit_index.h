/* gw_audit_index.h - the SQLite index of the audit log (GET /v1/audit, the console).
 *
 * The JSON-lines audit log (gw_audit.h) stays the source of truth; this index
 * is built from it and can be thrown away and rebuilt at any time. It is
 * written by one thread that tails the log file, never by the request path:
 * a request only queues its line for gw_audit's writer, and this thread reads
 * what reached the file (WAL mode, a niced thread, batches of lines per
 * transaction), so indexing can fall behind but never slows a request.
 *
 * The read position (the log's inode and the offset after the last indexed
 * line) is stored in the same transaction as the rows, so a crash while
 * indexing loses nothing and indexes nothing twice: the next start resumes at
 * the stored offset. A request id is indexed once (INSERT OR IGNORE).
 * Rotation: when the path names another, non-empty file, the old file (still
 * open) is read to its end first, then the new one from its start; a file
 * shorter than the stored offset was truncated and is read from its start.
 * A log rotated away while the gateway was down is not read back: `sandgate-audit
 * rebuild` takes the rotated files too.
 *
 * Size is bounded: lines older than the retention and all but the newest
 * max_rows lines are deleted (at start, then about once a minute). A line
 * longer than GW_AUDIT_INDEX_LINE_MAX, or not a JSON object with a
 * request_id and a time, is skipped and counted.
 */
#ifndef SG_GW_AUDIT_INDEX_H
#define SG_GW_AUDIT_INDEX_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

#define GW_AUDIT_INDEX_LINE_MAX (64 * 1024)
#define GW_AUDIT_INDEX_BATCH 4096 /* lines per transaction */

struct gw_audit_index;

struct gw_audit_index_config {
    const char *db_path;  /* the SQLite file (created) */
    const char *log_path; /* the audit log it indexes */
    uint64_t retention_days;
    uint64_t max_rows;
    unsigned poll_ms; /* how often the thread looks for new lines; 0 = 200 */
};

struct gw_audit_index_stats {
    uint64_t indexed;   /* lines indexed */
    uint64_t skipped;   /* lines not indexable (too long, not an audit record) */
    uint64_t errors;    /* rounds that failed (database or file errors) */
    uint64_t rows;      /* rows in the index after the last retention pass */
    uint64_t offset;    /* read position in the live log */
    int64_t last_ok_ms; /* wall clock of the last successful round; 0 = none */
};

/* Open (create) the database and its schema. With start, a thread tails the
 * log until gw_audit_index_close(); without, the caller drives it with
 * gw_audit_index_sync() (the rebuild command, tests). Caller closes with
 * gw_audit_index_close(). */
int gw_audit_index_open(const struct gw_audit_index_config *cfg, int start,
                        struct gw_audit_index **ret, struct sg_error *err);

/* Index what the log holds past the stored offset, now, on the caller's
 * thread (serialised with the tailing thread). ret_lines (optional) gets the
 * lines indexed. */
int gw_audit_index_sync(struct gw_audit_index *x, uint64_t *ret_lines, struct sg_error *err);

/* Empty the index, then index each file of logs[0..n) from its start (oldest
 * first: rotated files, then the live log, whose position is stored so the
 * gateway continues from there). */
int gw_audit_index_rebuild(struct gw_audit_index *x, const char *const *logs, size_t n,
                           uint64_t *ret_lines, struct sg_error *err);

/* Delete what the retention and max_rows no longer keep. */
int gw_audit_index_retain(struct gw_audit_index *x, struct sg_error *err);

/* Run fn with a read-only connection (one at a time; fn must not keep db).
 * The connection aborts a statement that runs longer than timeout_ms
 * (SQLITE_INTERRUPT). Returns what fn returns. */
int gw_audit_index_read(struct gw_audit_index *x, unsigned timeout_ms,
                        int (*fn)(sqlite3 *db, void *arg), void *arg);

void gw_audit_index_get_stats(struct gw_audit_index *x, struct gw_audit_index_stats *ret);

/* "2026-11-26T23:44:12.123Z" (and without the milliseconds) to epoch ms;
 * -1 when the text is not that form. */
int64_t gw_audit_index_parse_time(const char *s);

/* Stop the thread (the round in progress finishes), close. NULL is a no-op. */
void gw_audit_index_close(struct gw_audit_index *x);

#endif
