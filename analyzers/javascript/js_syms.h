/* js_syms.h - the tree-sitter-javascript symbol and field ids the analyzer
 * dispatches on, looked up once by name (comparing ids in the walk, never
 * type strings).
 */
#ifndef SG_JS_SYMS_H
#define SG_JS_SYMS_H

#include <tree_sitter/api.h>

#define JS_NUMERIC_OPS 11

/* All members are TSSymbol / TSFieldId (uint16_t) and none may be 0 after
 * loading: the unit tests check both. */
struct js_syms {
    /* names and properties */
    TSSymbol identifier, property_identifier, private_property_identifier,
        shorthand_property_identifier, shorthand_property_identifier_pattern, this_;
    /* expressions */
    TSSymbol member_expression, subscript_expression, call_expression, new_expression,
        parenthesized_expression, sequence_expression, binary_expression, unary_expression, array,
        arguments, import, string, template_string, template_substitution, number, true_, false_,
        null_, undefined, plus, minus, tilde, comma;
    /* objects, patterns, classes */
    TSSymbol object, pair, pair_pattern, computed_property_name, class_body, object_pattern,
        object_assignment_pattern, variable_declarator, assignment_expression, update_expression,
        spread_element, method_definition, function_declaration, function_expression,
        generator_function, generator_function_declaration, expression_statement;
    /* operators whose result is always a number (or BigInt): a computed key
     * built with them cannot spell a property name */
    TSSymbol numeric_ops[JS_NUMERIC_OPS];
    /* statements and tokens the rules look at */
    TSSymbol error, import_statement, export_statement, with_statement, comment, html_comment,
        hash_bang_line, regex, regex_pattern, string_fragment, escape_sequence, jsx_element,
        jsx_self_closing_element, jsx_opening_element, jsx_closing_element;
    /* where a bare `Error` may stand, and keys that are objects */
    TSSymbol class_heritage, instanceof, arrow_function, class_, field_definition;
    /* where `await` and `yield` are operators (js_context.c) */
    TSSymbol await_expression, yield_expression, class_static_block, decorator, async_, star;
    TSFieldId f_function, f_arguments, f_object, f_property, f_index, f_key, f_value, f_source,
        f_operator, f_left, f_right, f_constructor, f_argument, f_name, f_body;
};

/* Structural shortcuts, cheaper than field lookups: the object of a member
 * or subscript access and the callee of a call are the node's first child
 * (js_head); the property of a member access and the arguments of a call
 * are its last (js_tail): comments can sit between children, never after
 * a node's last token. */
static inline TSNode js_head(TSNode n)
{
    return ts_node_child(n, 0);
}

static inline TSNode js_tail(TSNode n)
{
    uint32_t k = ts_node_child_count(n);
    return k ? ts_node_child(n, k - 1) : (TSNode){0};
}

/* The table for tree_sitter_javascript(), built on first use (thread-safe).
 * Borrowed, valid for the life of the process. */
const struct js_syms *js_syms_get(void);

/* The grammar itself. */
const TSLanguage *tree_sitter_javascript(void);

#endif
