/* js_fluent.h - when `return this` in a method of an object literal cannot
 * hand out the global object (internal to the JavaScript analyzer).
 */
#ifndef SG_JS_FLUENT_H
#define SG_JS_FLUENT_H

#include "js_ctx.h"

/* 1 when the current node is the `this` of `return this` in a plain method
 * of an object literal that initialises a top-level const, and no use of
 * that const in the program can detach a method (js_fluent.c says how). */
int js_fluent_return_this(struct js_ctx *c);

#endif
