/* python_resolve.h - what a Python name or expression may refer to
 * (internal to the Python analyzer; see python_ctx.h).
 *
 * Resolution is a may-analysis: every binding a name could have at the
 * reference contributes a candidate, and a name that is not certainly bound
 * also reaches the builtin of that name. A name is certainly bound when it
 * is local to the enclosing function (Python then never falls back to the
 * builtin), or bound by an unconditional top-level statement that precedes
 * the reference and never deleted. Work is bounded: past PY_RESOLVE_DEPTH,
 * PY_RESOLVE_STEPS or PY_CANDS_MAX the result is marked overflow, which the
 * checks report (fail closed).
 *
 * python_resolve and python_fold call each other, a genuine mutual recursion:
 * resolving `d['k']` or `getattr(m, n)` folds the key, and folding `f(x)` or
 * a bound name resolves the callee. Both pass depth + 1, so PY_RESOLVE_DEPTH
 * bounds the pair together.
 */
#ifndef SG_PYTHON_RESOLVE_H
#define SG_PYTHON_RESOLVE_H

#include "python_ctx.h"

/* Called for each binding a lookup reaches; b == NULL stands for the
 * builtin. Return nonzero to stop. */
typedef int (*py_binding_fn)(struct py_ctx *c, const struct py_binding *b, void *ud);

/* Visit what name may be bound to when read in scope at byte pos. */
void py_lookup_each(struct py_ctx *c, const char *name, int32_t scope, uint32_t pos,
                    py_binding_fn fn, void *ud);

/* The binding of name when it is exactly one assignment (the only case in
 * which a name's value is known), else NULL. */
const struct py_binding *py_lookup_single(struct py_ctx *c, const char *name, int32_t scope,
                                          uint32_t pos);

/* Add what expr (read in scope) may evaluate to. depth counts nesting. */
void py_resolve(struct py_ctx *c, TSNode expr, int32_t scope, int depth, struct py_cands *out);

/* Count one unit of resolution or folding work; 0 once the budget of the
 * current top-level resolution (or of the analysis) is spent. */
int py_step(struct py_ctx *c);

/* py_resolve() of identifier n whose normalised name the caller already
 * has (NULL: computed here). */
void py_resolve_name(struct py_ctx *c, TSNode n, const char *name, int32_t scope, int depth,
                     struct py_cands *out);

/* Start a top-level resolution (resets the per-reference step budget). */
void py_resolve_begin(struct py_ctx *c);

/* Append a candidate unless already present; s is copied to the arena. */
void py_cands_add(struct py_ctx *c, struct py_cands *out, enum py_cand_kind kind, const char *s,
                  size_t len, int partial);

/* Add each root candidate extended by ".names[0].names[1]..." to out. */
void py_cands_extend(struct py_ctx *c, const struct py_cands *roots, const char *const *names,
                     int k, struct py_cands *out);

/* The first named child of n that is not a comment (null node if none). */
TSNode py_first_expr(const struct py_ctx *c, TSNode n);

/* The i-th positional argument of a call's argument_list, or the keyword
 * argument `kw` (may be NULL). *ret_unknown is set when a * or ** argument
 * makes the answer unknowable. Null node when absent. */
TSNode py_call_arg(struct py_ctx *c, TSNode call, uint32_t i, const char *kw, int *ret_unknown);

#endif
