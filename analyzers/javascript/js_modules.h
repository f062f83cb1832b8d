/* js_modules.h - module loading and string-evaluating timer rules of the
 * JavaScript analyzer (js_modules.c). */
#ifndef SG_JS_MODULES_H
#define SG_JS_MODULES_H

#include "js_ctx.h"

/* require(...), import(...), import/export ... from, and the
 * timer functions that evaluate a string argument. */
void js_check_call(struct js_ctx *ctx, TSNode call);
void js_check_module_source(struct js_ctx *ctx, TSNode stmt);

#endif
