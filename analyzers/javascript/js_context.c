/* js_context.c - constructs V8 reads by a context tree-sitter does not
 * have (js_context.h). */
#include "js_context.h"

#include "rules.h"
#include "ts_node.h"

/* Functions and function-like bodies: the nearest one decides what `await`
 * and `yield` mean. A class field's initializer and a static block are
 * evaluated as methods of their own, neither async nor generators. */
static int is_boundary(const struct js_syms *sy, TSNode n)
{
    TSSymbol s = sg_ts_symbol(n);
    return s == sy->function_declaration || s == sy->function_expression ||
           s == sy->arrow_function || s == sy->method_definition || s == sy->generator_function ||
           s == sy->generator_function_declaration || s == sy->class_static_block ||
           s == sy->field_definition;
}

/* 1 when the source between two tokens holds a line terminator (a
 * multi-line comment between them counts, as for V8's ASI). */
static int line_break_between(const struct js_ctx *c, TSNode a, TSNode b)
{
    for (uint32_t i = ts_node_end_byte(a); i < ts_node_start_byte(b) && i < c->len; i++)
        if (c->src[i] == '\n' || c->src[i] == '\r')
            return 1;
    return 0;
}

/* 1 when function f carries the modifier token tok (`async`, or a
 * method's generator `*`) before its name or parameters, else 0; -1 for an
 * `async` followed by a line break: V8 reads `async` + newline +
 * `function f() {}` as the identifier `async` and then a plain function,
 * and a class field named `async` before a plain method. */
static int has_modifier(const struct js_ctx *c, TSNode f, TSSymbol tok)
{
    /* a cursor, not ts_node_child(): that is O(index), and a method may
     * carry many decorators */
    TSTreeCursor cur = ts_tree_cursor_new(f);
    int found = 0;
    for (int more = ts_tree_cursor_goto_first_child(&cur); more;
         more = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode k = ts_tree_cursor_current_node(&cur);
        if (ts_node_is_named(k)) {
            if (js_is(k, c->sy->comment) || js_is(k, c->sy->decorator))
                continue;
            break; /* the name, the parameters or the body: no modifier after them */
        }
        if (sg_ts_symbol(k) != tok)
            continue;
        found = 1;
        if (tok == c->sy->async_) { /* the next token; the comments between count */
            TSNode next = k;
            while (ts_tree_cursor_goto_next_sibling(&cur)) {
                next = ts_tree_cursor_current_node(&cur);
                if (!ts_node_is_extra(next))
                    break;
            }
            found = line_break_between(c, k, next) || ts_node_eq(next, k) ? -1 : 1;
        }
        break;
    }
    ts_tree_cursor_delete(&cur);
    return found;
}

static int is_async(const struct js_ctx *c, TSNode f)
{
    return !js_is(f, c->sy->class_static_block) && !js_is(f, c->sy->field_definition) &&
           has_modifier(c, f, c->sy->async_) == 1;
}

static int is_generator(const struct js_ctx *c, TSNode f)
{
    const struct js_syms *sy = c->sy;
    if (js_is(f, sy->generator_function) || js_is(f, sy->generator_function_declaration))
        return 1;
    return js_is(f, sy->method_definition) && has_modifier(c, f, sy->star) == 1;
}

void js_check_context_keyword(struct js_ctx *c)
{
    const struct js_syms *sy = c->sy;
    TSNode n = js_cur(c);
    int await = js_is(n, sy->await_expression);
    for (size_t up = 1; up <= c->depth; up++) {
        TSNode f = js_up(c, up);
        if (!is_boundary(sy, f))
            continue;
        if (await ? is_async(c, f) : is_generator(c, f))
            return;
        break;
    }
    if (await)
        js_report(c, n, SG_RULE_CONTEXT_KEYWORD,
                  "'await' outside an async function: Node compiles main.js as a plain function "
                  "body, where 'await' is an identifier and what follows may not be what the "
                  "analyzer read (e.g. '/' is a division, not a regex)");
    else
        js_report(c, n, SG_RULE_CONTEXT_KEYWORD,
                  "'yield' outside a generator function: there 'yield' is an identifier to Node "
                  "and what follows may not be what the analyzer read (e.g. '/' is a division, "
                  "not a regex)");
}

void js_check_async_line_break(struct js_ctx *c)
{
    TSNode f = js_cur(c);
    if (is_boundary(c->sy, f) && has_modifier(c, f, c->sy->async_) < 0)
        js_report(c, f, SG_RULE_CONTEXT_KEYWORD,
                  "'async' followed by a line break: Node reads it as an identifier of its own "
                  "and the function after it as a plain one, the analyzer as an async function");
}

void js_check_field_keyword(struct js_ctx *c)
{
    /* not `async`: a line break after it ends a field for V8 too */
    static const char *const words[] = {"static", "get", "set"};
    TSNode f = js_cur(c);
    if (!js_is(f, c->sy->field_definition) ||
        !ts_node_is_null(ts_node_child_by_field_id(f, c->sy->f_value)))
        return;
    TSNode name = ts_node_child_by_field_id(f, c->sy->f_property);
    if (ts_node_is_null(name))
        return;
    struct js_str s;
    js_node_name(c, name, &s);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (js_name_is(&s, words[i])) {
            js_report(c, f, SG_RULE_CONTEXT_KEYWORD,
                      "a class field named '%s' without a value: Node reads '%s' and a line break "
                      "before a method as the method's modifier, the analyzer as a field of its "
                      "own (keep '%s' on the method's line)",
                      words[i], words[i], words[i]);
            return;
        }
}

void js_check_number(struct js_ctx *c)
{
    TSNode n = js_cur(c);
    uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n), i = b + 1;
    if (e - b < 3 || c->src[b] != '0')
        return;
    while (i < e && c->src[i] >= '0' && c->src[i] <= '7')
        i++;
    if (i > b + 1 && i < e && c->src[i] == '.')
        js_report(c, n, SG_RULE_SYNTAX_ERROR,
                  "legacy octal literal followed by '.': Node reads '041.x' as property x of "
                  "the number 33, the analyzer as the decimal 41. and a separate name");
}
