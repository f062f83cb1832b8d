/* js_rules.h - the JavaScript analyzer's policy rules, applied node by node
 * during the tree walk in javascript.c. Private to the JavaScript analyzer.
 *
 * The walk keeps the path from the root to the current node, so a rule can
 * look at a node's ancestors without ts_node_parent(), which re-walks the
 * tree from the root.
 */
#ifndef SG_JS_RULES_H
#define SG_JS_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "analyze.h"
#include "js_lex.h"
#include "js_syms.h"
#include "policy.h"
#include "violation.h"

#define JS_ALIAS_MAX 32      /* recorded aliases of objects with forbidden members */
#define JS_ALIAS_NAME_MAX 128 /* bytes of an alias name or target (SG_POLICY_ITEM_MAX) */
#define JS_CHAIN_MAX 16      /* member accesses in one resolved name (a.b.c...) */
#define JS_TAINT_MAX 16      /* names bound to a forbidden property name */
#define JS_ARGS_SCAN_MAX 16  /* children of an argument list looked at for one argument */

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
    TSSymbol sym;    /* ts_node_symbol(path[depth]) */
    struct js_name_filter names_filter, attrs_filter; /* forbidden_names, _attributes */
    struct js_alias aliases[JS_ALIAS_MAX];
    size_t n_aliases;
    struct js_taint taints[JS_TAINT_MAX];
    size_t n_taints;
    struct js_consts *consts; /* string bindings, js_consts.c (owned) */
    int second_pass;   /* second walk: only uses of aliases and tainted names */
    int stop;          /* a fail-closed rule fired: end the walk */
    int err;           /* first internal error (-ENOMEM) */
};

/* Build the filters from ctx->lp (once per check). */
void js_rules_init(struct js_ctx *ctx);

/* Apply every rule to ctx->path[ctx->depth]. */
void js_rules_visit(struct js_ctx *ctx);

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
    return !ts_node_is_null(n) && ts_node_symbol(n) == s;
}

static inline int js_name_is(const struct js_str *s, const char *name)
{
    return !s->truncated && strcmp(s->buf, name) == 0;
}

/* Policy name sets (js_rules.c). */
int js_is_forbidden_attr(const struct js_ctx *ctx, const struct js_str *name);
int js_is_denied_dunder(const struct js_ctx *ctx, const struct js_str *name);

/* js_names.c: resolved names, aliases and tainted constants. */
/* Split a member chain a.b["c"].d into its root identifier and ".b.c.d";
 * -1 when a part is computed or the root is not an identifier. */
int js_chain_of(struct js_ctx *ctx, TSNode n, TSNode *ret_root, struct js_str *ret_suffix);
/* Report the chain n (or `root + suffix`) when it resolves to a forbidden call. */
void js_check_chain(struct js_ctx *ctx, TSNode n);
void js_check_chain_name(struct js_ctx *ctx, TSNode at, TSNode root, const struct js_str *suffix);
/* `name = value` (declaration or assignment): record an alias or a taint. */
void js_record_binding(struct js_ctx *ctx, TSNode name, TSNode value);
/* The forbidden property name an identifier was bound to, or NULL. */
const char *js_tainted_value(const struct js_ctx *ctx, TSNode ident);

/* js_consts.c: constant propagation through bindings. Every `name =
 * <string-like expression>` is recorded in the first walk; after it,
 * js_consts_finish() folds each binding through the others (`const a =
 * "constr"; const b = a + "uctor"`), taints names whose value is a forbidden
 * property name, and re-folds the computed keys and timer arguments the
 * first walk could not fold. */
enum js_defer_kind { JS_DEFER_KEY, JS_DEFER_TIMER };
void js_consts_record(struct js_ctx *ctx, TSNode name, TSNode value);
void js_consts_defer(struct js_ctx *ctx, TSNode expr, enum js_defer_kind kind);
/* Returns 1 when a second walk is needed for names whose value was too
 * complex to fold (js_consts_is_complex). */
int js_consts_finish(struct js_ctx *ctx);
int js_consts_is_complex(const struct js_ctx *ctx, TSNode ident);
void js_consts_free(struct js_consts *consts);
/* js_names.c: taint `name` with a forbidden property name found later. */
void js_taint_name(struct js_ctx *ctx, TSNode name, TSNode at, const struct js_str *value);

/* js_scope.c: what `this` and `arguments` are at the current node. */
int js_this_may_be_global(const struct js_ctx *ctx);
int js_in_module_scope(const struct js_ctx *ctx);

/* js_modules.c: require(...), import(...), import/export ... from, and the
 * timer functions that evaluate a string argument. */
void js_check_call(struct js_ctx *ctx, TSNode call);
void js_check_module_source(struct js_ctx *ctx, TSNode stmt);

#endif
