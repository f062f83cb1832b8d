/* analyze.h - the analyzer's public entry point: canonicalise, parse with
 * tree-sitter, evaluate the policy. This is all the gateway and the
 * sandgate-check CLI call.
 */
#ifndef SG_ANALYZE_H
#define SG_ANALYZE_H

/* The languages and the tree-sitter toolkit sit below analyze: they reach
 * the core through lang.h (analyzers/build.mk defines SG_LAYER_LANGUAGE for
 * them). */
#ifdef SG_LAYER_LANGUAGE
#error "analyzers/ts, python and javascript must not include analyze.h (use lang.h)"
#endif

#include <stddef.h>
#include <stdint.h>

#include "lang.h"
#include "policy.h"
#include "sg_error.h"
#include "sg_lang.h"
#include "violation.h"

struct sg_analysis {
    int accepted; /* 1: no violation; 0: rejected (see violations) */
    struct sg_violations violations;
    struct sg_analysis_stats stats;
};

/* Analyse src[0..len) for lang under policy. Returns 0 when the analysis ran
 * (accepted or rejected: see ret->accepted); a negative code only for an
 * internal failure (out of memory). A rejection is a result, not an error.
 * Thread-safe. Caller releases ret with sg_analysis_free(). */
int sg_analyze(const struct sg_policy *policy, enum sg_lang lang, const char *src, size_t len,
               struct sg_analysis *ret, struct sg_error *err);

/* Free what the analysis holds; the struct itself is the caller's. NULL is a no-op. */
void sg_analysis_free(struct sg_analysis *analysis);

#endif
