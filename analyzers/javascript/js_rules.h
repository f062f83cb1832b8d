/* js_rules.h - the JavaScript analyzer's policy rules, applied node by node
 * during the tree walk in javascript.c. Private to the JavaScript analyzer.
 * The rules call into js_names, js_consts, js_modules and js_scope; the
 * context they share is js_ctx.h.
 */
#ifndef SG_JS_RULES_H
#define SG_JS_RULES_H

#include "js_ctx.h"

/* Apply every rule to ctx->path[ctx->depth]. */
void js_rules_visit(struct js_ctx *ctx);

#endif
