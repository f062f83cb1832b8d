/* python_fold.h - constant folding of the strings that decide a dynamic
 * name (internal to the Python analyzer; see python_ctx.h).
 *
 * `getattr(x, 'ev' + 'al')`, `__import__('so'[::-1])`, `''.join(['o','s'])`,
 * `'%s' % 'os'`, f-strings with constant parts, `chr(111) + chr(115)`,
 * `bytes.fromhex('6f73').decode()` and names bound once to such a value all
 * fold; anything else does not, and the caller treats the name as dynamic.
 * Folding a call or a name resolves it (python_resolve.h: the mutual
 * recursion between the two is described there).
 */
#ifndef SG_PYTHON_FOLD_H
#define SG_PYTHON_FOLD_H

#include "python_ctx.h"

/* A folded string: at most PY_NAME_MAX - 1 bytes (longer does not fold). */
struct py_sbuf {
    char s[PY_NAME_MAX];
    size_t n;
};

/* A text of any length up to cap - 1 bytes (the caller's buffer). */
struct py_text {
    char *s;
    size_t n, cap;
};

/* 1 and *out (NUL-terminated) when expr, read in scope, is a constant
 * string; 0 otherwise. */
int py_fold_str(struct py_ctx *c, TSNode expr, int32_t scope, int depth, struct py_sbuf *out);

/* 1 and *ret when expr is a constant integer of magnitude < 2^31. */
int py_fold_int(struct py_ctx *c, TSNode expr, int32_t scope, int depth, long long *ret);

/* 1 when expr is a constant template of any length (str.format's
 * receiver, pandas' query), with *out holding a text whose format fields
 * and words are those of its value: string literals and their
 * concatenations (decoded; an f-string only when it folds), names bound
 * once to one, and calls that only remove whitespace around lines and so
 * never add, remove or change a field or a word: textwrap.dedent(T) and
 * T.strip() / lstrip() / rstrip() without arguments. Any other call (a
 * format() with arguments, join, replace, a function of the job's) is not
 * constant. A value py_fold_str() folds is constant too. 0 otherwise, or
 * when the text does not fit out->cap. */
int py_template_text(struct py_ctx *c, TSNode expr, int32_t scope, int depth, struct py_text *out);

typedef void (*py_text_fn)(struct py_ctx *c, const char *s, size_t n, void *ud);

/* Call fn for each attribute or index name a str.format() template reads:
 * "{0.__class__}" -> "__class__", "{x[__globals__]}" -> "__globals__". */
void py_format_fields(struct py_ctx *c, const char *s, size_t n, py_text_fn fn, void *ud);

/* Call fn for each identifier-shaped word of s (for expression strings
 * handed to pandas' eval/query). */
void py_words(struct py_ctx *c, const char *s, size_t n, py_text_fn fn, void *ud);

#endif
