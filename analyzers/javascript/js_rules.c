/* js_rules.c - the JavaScript analysis rules (js_rules.h).
 *
 * What the rules rely on (the contract with javascript.c): the tree has no
 * ERROR or MISSING node, and ctx->path holds every ancestor of the node
 * being visited.
 *
 * Shadowing is not tracked: a local binding named like a forbidden global
 * (`function f(process) {}`) is rejected like the global itself. Tracking
 * scopes correctly (var hoisting, sloppy-mode functions in blocks, `with`,
 * direct eval) is where analyzers go wrong; a rename is cheap.
 */
#include "js_rules.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "js_consts.h"
#include "js_context.h"
#include "js_fold.h"
#include "js_modules.h"
#include "js_fluent.h"
#include "js_names.h"
#include "js_scope.h"
#include "rules.h"
#include "ts_node.h"

#define SHOWN "%.80s" /* names in messages are cut, the snippet has the rest */

static void check_error_value(struct js_ctx *c, TSNode n);

static TSNode field(const struct js_ctx *c, TSNode n, TSFieldId f)
{
    (void)c;
    return ts_node_child_by_field_id(n, f);
}

/* ---- property names ------------------------------------------------- */

static const char *why_forbidden(const struct js_str *name)
{
    static const char *const why[][2] = {
        {"constructor", " (reaches the Function constructor)"},
        {"__proto__", " (reaches the prototype chain)"},
        {"caller", " (reaches the calling function)"},
        {"callee", " (reaches the running function)"},
        {"prepareStackTrace", " (exposes stack frames and their functions)"},
        {"mainModule", " (reaches the module loader)"},
    };
    for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
        if (js_name_is(name, why[i][0]))
            return why[i][1];
    return "";
}

/* A property read (or destructured) by this name, on any object. Returns
 * 1 when it was reported. */
static int check_property(struct js_ctx *c, TSNode at, const struct js_str *name)
{
    if (name->truncated)
        return 0; /* longer than any policy entry */
    if (js_is_forbidden_attr(c, name))
        js_report(c, at, SG_RULE_ATTRIBUTE_FORBIDDEN,
                  "access to property '" SHOWN "' is forbidden%s", name->buf, why_forbidden(name));
    else if (js_is_denied_dunder(c, name))
        js_report(c, at, SG_RULE_ATTRIBUTE_DUNDER,
                  "access to dunder property '" SHOWN "' is forbidden", name->buf);
    else
        return 0;
    return 1;
}

/* ---- plain names -------------------------------------------------------- */

/* 1 when n is the first child of parent: the callee of a call, the object
 * of a member access, the target of a declarator or an assignment (every
 * other child starts later). */
static int is_head_of(TSNode n, TSNode parent)
{
    return !ts_node_is_null(parent) && ts_node_start_byte(n) == ts_node_start_byte(parent);
}

/* `module` is allowed only as module.exports / module["exports"]. */
static int is_module_exports(struct js_ctx *c, TSNode n, TSNode parent)
{
    struct js_str prop;
    if (!is_head_of(n, parent))
        return 0;
    if (js_is(parent, c->sy->member_expression)) {
        TSNode p = js_tail(parent);
        js_node_name(c, p, &prop);
        return js_is(p, c->sy->property_identifier) && js_name_is(&prop, "exports");
    }
    return js_is(parent, c->sy->subscript_expression) &&
           js_fold(c->sy, c->src, field(c, parent, c->sy->f_index), &prop) == JS_FOLD_STRING &&
           js_name_is(&prop, "exports");
}

/* A name used as a variable. Bare names resolve on the global object when
 * nothing declares them, and the global object inherits from
 * Object.prototype: a plain `constructor` is Object, whose constructor is
 * Function. So forbidden attribute names are forbidden as plain names too. */
static void check_plain_name(struct js_ctx *c, TSNode n, const struct js_str *name)
{
    if (name->truncated)
        return;
    if (js_is_forbidden_name(c, name) && sg_strset_has(&c->lp->network_names, name->buf))
        js_report(c, n, SG_RULE_NETWORK_DISABLED, "use of '" SHOWN "': %s", name->buf,
                  SG_NETWORK_DISABLED_HOW);
    else if (js_is_forbidden_name(c, name))
        js_report(c, n, SG_RULE_NAME_FORBIDDEN, "use of '" SHOWN "' is forbidden", name->buf);
    else if (js_is_forbidden_attr(c, name) || js_is_denied_dunder(c, name))
        js_report(c, n,
                  js_is_forbidden_attr(c, name) ? SG_RULE_ATTRIBUTE_FORBIDDEN
                                                : SG_RULE_ATTRIBUTE_DUNDER,
                  "name '" SHOWN "' is forbidden (a plain name reads the global object's "
                  "property of that name)",
                  name->buf);
}

static void check_identifier(struct js_ctx *c)
{
    struct js_str name;
    TSNode n = js_cur(c), parent = js_up(c, 1);
    js_node_name(c, n, &name);
    if (js_name_is(&name, "let")) { /* js_context.h: a name to tree-sitter, a keyword to V8 */
        js_report(c, n, SG_RULE_CONTEXT_KEYWORD,
                  "'let' read as a name: Node reads 'let', a line break and a name as a "
                  "declaration, the analyzer as the name 'let' and another statement (keep the "
                  "declared name on the line of 'let')");
        return;
    }
    if (js_name_is(&name, "require")) {
        if (!(js_is(parent, c->sy->call_expression) && is_head_of(n, parent)))
            js_report(c, n, SG_RULE_NAME_FORBIDDEN,
                      "'require' may only be called directly, with a constant module name");
        return;
    }
    if (js_name_is(&name, "module")) {
        if (!is_module_exports(c, n, parent))
            js_report(
                c, n, SG_RULE_NAME_FORBIDDEN,
                "only 'module.exports' may be used; 'module' itself reaches the module loader");
        return;
    }
    if (js_name_is(&name, "Error")) {
        check_error_value(c, n);
        return;
    }
    if (js_name_is(&name, "arguments") && js_in_module_scope(c)) {
        js_report(c, n, SG_RULE_NAME_FORBIDDEN,
                  "'arguments' outside a function is the module wrapper's (its second "
                  "element is 'require')");
        return;
    }
    check_plain_name(c, n, &name);
}

/* `this` as a value (not this.x): the global object in a plain sloppy
 * function, which would expose every global under names we cannot see. */
static void check_this(struct js_ctx *c)
{
    TSNode n = js_cur(c), parent = js_up(c, 1);
    if ((js_is(parent, c->sy->member_expression) || js_is(parent, c->sy->subscript_expression)) &&
        is_head_of(n, parent))
        return; /* this.x is checked as a member access, this[k] as a computed one */
    if (js_this_may_be_global(c) && !js_fluent_return_this(c))
        js_report(c, n, SG_RULE_NAME_FORBIDDEN,
                  "'this' as a value in a plain function may be the global object (use a class, "
                  "an arrow function or \"use strict\")");
}

/* ---- member access ------------------------------------------------------ */

/* 1 when obj is `this` and may be the global object: its properties are
 * then the globals, and a forbidden global must not be read as one. */
static int is_global_this(const struct js_ctx *c, TSNode obj)
{
    while (js_is(obj, c->sy->parenthesized_expression) && ts_node_named_child_count(obj) == 1)
        obj = ts_node_named_child(obj, 0);
    return js_is(obj, c->sy->this_) && js_this_may_be_global(c);
}

static void check_plain_name(struct js_ctx *c, TSNode n, const struct js_str *name);

static void check_member(struct js_ctx *c)
{
    struct js_str name;
    TSNode n = js_cur(c);
    TSNode p = js_tail(n);
    if (js_is(p, c->sy->property_identifier)) {
        js_node_name(c, p, &name);
        if (!check_property(c, p, &name) && is_global_this(c, js_head(n)))
            check_plain_name(c, p, &name);
    }
    js_check_chain(c, n);
}

/* A key expression whose value is always a number: arr[i + 1] cannot
 * spell a name however i was computed... unless `+` meets a string, so `+`
 * counts only between numeric operands. */
static int numeric_expr(const struct js_ctx *c, TSNode n, int budget)
{
    const struct js_syms *sy = c->sy;
    if (budget <= 0)
        return 0;
    if (js_is(n, sy->number) || js_is(n, sy->update_expression))
        return 1;
    if (js_is(n, sy->parenthesized_expression))
        return ts_node_named_child_count(n) == 1 &&
               numeric_expr(c, ts_node_named_child(n, 0), budget - 1);
    TSNode op = field(c, n, sy->f_operator);
    if (js_is(n, sy->unary_expression))
        return js_is(op, sy->minus) || js_is(op, sy->plus) || js_is(op, sy->tilde);
    if (!js_is(n, sy->binary_expression))
        return 0;
    if (js_is(op, sy->plus))
        return numeric_expr(c, field(c, n, sy->f_left), budget - 1) &&
               numeric_expr(c, field(c, n, sy->f_right), budget - 1);
    for (int i = 0; i < JS_NUMERIC_OPS; i++)
        if (js_is(op, sy->numeric_ops[i]))
            return 1;
    return 0;
}

/* Objects on which a computed name is never accepted, whatever the policy:
 * they hold the runtime's internals under names we cannot see. */
static const char *sensitive_object(const struct js_ctx *c, TSNode obj)
{
    static const char *const globals[] = {"globalThis", "global", "process",
                                          "Reflect",    "Error",  "Object"};
    struct js_str name;
    while (js_is(obj, c->sy->parenthesized_expression) && ts_node_named_child_count(obj) == 1)
        obj = ts_node_named_child(obj, 0);
    if (js_is(obj, c->sy->this_))
        return js_this_may_be_global(c) ? "this" : NULL;
    if (!js_is(obj, c->sy->identifier))
        return NULL;
    js_node_name(c, obj, &name);
    for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
        if (js_name_is(&name, globals[i]))
            return globals[i];
    return NULL;
}

/* Expressions whose value is an object: as a key, its toString (or the
 * elements' strings) decides the name. */
static int is_object_value(const struct js_ctx *c, TSNode n)
{
    const struct js_syms *sy = c->sy;
    while (js_is(n, sy->parenthesized_expression) && ts_node_named_child_count(n) == 1)
        n = ts_node_named_child(n, 0);
    return js_is(n, sy->object) || js_is(n, sy->array) || js_is(n, sy->new_expression) ||
           js_is(n, sy->function_expression) || js_is(n, sy->arrow_function) ||
           js_is(n, sy->class_);
}

/* A property name computed by `key` (a subscript index or a computed key
 * of a destructuring pattern) on obj (null for patterns). */
static void check_computed_key(struct js_ctx *c, TSNode key, TSNode obj)
{
    struct js_str v;
    if (c->second_pass) {
        const char *tainted = js_tainted_value(c, key);
        if (tainted)
            js_report(c, key, SG_RULE_ATTRIBUTE_FORBIDDEN,
                      "computed property name holds '" SHOWN "', which is forbidden", tainted);
        else if (js_consts_is_complex(c, key))
            js_report(c, key, SG_RULE_REFLECTION_DYNAMIC,
                      "computed property name is too complex to check");
        return;
    }
    enum js_fold_kind k = js_fold(c->sy, c->src, key, &v);
    if (k == JS_FOLD_DYNAMIC && !js_is(key, c->sy->identifier))
        js_consts_defer(c, key, JS_DEFER_KEY); /* may fold through constant names */
    if (k == JS_FOLD_STRING || k == JS_FOLD_OTHER) {
        if (!check_property(c, key, &v) && !ts_node_is_null(obj) && is_global_this(c, obj))
            check_plain_name(c, key, &v);
        return;
    }
    if (k == JS_FOLD_DYNAMIC && is_object_value(c, key)) {
        js_report(c, key, SG_RULE_REFLECTION_DYNAMIC,
                  "an object or array as a property name is converted by its toString, "
                  "which the check cannot follow");
        return;
    }
    if (k == JS_FOLD_NUMBER || k == JS_FOLD_NUMBER_INEXACT)
        return;
    const char *sensitive = ts_node_is_null(obj) ? NULL : sensitive_object(c, obj);
    if (k == JS_FOLD_COMPLEX)
        js_report(c, key, SG_RULE_REFLECTION_DYNAMIC,
                  "computed property name is too complex to check");
    else if (sensitive)
        js_report(c, key, SG_RULE_REFLECTION_DYNAMIC,
                  "computed property of '%s' is forbidden (it may reach the runtime's internals)",
                  sensitive);
    else if (c->lp->deny_dynamic_attributes && !numeric_expr(c, key, JS_FOLD_DEPTH_MAX))
        js_report(c, key, SG_RULE_REFLECTION_DYNAMIC,
                  "property name computed at run time is forbidden by this policy "
                  "(use a constant name, a numeric index or a Map)");
}

static void check_subscript(struct js_ctx *c)
{
    TSNode n = js_cur(c);
    check_computed_key(c, field(c, n, c->sy->f_index), js_head(n));
    js_check_chain(c, n);
}

/* Reflective reads and writes by name, `Reflect.get(o, "constructor")`,
 * `Object.getOwnPropertyDescriptor(o, k)`: the name argument is checked as
 * the key of `o[name]` would be. */
static void check_reflective_call(struct js_ctx *c, TSNode call)
{
    static const char *const by_name[] = {"Reflect.get",
                                          "Reflect.set",
                                          "Reflect.has",
                                          "Reflect.getOwnPropertyDescriptor",
                                          "Reflect.defineProperty",
                                          "Reflect.deleteProperty",
                                          "Object.getOwnPropertyDescriptor",
                                          "Object.defineProperty"};
    TSNode fn = js_head(call), args = js_tail(call), obj = js_head(fn), root;
    struct js_str suffix, rootname;
    /* cheap test first: only Reflect.x / Object.x calls qualify */
    if (!js_is(fn, c->sy->member_expression) || !js_is(obj, c->sy->identifier) ||
        !js_is(args, c->sy->arguments))
        return;
    js_node_name(c, obj, &rootname);
    if (!js_name_is(&rootname, "Reflect") && !js_name_is(&rootname, "Object"))
        return;
    if (js_chain_of(c, fn, &root, &suffix) < 0)
        return;
    js_str_append(&rootname, suffix.buf, suffix.len);
    size_t i = 0, n = sizeof(by_name) / sizeof(by_name[0]);
    while (i < n && !js_name_is(&rootname, by_name[i]))
        i++;
    if (i == n)
        return;
    /* arguments: (target, name, ...) */
    TSNode target = js_first_arg(c, args), key = js_nth_arg(c, args, 1);
    if (!ts_node_is_null(key))
        check_computed_key(c, key, target);
}

/* ---- destructuring ------------------------------------------------------ */

/* The value a pattern property destructures: `const {k} = V` / `({k} = V)`
 * where the pattern is `levels` above the current node; null otherwise
 * (parameters, nested patterns, loops). */
static TSNode pattern_source(const struct js_ctx *c, size_t levels)
{
    TSNode pat = js_up(c, levels), holder = js_up(c, levels + 1);
    if (!js_is(pat, c->sy->object_pattern) || !is_head_of(pat, holder))
        return (TSNode){0};
    if (js_is(holder, c->sy->variable_declarator))
        return field(c, holder, c->sy->f_value);
    if (js_is(holder, c->sy->assignment_expression))
        return field(c, holder, c->sy->f_right);
    return (TSNode){0};
}

/* `const {getPrototypeOf: g} = Object` reads Object.getPrototypeOf. */
static void check_pattern_chain(struct js_ctx *c, TSNode at, TSNode source,
                                const struct js_str *key)
{
    TSNode root;
    struct js_str suffix;
    if (ts_node_is_null(source) || !c->lp->forbidden_calls.count ||
        js_chain_of(c, source, &root, &suffix) < 0)
        return;
    js_str_append(&suffix, ".", 1);
    js_str_append(&suffix, key->buf, key->len);
    js_check_chain_name(c, at, root, &suffix);
}

/* `{key: target}` in a pattern: reads property `key` of the source. */
static void check_pair_pattern(struct js_ctx *c)
{
    struct js_str name;
    TSNode key = field(c, js_cur(c), c->sy->f_key);
    if (js_is(key, c->sy->computed_property_name)) {
        if (ts_node_named_child_count(key) >= 1)
            check_computed_key(c, ts_node_named_child(key, 0), (TSNode){0});
        return;
    }
    if (js_is(key, c->sy->property_identifier))
        js_node_name(c, key, &name);
    else if (js_fold(c->sy, c->src, key, &name) != JS_FOLD_STRING)
        return; /* a number key */
    if (!c->second_pass)
        check_property(c, key, &name);
    check_pattern_chain(c, key, pattern_source(c, 1), &name);
}

/* `{key}` / `{key = dflt}` in a pattern: reads `key` and binds it. */
static void check_shorthand_pattern(struct js_ctx *c)
{
    struct js_str name;
    TSNode n = js_cur(c);
    size_t levels = js_is(js_up(c, 1), c->sy->object_assignment_pattern) ? 2 : 1;
    js_node_name(c, n, &name);
    /* one report for `{constructor}`: the read, not also the binding */
    if (!c->second_pass && !check_property(c, n, &name))
        check_plain_name(c, n, &name);
    check_pattern_chain(c, n, pattern_source(c, levels), &name);
}

/* `{__proto__: x}` in an object literal sets the prototype, and
 * `Object.assign(Error, {prepareStackTrace(e, frames) {...}})` installs
 * the stack-trace hook that hands out call sites (and through them the
 * module wrapper function and its `arguments`, which hold `require`).
 * Other keys are definitions, not reads, and stay allowed
 * (`{constructor: 1}`). The key may be a name, a string, a computed
 * constant or a method (pairs and object methods both come here). */
static void check_pair(struct js_ctx *c)
{
    struct js_str name;
    TSNode n = js_cur(c), key = field(c, n, c->sy->f_key);
    if (js_is(n, c->sy->method_definition)) {
        if (!js_is(js_up(c, 1), c->sy->object))
            return; /* a class member */
        key = field(c, n, c->sy->f_name);
    }
    if (js_is(key, c->sy->property_identifier))
        js_node_name(c, key, &name);
    else if (js_is(key, c->sy->computed_property_name) && ts_node_named_child_count(key) >= 1) {
        if (js_fold(c->sy, c->src, ts_node_named_child(key, 0), &name) != JS_FOLD_STRING)
            return;
    } else if (!js_is(key, c->sy->string) || js_fold(c->sy, c->src, key, &name) != JS_FOLD_STRING)
        return;
    if (js_name_is(&name, "__proto__") || js_name_is(&name, "prepareStackTrace"))
        check_property(c, key, &name);
}

/* ---- names as string values -------------------------------------------- */

/* V8's stack-trace hooks: whoever sets Error.prepareStackTrace gets the
 * call sites of every later stack (their functions, `this` values and the
 * module wrapper with `require`). The names are rejected as string values
 * anywhere, so no route that turns a string into a property (fromEntries,
 * defineProperty, a toString key, a descriptor map) can install one. */
static const char *const stack_hooks[] = {"prepareStackTrace", "captureStackTrace"};

static int spells_stack_hook(const struct js_str *v)
{
    for (size_t i = 0; i < sizeof(stack_hooks) / sizeof(*stack_hooks); i++)
        if (strstr(v->buf, stack_hooks[i]))
            return 1;
    return 0;
}

/* `key === "constructor"`, `case "__proto__":`: a plain literal compared
 * with a key (the prototype-pollution guard) names nothing it reads. */
static int is_comparison_operand(const struct js_ctx *c, TSNode n, TSNode parent)
{
    if (!js_is(n, c->sy->string))
        return 0;
    if (js_is(parent, c->sy->binary_expression)) {
        const char *op = sg_ts_type(field(c, parent, c->sy->f_operator));
        return !strcmp(op, "===") || !strcmp(op, "!==") || !strcmp(op, "==") || !strcmp(op, "!=");
    }
    return !strcmp(sg_ts_type(parent), "switch_case");
}

/* A string-valued expression (a literal, a template, a concatenation, a
 * call that folds: join, fromCharCode, ...) that is a forbidden property
 * name or holds a stack-trace hook name: it can only be meant as a key.
 * Object-literal keys are definitions and are checked by check_pair. */
static void check_string_value(struct js_ctx *c, TSNode n)
{
    const struct js_syms *sy = c->sy;
    TSNode parent = js_up(c, 1);
    struct js_str v;
    if ((js_is(parent, sy->pair) || js_is(parent, sy->pair_pattern)) &&
        ts_node_eq(field(c, parent, sy->f_key), n))
        return;
    if (js_is(n, sy->binary_expression) && js_is(parent, sy->binary_expression))
        return; /* the outermost concatenation is folded, once */
    if (js_is(parent, sy->subscript_expression) && ts_node_eq(field(c, parent, sy->f_index), n))
        return; /* a subscript key: checked as one */
    if (js_fold(sy, c->src, n, &v) != JS_FOLD_STRING || v.truncated)
        return;
    if (spells_stack_hook(&v))
        js_report(c, n, SG_RULE_ATTRIBUTE_FORBIDDEN,
                  "string '" SHOWN "' names V8's stack-trace hook (exposes stack frames and their "
                  "functions)",
                  v.buf);
    else if (js_is_forbidden_attr(c, &v) && !is_comparison_operand(c, n, parent))
        js_report(c, n, SG_RULE_ATTRIBUTE_FORBIDDEN,
                  "string '" SHOWN "' spells a forbidden property name%s", v.buf,
                  why_forbidden(&v));
}

/* `Error` receives the stack-trace hook as a property: it may be called,
 * constructed, extended, tested with instanceof or have a named property
 * read (checked as such), never be handed around as a value, where
 * Object.assign, a parameter or an alias could set any property on it. */
static void check_error_value(struct js_ctx *c, TSNode n)
{
    const struct js_syms *sy = c->sy;
    TSNode parent = js_up(c, 1);
    if ((js_is(parent, sy->call_expression) || js_is(parent, sy->member_expression) ||
         js_is(parent, sy->subscript_expression)) &&
        is_head_of(n, parent))
        return;
    if (js_is(parent, sy->new_expression) && ts_node_eq(field(c, parent, sy->f_constructor), n))
        return;
    if (js_is(parent, sy->class_heritage))
        return;
    if (js_is(parent, sy->binary_expression) &&
        js_is(field(c, parent, sy->f_operator), sy->instanceof) &&
        ts_node_eq(field(c, parent, sy->f_right), n))
        return;
    js_report(c, n, SG_RULE_NAME_FORBIDDEN,
              "'Error' used as a value: it may only be called, constructed, extended, tested with "
              "instanceof or have a property read (it holds V8's stack-trace hook)");
}

/* ---- dispatch ----------------------------------------------------------- */

/* The second walk: uses of aliases and of names bound to forbidden
 * property names, wherever they are declared. */
static void visit_second(struct js_ctx *c)
{
    const struct js_syms *sy = c->sy;
    TSNode n = js_cur(c);
    TSSymbol s = c->sym;
    if (s == sy->member_expression)
        js_check_chain(c, n);
    else if (s == sy->subscript_expression)
        check_subscript(c);
    else if (s == sy->call_expression)
        check_reflective_call(c, n);
    else if (s == sy->pair_pattern)
        check_pair_pattern(c);
    else if (s == sy->shorthand_property_identifier_pattern)
        check_shorthand_pattern(c);
}

void js_rules_visit(struct js_ctx *c)
{
    const struct js_syms *sy = c->sy;
    TSNode n = js_cur(c);
    TSSymbol s = c->sym;
    if (c->second_pass) {
        visit_second(c);
        return;
    }
    if (s == sy->string || s == sy->template_string || s == sy->binary_expression ||
        s == sy->call_expression)
        check_string_value(c, n);
    if (s == sy->identifier || s == sy->shorthand_property_identifier)
        check_identifier(c);
    else if (s == sy->member_expression)
        check_member(c);
    else if (s == sy->subscript_expression)
        check_subscript(c);
    else if (s == sy->call_expression) {
        js_check_call(c, n);
        check_reflective_call(c, n);
    } else if (s == sy->pair_pattern)
        check_pair_pattern(c);
    else if (s == sy->shorthand_property_identifier_pattern)
        check_shorthand_pattern(c);
    else if (s == sy->pair || s == sy->method_definition)
        check_pair(c);
    else if (s == sy->import_statement || s == sy->export_statement)
        js_check_module_source(c, n);
    else if (s == sy->variable_declarator)
        js_record_binding(c, field(c, n, sy->f_name), field(c, n, sy->f_value));
    else if (s == sy->assignment_expression)
        js_record_binding(c, field(c, n, sy->f_left), field(c, n, sy->f_right));
    else if (s == sy->this_)
        check_this(c);
    else if (s == sy->await_expression || s == sy->yield_expression)
        js_check_context_keyword(c);
    else if (s == sy->number)
        js_check_number(c);
    else if (s == sy->field_definition)
        js_check_field_keyword(c);
    else if (s == sy->with_statement)
        js_report(c, n, SG_RULE_NAME_FORBIDDEN,
                  "the 'with' statement is forbidden (it turns an object's properties, such as "
                  "'constructor', into plain names)");
    /* besides the above: a method is also a pair */
    if (s == sy->function_declaration || s == sy->function_expression || s == sy->arrow_function ||
        s == sy->method_definition || s == sy->generator_function ||
        s == sy->generator_function_declaration)
        js_check_async_line_break(c);
}
