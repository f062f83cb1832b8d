/* lang.h - the contract between analyze.c and the per-language analyzers.
 *
 * analyze.c canonicalises the source first (canon.h) and calls a language
 * checker only for source that passed; the checker parses with its
 * tree-sitter grammar, enforces the structural limits, resolves names and
 * appends one violation per offending construct. Parse errors (ERROR or
 * MISSING nodes) are reported as SG_RULE_SYNTAX_ERROR at the first error, and
 * nothing else is evaluated (fail closed).
 *
 * This header names no language: each language folder declares its checker
 * in its own header (python/python.h, javascript/javascript.h) and analyze.c
 * lists them in its table. Language code includes this header, never
 * analyze.h (analyzers/README.md, "Dependency rule").
 */
#ifndef SG_LANG_H
#define SG_LANG_H

#include <stddef.h>
#include <stdint.h>

#include "imports.h"
#include "policy.h"
#include "sg_error.h"
#include "sg_lang.h"
#include "violation.h"

/* source_bytes and canon_us are filled by sg_analyze; the language checker
 * fills nodes, max_depth and parse_us (tree-sitter parse) and may fill
 * eval_us; when it leaves eval_us at 0, sg_analyze sets it to the checker's
 * remaining time. */
struct sg_analysis_stats {
    size_t source_bytes;
    size_t nodes;
    size_t max_depth;
    uint64_t canon_us, parse_us, eval_us;
    struct sg_imports imports; /* filled by the language checker (imports.h) */
};

/* A language checker: returns 0 when the check ran (violations may have
 * been added to out), negative only on internal failure. Must be
 * thread-safe. */
typedef int sg_lang_check_fn(const struct sg_lang_policy *lp, const char *src, size_t len,
                             struct sg_violations *out, struct sg_analysis_stats *stats,
                             struct sg_error *err);

/* One row of analyze.c's language table. */
struct sg_lang_checker {
    enum sg_lang lang;
    const char *name; /* the analyzer's name, for diagnostics */
    sg_lang_check_fn *check;
};

#endif
