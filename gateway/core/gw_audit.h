/* gw_audit.h - the audit log: one JSON line per job request.
 *
 * Request threads never touch the file: gw_audit_write() copies the line into
 * a bounded in-memory queue and returns at once; one writer thread drains the
 * queue in batches. When the queue is full the line is dropped and counted;
 * when the file cannot be opened or written (full disk, removed directory)
 * the lost lines are counted, the log is marked unwritable and the writer
 * retries opening it about once a second. Both show in /readyz and /metrics;
 * neither stops the gateway.
 *
 * A write cut short (ENOSPC cuts a line anywhere) takes back the fragment it
 * left, so every line in the file is a whole JSON object or absent.
 *
 * Path "-" writes to stdout; an empty path disables the log (every call is a
 * no-op and the log counts as writable).
 */
#ifndef SG_GW_AUDIT_H
#define SG_GW_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "sg_error.h"

#define GW_AUDIT_LINE_MAX (16 * 1024) /* longer lines are dropped (and counted) */

struct gw_audit;

struct gw_audit_stats {
    uint64_t written;      /* lines written */
    uint64_t dropped;      /* lines lost: queue full or too long */
    uint64_t write_errors; /* lines lost to open/write failures */
    int writable;          /* 1 when the last open/write succeeded */
    size_t queued;
};

/* Start the writer. Fails only on resource exhaustion; an unopenable path is
 * reported through the stats, not as an error. Caller closes with
 * gw_audit_close(). */
int gw_audit_open(const char *path, size_t queue_max, struct gw_audit **ret, struct sg_error *err);

/* Queue one line (no trailing newline; one is added). Never blocks on I/O. */
void gw_audit_write(struct gw_audit *a, const char *line, size_t len);

/* Ask the writer to reopen the file (log rotation, SIGHUP). */
void gw_audit_reopen(struct gw_audit *a);

void gw_audit_get_stats(struct gw_audit *a, struct gw_audit_stats *ret);

/* Block until the queue is empty or timeout_ms passed; returns 0 when empty. */
int gw_audit_flush(struct gw_audit *a, unsigned timeout_ms);

/* Replace writev() for the writer thread (tests inject short writes and
 * ENOSPC with it); NULL restores writev(). Waits for the queue to empty. */
typedef ssize_t (*gw_audit_writev_fn)(int fd, const struct iovec *iov, int iovcnt);
void gw_audit_set_writer(struct gw_audit *a, gw_audit_writev_fn fn);

/* Write what is queued (bounded wait), stop the writer, free. NULL is a no-op. */
void gw_audit_close(struct gw_audit *a);

#endif
