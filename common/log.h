/* log.h - one line per event, key=value, to stderr.
 *
 * Usage: sg_log(SG_LOG_INFO, "job_start", "job_id=%s code_len=%zu", id, len);
 * produces: ts=2026-11-22T10:00:00.123Z level=info event=job_start job_id=... code_len=...
 * Never pass submitted code to the logger: log its length and sha256.
 * Thread-safe: each line is formatted into a local buffer and written with a
 * single write(2). Lines are truncated at SG_LOG_LINE_MAX bytes.
 */
#ifndef SG_LOG_H
#define SG_LOG_H

#define SG_LOG_LINE_MAX 2048

enum sg_log_level { SG_LOG_DEBUG = 0, SG_LOG_INFO, SG_LOG_WARN, SG_LOG_ERROR };

/* Set the minimum level that is written (default SG_LOG_INFO). */
void sg_log_set_level(enum sg_log_level level);

/* Parse "debug"/"info"/"warn"/"error"; returns 0 or -EINVAL. */
int sg_log_parse_level(const char *s, enum sg_log_level *ret_level);

/* Write one line. `event` is a short snake_case word; fmt (may be NULL) gives
 * further space-separated key=value pairs. */
void sg_log(enum sg_log_level level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Escape s for a key="value" log field into out (always NUL-terminated,
 * truncated to outsz). Quotes, backslashes and control bytes are escaped. */
void sg_log_quote(const char *s, char *out, unsigned long outsz);

#endif
