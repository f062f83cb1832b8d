/* js_lex.h - JavaScript lexical decoding for the analyzer: the value V8
 * gives an identifier or a string/template literal, from its source bytes.
 *
 * Names are matched after decoding, so `\u0065val`, `\u{65}val`,
 * "\x65val" and (sloppy-mode octal) "\145val" are all `eval`. JavaScript
 * does not normalise identifiers, so no NFKC here: a look-alike name made of
 * other characters is a different name for V8 too.
 *
 * Values land in a fixed buffer (struct js_str): no allocation. A value
 * longer than the buffer keeps its first JS_STR_MAX-1 bytes and is marked
 * truncated; policy entries are at most SG_POLICY_ITEM_MAX (128) bytes, so a
 * truncated value never equals one, while its prefix still names the
 * module of a long "pkg/sub/path" specifier.
 */
#ifndef SG_JS_LEX_H
#define SG_JS_LEX_H

#include <stddef.h>
#include <stdint.h>

#define JS_STR_MAX 256 /* bytes of a decoded value, NUL included */

struct js_str {
    char buf[JS_STR_MAX]; /* UTF-8 (WTF-8 for lone surrogates), NUL-terminated */
    size_t len;           /* bytes in buf, without the NUL */
    int truncated;        /* the value was longer than the buffer */
    uint32_t pending_hi;  /* a high surrogate waiting for its low half */
};

void js_str_clear(struct js_str *s);

/* Append bytes / one code point (UTF-8 encoded). A high surrogate waits
 * for a low one to pair with (as "\uD83D" + "\uDE00" pair in V8) until
 * other bytes arrive or js_str_flush() is called. */
void js_str_append(struct js_str *s, const char *p, size_t n);
void js_str_append_cp(struct js_str *s, uint32_t cp);
void js_str_flush(struct js_str *s);

/* Append the cooked value of a literal body src[0..n) (no quotes): escape
 * sequences decoded as in sloppy-mode strings (\n, \xHH, \uHHHH, \u{H+},
 * legacy octal \0-\377, line continuations, \c for any other c). In a
 * template body (template=1) CRLF becomes LF, as the spec cooks it. */
void js_str_append_cooked(struct js_str *s, const char *src, size_t n, int template);

/* Decode an identifier token src[0..n) (\uHHHH and \u{H+} escapes) into s,
 * replacing its contents. */
void js_decode_identifier(const char *src, size_t n, struct js_str *s);

/* Replace s->buf[from..len) with its Unicode lower/upper case mapping, as
 * String.prototype.toLowerCase/toUpperCase do (locale-independent), so
 * "\u212Aey".toLowerCase() is "key". Returns 0, or -1 when the mapping
 * failed (invalid UTF-8 from a lone surrogate, out of memory). */
int js_str_casemap(struct js_str *s, size_t from, int upper);

/* 1 when s is a plain ASCII identifier-like name of the form __x__ (a
 * "dunder"), used by the dunder_attributes rule. */
int js_is_dunder(const char *s, size_t n);

#endif
