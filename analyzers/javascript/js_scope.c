/* js_scope.c - what `this` and `arguments` are where they are used
 * (js_scope.h).
 *
 * Node wraps a CommonJS module in
 *   function (exports, require, module, __filename, __dirname) { ... }
 * so at the top level (and in arrow functions there) `arguments` is that
 * wrapper's: arguments[1] is `require`. And in sloppy-mode code `this` in a
 * plain function called without a receiver is the global object. Class
 * bodies and "use strict" code are strict, where it is undefined.
 */
#include "js_scope.h"
#include "ts_node.h"

#include <string.h>

#define USE_STRICT "use strict"
/* Statements of a directive prologue looked at: "use strict" further down
 * a longer prologue is missed (the code is then treated as sloppy, which
 * only rejects more), and a body of many strings costs nothing. */
#define DIRECTIVES_MAX 8

/* Functions with their own `this` and `arguments` (not arrows). */
static int is_function_like(const struct js_syms *sy, TSNode n)
{
    TSSymbol s = sg_ts_symbol(n);
    return s == sy->function_declaration || s == sy->function_expression ||
           s == sy->generator_function || s == sy->generator_function_declaration ||
           s == sy->method_definition;
}

/* 1 when key is the name/key of member (a method, a field, a pair): it
 * starts where the member does, or right after `static`/`get`/`async`. */
static int is_head_of_member(const struct js_ctx *c, TSNode key, TSNode member)
{
    (void)c;
    TSNode k = ts_node_child_by_field_id(member, c->sy->f_name);
    if (ts_node_is_null(k))
        k = ts_node_child_by_field_id(member, c->sy->f_key);
    if (ts_node_is_null(k))
        k = ts_node_child_by_field_id(member, c->sy->f_property);
    return !ts_node_is_null(k) && ts_node_eq(k, key);
}

/* A directive prologue with "use strict" (written without escapes, as the
 * spec requires) at the start of body (a statement block or the program). */
static int has_use_strict(const struct js_ctx *c, TSNode body)
{
    const struct js_syms *sy = c->sy;
    uint32_t nc = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < nc && i < DIRECTIVES_MAX; i++) {
        TSNode st = ts_node_named_child(body, i);
        if (js_is(st, sy->comment) || js_is(st, sy->hash_bang_line))
            continue;
        if (!js_is(st, sy->expression_statement))
            return 0;
        TSNode lit = ts_node_named_child(st, 0);
        if (!js_is(lit, sy->string))
            return 0;
        uint32_t s = ts_node_start_byte(lit), e = ts_node_end_byte(lit);
        if (e - s == strlen(USE_STRICT) + 2 && memcmp(c->src + s + 1, USE_STRICT, e - s - 2) == 0)
            return 1;
    }
    return 0;
}

/* 1 when ancestor level lv is the member (method, field, pair) whose
 * computed key holds the node: that key is evaluated in the scope around
 * the member, so the member (and the class body it sits in) are not where
 * `this` and `arguments` come from. */
static int key_owner(const struct js_ctx *c, size_t lv)
{
    return lv >= 2 && js_is(js_up(c, lv - 1), c->sy->computed_property_name) &&
           is_head_of_member(c, js_up(c, lv - 1), js_up(c, lv));
}

/* Levels to skip above the member at lv whose key holds the node: the
 * member, and the class body or object literal around it. */
static size_t skip_key_owner(const struct js_ctx *c, size_t lv)
{
    return key_owner(c, lv) ? lv + 1 : lv;
}

int js_this_may_be_global(const struct js_ctx *c)
{
    const struct js_syms *sy = c->sy;
    int in_function = 0;
    for (size_t lv = 1; lv <= c->depth; lv++) {
        TSNode a = js_up(c, lv);
        if (key_owner(c, lv)) {
            lv = skip_key_owner(c, lv);
            continue;
        }
        if (js_is(a, sy->class_body))
            return 0;
        if (is_function_like(sy, a)) {
            if (has_use_strict(c, ts_node_child_by_field_id(a, sy->f_body)))
                return 0;
            in_function = 1;
        }
    }
    /* at the top level `this` is module.exports */
    return in_function && !has_use_strict(c, c->path[0]);
}

int js_in_module_scope(const struct js_ctx *c)
{
    for (size_t lv = 1; lv <= c->depth; lv++) {
        if (key_owner(c, lv)) {
            lv = skip_key_owner(c, lv);
            continue;
        }
        if (is_function_like(c->sy, js_up(c, lv)))
            return 0;
    }
    return 1;
}
