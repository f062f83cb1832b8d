/* canon.h - byte-level canonicalisation checks, run before any parse.
 *
 * The gateway forwards exactly the bytes it checked, so these checks never
 * rewrite the source: they reject what a parser and the runtime could read
 * differently (invalid UTF-8, NUL, lone CR, non-UTF-8 coding cookies,
 * U+2028/U+2029, bidi controls, Python indentation with a tab after a
 * space) and leave identifier normalisation to the
 * analyzers, which call sg_nfkc() on names before matching.
 */
#ifndef SG_CANON_H
#define SG_CANON_H

#include <stddef.h>

#include "sg_lang.h"
#include "violation.h"

/* Append a violation for each byte-level problem of src (at most one per
 * rule). Returns 0, or -ENOMEM. */
int sg_canon_check(enum sg_lang lang, const char *src, size_t len, struct sg_violations *out);

/* NFKC-normalise a UTF-8 identifier (libunistring), as CPython does for
 * identifiers. *ret is a new NUL-terminated string; caller frees with free().
 * Returns 0, -EINVAL on invalid UTF-8, or -ENOMEM. */
int sg_nfkc(const char *s, size_t n, char **ret);

#endif
