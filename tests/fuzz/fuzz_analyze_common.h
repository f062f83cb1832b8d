/* fuzz_analyze_common.h - shared body of the per-language analysis fuzz
 * targets: canonicalise -> parse -> evaluate under the default policy, then
 * check the result's invariants (abort() makes libFuzzer keep the input). */
#ifndef SG_FUZZ_ANALYZE_COMMON_H
#define SG_FUZZ_ANALYZE_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

#include "analyze.h"
#include "policy.h"
#include "ts_util.h"

static struct sg_policy *fuzz_policy;

/* The default policy from $SANDGATE_POLICY_DIR or ./policies (make fuzz runs
 * from the repository root). Missing policy: fail loudly, never fuzz nothing. */
static void fuzz_load_default_policy(void)
{
    const char *dir = getenv("SANDGATE_POLICY_DIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/default.json", dir && *dir ? dir : "policies");
    struct sg_error err = {0};
    if (sg_policy_load_file(path, &fuzz_policy, &err) < 0) {
        fprintf(stderr, "fuzz: cannot load %s: %s\n", path, err.msg);
        abort();
    }
}

static void fuzz_check_invariants(const struct sg_analysis *a, size_t len)
{
    const struct sg_violations *vs = &a->violations;
    if (a->accepted != (vs->count + vs->dropped == 0) || vs->count > SG_VIOLATIONS_MAX ||
        a->stats.source_bytes != len)
        abort();
    for (size_t i = 0; i < vs->count; i++) {
        const struct sg_violation *v = &vs->items[i];
        size_t sl = strlen(v->snippet);
        if (!v->rule || !v->message || v->line < 1 || v->column < 1 || v->end_line < v->line ||
            (v->end_line == v->line && v->end_column < v->column) || sl > SG_SNIPPET_MAX ||
            u8_check((const uint8_t *)v->snippet, sl) ||
            u8_check((const uint8_t *)v->message, strlen(v->message)))
            abort();
    }
    json_t *j = sg_violations_to_json(vs);
    if (!j || json_array_size(j) != vs->count)
        abort();
    json_decref(j);
}

static int fuzz_analyze_one(enum sg_lang lang, const uint8_t *data, size_t size)
{
    struct sg_analysis a;
    struct sg_error err = {0};
    int r = sg_analyze(fuzz_policy, lang, (const char *)data, size, &a, &err);
    if (r == 0)
        fuzz_check_invariants(&a, size);
    else /* negative means an internal failure: never for any input */
        abort();
    sg_analysis_free(&a);
    /* tree-sitter's parsers keep pools of freed subtrees and stack nodes
     * between parses, so an input's mallocs and frees differ by a few even
     * when nothing leaks; libFuzzer reads that as a possible leak and runs a
     * full LSan scan after the input (most of the time per input, ~4x fewer
     * executions). Dropping the parsers makes every input balanced, so the
     * scan runs only for a real leak. */
    sg_ts_parsers_release();
    return 0;
}

#endif
