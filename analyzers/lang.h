/* lang.h - the contract between analyze.c and the per-language analyzers.
 *
 * analyze.c canonicalises the source first (canon.h) and calls a language
 * checker only for source that passed; the checker parses with its
 * tree-sitter grammar, enforces the structural limits, resolves names and
 * appends one violation per offending construct. Parse errors (ERROR or
 * MISSING nodes) are reported as SG_RULE_SYNTAX_ERROR at the first error, and
 * nothing else is evaluated (fail closed).
 *
 * Returns 0 when the check ran (violations may have been added), negative
 * only on internal failure. Must be thread-safe.
 */
#ifndef SG_LANG_H
#define SG_LANG_H

#include <stddef.h>

#include "analyze.h"
#include "policy.h"
#include "sg_error.h"
#include "violation.h"

int sg_python_check(const struct sg_lang_policy *lp, const char *src, size_t len,
                    struct sg_violations *out, struct sg_analysis_stats *stats,
                    struct sg_error *err);

int sg_javascript_check(const struct sg_lang_policy *lp, const char *src, size_t len,
                        struct sg_violations *out, struct sg_analysis_stats *stats,
                        struct sg_error *err);

#endif
