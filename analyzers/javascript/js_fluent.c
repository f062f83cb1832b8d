/* js_fluent.c - `return this` in a method of an object literal (js_fluent.h).
 *
 * In sloppy code a method called without a receiver gets the global object
 * as `this`, so `return this` hands it out. A method is called without a
 * receiver only once it is detached from its object: read as a value
 * (`const f = o.m`, `[o.m][0]()`, `o.m.call(null)`), or reached through the
 * object itself handed elsewhere (`f(o)`, `Object.values(o)`, `{...o}`,
 * exports). So `return this` is accepted when the object literal is a
 * top-level `const` whose every use the analysis sees and none detaches a
 * method: each reference is `o.name` (a method only as the callee of a
 * call), and what a method call returns (which may be `o` again) is itself
 * only discarded, read for a data property, or used for a further method
 * call. Anything else, or anything past the bounds, keeps the rejection.
 */
#include "js_fluent.h"
#include "ts_node.h"

#include <stdio.h>
#include <string.h>

/* Nodes one whole-program scan visits, and calls in one chain. */
#define FLUENT_SCAN_NODES 400000u
#define FLUENT_CHAIN_MAX 256 /* calls in one chain o.a().b().c()... */

static int type_is(TSNode n, const char *t)
{
    return !ts_node_is_null(n) && strcmp(sg_ts_type(n), t) == 0;
}

static int name_eq(const struct js_ctx *c, TSNode n, const struct js_str *want)
{
    struct js_str s;
    js_node_name(c, n, &s);
    return !s.truncated && !want->truncated && s.len == want->len &&
           memcmp(s.buf, want->buf, s.len) == 0;
}

/* Moves cur to the next node in document order (into the children first);
 * 0 past the last node under the cursor's root. */
static int next_preorder(TSTreeCursor *cur)
{
    if (ts_tree_cursor_goto_first_child(cur))
        return 1;
    while (!ts_tree_cursor_goto_next_sibling(cur))
        if (!ts_tree_cursor_goto_parent(cur))
            return 0;
    return 1;
}

/* What o's key `prop` is: a method that may return o (a `return this`
 * anywhere in it), another method, anything else, or not o's own key. */
enum member_kind { MK_NONE, MK_METHOD_SELF, MK_METHOD, MK_OTHER };

/* Any `return this` in the subtree of fn (nested functions too: wider than
 * needed, which only counts more methods as returning o). */
static int returns_this(const struct js_ctx *c, TSNode fn)
{
    TSTreeCursor cur = ts_tree_cursor_new(fn);
    int found = 0;
    unsigned visited = 0;
    for (int more = ts_tree_cursor_goto_first_child(&cur); more && !found;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (++visited > FLUENT_SCAN_NODES) {
            found = 1;
            break;
        }
        found = type_is(n, "return_statement") && js_is(ts_node_named_child(n, 0), c->sy->this_);
        more = next_preorder(&cur);
    }
    ts_tree_cursor_delete(&cur);
    return found;
}

static enum member_kind member_of(const struct js_ctx *c, TSNode o, TSNode prop)
{
    const struct js_syms *sy = c->sy;
    uint32_t n = ts_node_named_child_count(o);
    enum member_kind k = MK_NONE;
    struct js_str want;
    js_node_name(c, prop, &want);
    for (uint32_t i = 0; i < n; i++) {
        TSNode m = ts_node_named_child(o, i), key = {0}, fn = {0};
        if (js_is(m, sy->method_definition)) {
            key = ts_node_child_by_field_id(m, sy->f_name);
            /* a getter/setter is called with o as receiver when read */
            TSNode first = ts_node_child(m, 0);
            if (!type_is(first, "get") && !type_is(first, "set"))
                fn = m;
        } else if (js_is(m, sy->pair)) {
            key = ts_node_child_by_field_id(m, sy->f_key);
            TSNode v = ts_node_child_by_field_id(m, sy->f_value);
            if (js_is(v, sy->function_expression) || js_is(v, sy->generator_function))
                fn = v;
        }
        if (ts_node_is_null(key) || !js_is(key, sy->property_identifier) || !name_eq(c, key, &want))
            continue;
        enum member_kind mk = ts_node_is_null(fn)   ? MK_OTHER
                              : returns_this(c, fn) ? MK_METHOD_SELF
                                                    : MK_METHOD;
        if (k == MK_NONE || mk < k)
            k = mk; /* a key given twice: the kind that needs the most care */
    }
    return k;
}

static int member_safe(const struct js_ctx *c, TSNode o, TSNode m);

/* The value of call, a call of o's key prop, goes nowhere it could leak:
 * only a method that returns this (or a key o does not have, such as
 * valueOf) gives o back, and then it may only be discarded, read for a
 * data property or called on again. */
static int result_safe(const struct js_ctx *c, TSNode o, TSNode call, TSNode prop)
{
    const struct js_syms *sy = c->sy;
    for (int i = 0; i < FLUENT_CHAIN_MAX; i++) {
        enum member_kind k = member_of(c, o, prop);
        if (k == MK_METHOD || k == MK_OTHER)
            return 1; /* not o */
        TSNode p = ts_node_parent(call);
        if (js_is(p, sy->expression_statement))
            return 1; /* discarded */
        if (!js_is(p, sy->member_expression) || !ts_node_eq(js_head(p), call))
            return 0;
        TSNode pp = ts_node_parent(p);
        if (!(js_is(pp, sy->call_expression) && ts_node_eq(js_head(pp), p)))
            return member_safe(c, o, p);
        call = pp; /* o.a().b(): b's result, next */
        prop = js_tail(p);
        if (!js_is(prop, sy->property_identifier))
            return 0;
    }
    return 0;
}

/* m is `<o>.name` (o itself, or `this` in one of its methods). */
static int member_safe(const struct js_ctx *c, TSNode o, TSNode m)
{
    const struct js_syms *sy = c->sy;
    TSNode prop = js_tail(m), p = ts_node_parent(m);
    if (!js_is(prop, sy->property_identifier))
        return 0; /* o.#x cannot happen on a literal; anything odd fails */
    if (js_is(p, sy->call_expression) && ts_node_eq(js_head(p), m))
        return result_safe(c, o, p, prop); /* o.valueOf() returns o too */
    if (js_is(p, sy->assignment_expression) &&
        ts_node_eq(ts_node_child_by_field_id(p, sy->f_left), m))
        return 1;
    /* a data read, or a method left behind */
    enum member_kind k = member_of(c, o, prop);
    return k != MK_METHOD && k != MK_METHOD_SELF;
}

/* The method of o that `this` (node t) belongs to, if any. */
static int this_of(const struct js_ctx *c, TSNode o, TSNode t)
{
    const struct js_syms *sy = c->sy;
    for (TSNode n = ts_node_parent(t); !ts_node_is_null(n); n = ts_node_parent(n)) {
        if (js_is(n, sy->arrow_function))
            continue;
        if (js_is(n, sy->method_definition))
            return ts_node_eq(ts_node_parent(n), o);
        if (js_is(n, sy->function_expression) || js_is(n, sy->function_declaration) ||
            js_is(n, sy->generator_function) || js_is(n, sy->generator_function_declaration) ||
            js_is(n, sy->class_body))
            return js_is(n, sy->function_expression) && js_is(ts_node_parent(n), sy->pair) &&
                   ts_node_eq(ts_node_parent(ts_node_parent(n)), o);
    }
    return 0;
}

/* Consumers that see the object without handing its methods to anyone:
 * they read its keys, or print it. */
static const char *const SAFE_CONSUMERS[] = {"Object.keys",  "JSON.stringify", "console.log",
                                             "console.info", "console.warn",   "console.error",
                                             "console.debug"};
static const char *const CONSUMER_ROOTS[] = {"Object", "JSON", "console"};

/* n (the object) is an argument of a SAFE_CONSUMERS call; JSON.stringify
 * only alone (a replacer receives every value, methods included). */
static int consumer_arg(const struct js_ctx *c, TSNode n)
{
    const struct js_syms *sy = c->sy;
    TSNode args = ts_node_parent(n), call = ts_node_parent(args);
    if (!js_is(args, sy->arguments) || !js_is(call, sy->call_expression))
        return 0;
    TSNode fn = js_head(call);
    if (!js_is(fn, sy->member_expression) || !js_is(js_head(fn), sy->identifier))
        return 0;
    struct js_str root, prop;
    js_node_name(c, js_head(fn), &root);
    js_node_name(c, js_tail(fn), &prop);
    char full[2 * JS_STR_MAX + 2];
    snprintf(full, sizeof(full), "%s.%s", root.buf, prop.buf);
    for (size_t i = 0; i < sizeof(SAFE_CONSUMERS) / sizeof(*SAFE_CONSUMERS); i++)
        if (!strcmp(full, SAFE_CONSUMERS[i]))
            return strcmp(full, "JSON.stringify") != 0 || ts_node_named_child_count(args) == 1;
    return 0;
}

/* An identifier named like a consumer's root: only `Root.name` reads keep
 * them the builtins (no binding, no replaced method). */
static int consumer_root_intact(const struct js_ctx *c, TSNode n)
{
    const struct js_syms *sy = c->sy;
    struct js_str s;
    js_node_name(c, n, &s);
    for (size_t i = 0; i < sizeof(CONSUMER_ROOTS) / sizeof(*CONSUMER_ROOTS); i++) {
        if (strcmp(s.buf, CONSUMER_ROOTS[i]) != 0)
            continue;
        TSNode p = ts_node_parent(n), pp = ts_node_parent(p);
        if (!js_is(n, sy->identifier) || !js_is(p, sy->member_expression) ||
            !ts_node_eq(js_head(p), n))
            return 0;
        return !(js_is(pp, sy->assignment_expression) &&
                 ts_node_eq(ts_node_child_by_field_id(pp, sy->f_left), p)) &&
               !js_is(pp, sy->update_expression);
    }
    return 1;
}

/* One reference: the identifier x (named like the binding) or a `this`. */
static int use_safe(const struct js_ctx *c, TSNode o, TSNode decl_name, TSNode n)
{
    const struct js_syms *sy = c->sy;
    if (ts_node_eq(n, decl_name))
        return 1;
    if (js_is(n, sy->this_) && !this_of(c, o, n))
        return 1; /* another function's this: the ordinary rule decides */
    TSNode p = ts_node_parent(n);
    if (js_is(n, sy->this_) && type_is(p, "return_statement"))
        return 1; /* a method returning o: its calls are result_safe()'d */
    if (js_is(p, sy->member_expression) && ts_node_eq(js_head(p), n))
        return member_safe(c, o, p);
    if (js_is(n, sy->identifier) && consumer_arg(c, n))
        return 1;
    /* `this` as a value elsewhere is rejected by the ordinary rule; as a
     * subscript object (`this[k]`) it is checked as computed access */
    return js_is(n, sy->this_);
}

static int scan_program(struct js_ctx *c, TSNode o, TSNode decl_name)
{
    const struct js_syms *sy = c->sy;
    struct js_str x;
    js_node_name(c, decl_name, &x);
    TSTreeCursor cur = ts_tree_cursor_new(c->path[0]);
    int ok = !x.truncated;
    unsigned visited = 0;
    for (int more = 1; more && ok;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (++visited > FLUENT_SCAN_NODES || ++c->fluent_scanned > JS_FLUENT_SCAN_TOTAL) {
            ok = 0;
            break;
        }
        int ref = ((js_is(n, sy->identifier) || js_is(n, sy->shorthand_property_identifier) ||
                    js_is(n, sy->shorthand_property_identifier_pattern)) &&
                   name_eq(c, n, &x)) ||
                  js_is(n, sy->this_);
        if (ref && !use_safe(c, o, decl_name, n))
            ok = 0;
        if ((js_is(n, sy->identifier) || js_is(n, sy->shorthand_property_identifier) ||
             js_is(n, sy->shorthand_property_identifier_pattern)) &&
            !consumer_root_intact(c, n))
            ok = 0;
        more = next_preorder(&cur);
    }
    ts_tree_cursor_delete(&cur);
    return ok;
}

int js_fluent_return_this(struct js_ctx *c)
{
    const struct js_syms *sy = c->sy;
    TSNode t = js_cur(c), ret = js_up(c, 1);
    if (!js_is(t, sy->this_) || !type_is(ret, "return_statement"))
        return 0;
    /* the nearest function (arrows included) is a plain method of a literal */
    TSNode m = ts_node_parent(ret);
    while (!ts_node_is_null(m) && !js_is(m, sy->method_definition) &&
           !js_is(m, sy->arrow_function) && !js_is(m, sy->function_expression) &&
           !js_is(m, sy->function_declaration) && !js_is(m, sy->generator_function) &&
           !js_is(m, sy->generator_function_declaration) && !js_is(m, sy->class_body))
        m = ts_node_parent(m);
    TSNode first = js_is(m, sy->method_definition) ? ts_node_child(m, 0) : (TSNode){0};
    if (ts_node_is_null(first) || type_is(first, "get") || type_is(first, "set") ||
        type_is(first, "async") || type_is(first, "*"))
        return 0;
    TSNode o = ts_node_parent(m), d = ts_node_parent(o), decl = ts_node_parent(d);
    if (!js_is(o, sy->object) || !js_is(d, sy->variable_declarator) ||
        !ts_node_eq(ts_node_child_by_field_id(d, sy->f_value), o) ||
        !type_is(decl, "lexical_declaration") || !type_is(ts_node_child(decl, 0), "const") ||
        !ts_node_eq(ts_node_parent(decl), c->path[0]))
        return 0;
    TSNode name = ts_node_child_by_field_id(d, sy->f_name);
    if (!js_is(name, sy->identifier))
        return 0;
    uint32_t key = ts_node_start_byte(o);
    for (size_t i = 0; i < c->n_fluent; i++)
        if (c->fluent[i].start == key)
            return c->fluent[i].ok;
    int ok = scan_program(c, o, name);
    if (c->n_fluent < JS_FLUENT_CACHED) {
        c->fluent[c->n_fluent].start = key;
        c->fluent[c->n_fluent++].ok = (uint8_t)ok;
    }
    return ok;
}
