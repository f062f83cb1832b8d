/* js_consts.h - constant propagation through bindings in the JavaScript analyzer
 * (js_consts.c). Calls back into js_names.h (js_taint_name): see there. */
#ifndef SG_JS_CONSTS_H
#define SG_JS_CONSTS_H

#include "js_ctx.h"

/* Constant propagation through bindings. Every `name =
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

#endif
