/* js_names.h - resolved names, aliases and tainted constants of the JavaScript
 * analyzer (js_names.c).
 *
 * js_names and js_consts call each other, a genuine mutual recursion of one
 * analysis: recording a binding folds it as a constant (js_consts_record),
 * and a folded constant that spells a forbidden property taints its name
 * (js_taint_name). */
#ifndef SG_JS_NAMES_H
#define SG_JS_NAMES_H

#include "js_ctx.h"

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

/* Taint `name` with a forbidden property name found later (js_consts.c,
 * after folding). */
void js_taint_name(struct js_ctx *ctx, TSNode name, TSNode at, const struct js_str *value);

#endif
