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

#define SG_VIOLATIONS_MAX 64      /* further violations are counted, not stored */
#define SG_SNIPPET_MAX 120        /* bytes of source kept per violation */
#define SG_VIOLATION_MSG_MAX 256

struct sg_violation {
    const char *rule;     /* static string from rules.h */
    const char *severity; /* static string, SG_SEVERITY_ERROR */
    char *message;        /* owned */
    uint32_t line, column, end_line, end_column;
    char *snippet;        /* owned; valid UTF-8, at most SG_SNIPPET_MAX bytes */
};

struct sg_violations {
    struct sg_violation *items; /* owned */
    size_t count;               /* stored items */
    size_t cap;
    size_t dropped;             /* violations found past SG_VIOLATIONS_MAX */
};

/* A position in the source, as the analyzers know it. */
struct sg_span {
    size_t start_byte, end_byte;
    uint32_t line, column, end_line, end_column; /* 1-based, columns in code points */
};

/* Compute a span (line/column in code points) from byte offsets into src. */
void sg_span_from_bytes(const char *src, size_t len, size_t start_byte, size_t end_byte,
                        struct sg_span *ret_span);

/* Append a violation; the snippet is taken from src at span (clipped to a
 * UTF-8 boundary). Returns 0 or -ENOMEM. Past SG_VIOLATIONS_MAX it only
 * increments `dropped`. */
int sg_violations_add(struct sg_violations *vs, const char *rule, const struct sg_span *span,
                      const char *src, size_t src_len, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The API form: a JSON array of {rule, severity, message, line, column,
 * end_line, end_column, snippet}. Caller owns the reference. */
json_t *sg_violations_to_json(const struct sg_violations *vs);

/* Free the items; the struct itself is the caller's. NULL is a no-op. */
void sg_violations_free(struct sg_violations *vs);

#endif
