/* js_scope.h - what `this` and `arguments` are at the current node
 * (js_scope.c). */
#ifndef SG_JS_SCOPE_H
#define SG_JS_SCOPE_H

#include "js_ctx.h"

int js_this_may_be_global(const struct js_ctx *ctx);
int js_in_module_scope(const struct js_ctx *ctx);

#endif
