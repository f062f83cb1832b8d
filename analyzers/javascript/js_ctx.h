/* js_ctx.h - the JavaScript analyzer's per-check context, shared by every
 * module of the analyzer (private to analyzers/javascript/): the context
 * type, violation reporting, node and argument helpers and the policy's
 * name sets. The context is owned by javascript.c, which creates one per
 * check; the modules only read it and append to it.
 *
 * The walk keeps the path from the root to the current node, so a rule can
 * look at a node's ancestors without ts_node_parent(), which re-walks the
 * tree from the root.
 */
#ifndef SG_JS_CTX_H
#define SG_JS_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "lang.h"
#include "js_lex.h"
#include "js_syms.h"
#include "policy.h"
#include "violation.h"
#include "ts_node.h"

#define JS_ALIAS_MAX 32       /* recorded aliases of objects with forbidden members */
#define JS_ALIAS_NAME_MAX 128 /* bytes of an alias name or target (SG_POLICY_ITEM_MAX) */
#define JS_CHAIN_MAX 16       /* member accesses in one resolved name (a.b.c...) */
#define JS_TAINT_MAX 16       /* names bound to a forbidden property name */
#define JS_ARGS_SCAN_MAX 16   /* children of an argument list looked at for one argument */

/* `const O = Object` makes `O.getPrototypeOf` mean `Object.getPrototypeOf`
 * when "Object.getPrototypeOf" is a forbidden call. Only aliases whose
 * target leads to a forbidden call are recorded. */
struct js_alias {
    char name[JS_ALIAS_NAME_MAX + 1];
    int name_truncated; /* the local name was longer: prefix match */
    char target[JS_ALIAS_NAME_MAX + 1];
};

/* `const k = "constructor"`: x[k] is then a forbidden access. */
struct js_taint {
    char name[JS_ALIAS_NAME_MAX + 1];
    int name_truncated;
    char value[JS_ALIAS_NAME_MAX + 1];
};

/* A quick pre-test for a set of names: most identifiers of a program share
 * no first byte or length with any forbidden name, and skip the binary
 * search. Built per check from the policy's set. */
struct js_name_filter {
    uint64_t first[4]; /* bit per first byte */
    size_t min_len, max_len;
};

struct js_consts;

/* Object literals whose `return this` js_fluent.c has judged, remembered. */
#define JS_FLUENT_CACHED 8
/* Nodes all of js_fluent.c's whole-program scans of one analysis visit;
 * past it `return this` is rejected as before (fail closed). */
#define JS_FLUENT_SCAN_TOTAL 4000000u

struct js_ctx {
    const struct sg_lang_policy *lp;
    const struct js_syms *sy;
    const char *src;
    size_t len;
    struct sg_violations *out;
    struct sg_imports *imports; /* the modules seen, for the pool choice */
    /* the walk's path: path[0] is the root, path[depth] the current node */
    TSNode *path;
    size_t path_len; /* entries of path */
    size_t depth;
    TSSymbol sym;                                     /* sg_ts_symbol(path[depth]) */
    struct js_name_filter names_filter, attrs_filter; /* forbidden_names, _attributes */
    struct js_alias aliases[JS_ALIAS_MAX];
    size_t n_aliases;
    struct js_taint taints[JS_TAINT_MAX];
    size_t n_taints;
    struct js_consts *consts; /* string bindings, js_consts.c (owned) */
    int second_pass;          /* second walk: only uses of aliases and tainted names */
    struct {
        uint32_t start; /* the object literal's first byte */
        uint8_t ok;
    } fluent[JS_FLUENT_CACHED]; /* js_fluent.c's answers */
    size_t n_fluent;
    size_t fluent_scanned; /* nodes js_fluent.c's scans visited (JS_FLUENT_SCAN_TOTAL) */
    int stop;              /* a fail-closed rule fired: end the walk */
    int err;               /* first internal error (-ENOMEM) */
};

/* Build the name filters from ctx->lp (once per check). */
void js_ctx_init_filters(struct js_ctx *ctx);

/* Report a violation on a node (errors are kept in ctx->err). */
void js_report(struct js_ctx *ctx, TSNode n, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The decoded name of an identifier-like node. */
void js_node_name(const struct js_ctx *ctx, TSNode n, struct js_str *ret);

/* The first / nth (0-based) argument of an `arguments` node (comments
 * skipped), or a null node. */
TSNode js_first_arg(const struct js_ctx *ctx, TSNode args);
TSNode js_nth_arg(const struct js_ctx *ctx, TSNode args, uint32_t nth);

/* The node being visited, and its ancestor `levels` above (a null node
 * past the root). */
static inline TSNode js_cur(const struct js_ctx *ctx)
{
    return ctx->path[ctx->depth];
}

static inline TSNode js_up(const struct js_ctx *ctx, size_t levels)
{
    return levels <= ctx->depth ? ctx->path[ctx->depth - levels] : (TSNode){0};
}

static inline int js_is(TSNode n, TSSymbol s)
{
    return !ts_node_is_null(n) && sg_ts_symbol(n) == s;
}

static inline int js_name_is(const struct js_str *s, const char *name)
{
    return !s->truncated && strcmp(s->buf, name) == 0;
}

/* Policy name sets, through the filters js_ctx_init_filters() built. */
int js_is_forbidden_name(const struct js_ctx *ctx, const struct js_str *name);
int js_is_forbidden_attr(const struct js_ctx *ctx, const struct js_str *name);
int js_is_denied_dunder(const struct js_ctx *ctx, const struct js_str *name);

#endif
