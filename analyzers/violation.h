/* violation.h - policy violations with positions.
 *
 * Positions are 1-based; columns count Unicode code points (not bytes) from
 * the start of the line, so they match what an editor shows. end_* point one
 * past the last character, as tree-sitter ranges do.
 */
#ifndef SG_VIOLATION_H
#define SG_VIOLATION_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define SG_VIOLATIONS_MAX 64 /* further violations are counted, not stored */
#define SG_SNIPPET_MAX 120   /* bytes of source kept per violation */
#define SG_VIOLATION_MSG_MAX 256

struct sg_violation {
    const char *rule;     /* static string from rules.h */
    const char *severity; /* static string, SG_SEVERITY_ERROR */
    char *message;        /* owned */
    uint32_t line, column, end_line, end_column;
    char *snippet; /* owned; valid UTF-8, at most SG_SNIPPET_MAX bytes */
};

struct sg_violations {
    struct sg_violation *items; /* owned */
    size_t count;               /* stored items */
    size_t cap;
    size_t dropped; /* violations found past SG_VIOLATIONS_MAX */
};

/* A position in the source, as the analyzers know it. */
struct sg_span {
    size_t start_byte, end_byte;
    uint32_t line, column, end_line, end_column; /* 1-based, columns in code points */
};

/* Compute a span (line/column in code points) from byte offsets into src. */
void sg_span_from_bytes(const char *src, size_t len, size_t start_byte, size_t end_byte,
                        struct sg_span *ret_span);

/* Append a violation; the snippet is the first line of src at span, made
 * safe by sg_text_sanitize() and clipped to SG_SNIPPET_MAX bytes on a
 * character boundary; the message is sanitised the same way. Returns 0 or -ENOMEM. Past
 * SG_VIOLATIONS_MAX it only increments `dropped`. */
int sg_violations_add(struct sg_violations *vs, const char *rule, const struct sg_span *span,
                      const char *src, size_t src_len, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Like sg_violations_add, from byte offsets: the span is computed only when
 * the violation is stored, so past SG_VIOLATIONS_MAX each call is O(1).
 * Prefer it in loops that may report many violations. */
int sg_violations_add_at(struct sg_violations *vs, const char *rule, const char *src,
                         size_t src_len, size_t start_byte, size_t end_byte, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Copy s[0..n) into out (outsz bytes, always NUL-terminated, never split
 * inside a character) as text safe for a terminal or a JSON string: invalid
 * UTF-8, control characters (tab kept), U+2028/U+2029 and bidi controls
 * become U+FFFD. With stop_at_eol the copy ends at the first CR or LF.
 * Returns the bytes written (without the NUL). */
size_t sg_text_sanitize(const char *s, size_t n, int stop_at_eol, char *out, size_t outsz);

/* The API form: a JSON array of {rule, severity, message, line, column,
 * end_line, end_column, snippet}. Caller owns the reference. */
json_t *sg_violations_to_json(const struct sg_violations *vs);

/* Free the items; the struct itself is the caller's. NULL is a no-op. */
void sg_violations_free(struct sg_violations *vs);

#endif
