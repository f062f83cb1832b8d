/* analyze.h - the analyzer's public entry point: canonicalise, parse with
 * tree-sitter, evaluate the policy. This is all the gateway and the
 * sandgate-check CLI call.
 */
#ifndef SG_ANALYZE_H
#define SG_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "sg_error.h"
#include "violation.h"

enum sg_lang { SG_LANG_PYTHON = 0, SG_LANG_JAVASCRIPT = 1 };

/* "python", "python3" -> PYTHON; "nodejs", "javascript", "js", "node" ->
 * JAVASCRIPT. Returns 0 or -EINVAL. */
int sg_lang_from_name(const char *name, enum sg_lang *ret_lang);

/* The API name: "python" or "nodejs". */
const char *sg_lang_name(enum sg_lang lang);

/* The modules a program imports, by top-level name ("pandas" for
 * "pandas.io.json", "@scope/pkg" for "@scope/pkg/sub", "fs" for "node:fs"),
 * each once, in order of first appearance, joined by ',' in text. Only names
 * of [A-Za-z0-9_.@/-] up to SG_IMPORT_NAME_MAX bytes are kept; the others,
 * and those past SG_IMPORTS_MAX names or SG_IMPORTS_TEXT_MAX bytes, are
 * counted in dropped. The gateway
 * sends them to the executor, whose warm pool flavours they choose between
 * (a lost name only costs speed). */
#define SG_IMPORTS_TEXT_MAX 512
#define SG_IMPORT_NAME_MAX 63
#define SG_IMPORTS_MAX 64 /* = the executor's cap on /v1/exec imports */
struct sg_imports {
    char text[SG_IMPORTS_TEXT_MAX];
    unsigned count, dropped;
};

/* Record module (a resolved import) in im; lang decides what its top-level
 * part is. No-op for relative imports and when im is NULL. */
void sg_imports_add(struct sg_imports *im, enum sg_lang lang, const char *module);

/* source_bytes and canon_us are filled by sg_analyze; the language checker
 * fills nodes, max_depth and parse_us (tree-sitter parse) and may fill
 * eval_us; when it leaves eval_us at 0, sg_analyze sets it to the checker's
 * remaining time. */
struct sg_analysis_stats {
    size_t source_bytes;
    size_t nodes;
    size_t max_depth;
    uint64_t canon_us, parse_us, eval_us;
    struct sg_imports imports; /* filled by the language checker */
};

struct sg_analysis {
    int accepted; /* 1: no violation; 0: rejected (see violations) */
    struct sg_violations violations;
    struct sg_analysis_stats stats;
};

/* Microseconds on CLOCK_MONOTONIC, for the phase timings in the stats. */
uint64_t sg_monotonic_us(void);

/* Analyse src[0..len) for lang under policy. Returns 0 when the analysis ran
 * (accepted or rejected: see ret->accepted); a negative code only for an
 * internal failure (out of memory). A rejection is a result, not an error.
 * Thread-safe. Caller releases ret with sg_analysis_free(). */
int sg_analyze(const struct sg_policy *policy, enum sg_lang lang, const char *src, size_t len,
               struct sg_analysis *ret, struct sg_error *err);

/* Free what the analysis holds; the struct itself is the caller's. NULL is a no-op. */
void sg_analysis_free(struct sg_analysis *analysis);

#endif
