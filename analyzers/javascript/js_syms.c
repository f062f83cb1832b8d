/* js_syms.c - symbol and field ids of tree-sitter-javascript (js_syms.h). */
#include "js_syms.h"

#include <pthread.h>
#include <string.h>

static struct js_syms syms;
static pthread_once_t syms_once = PTHREAD_ONCE_INIT;

static TSSymbol sym(const TSLanguage *lang, const char *name, int named)
{
    return ts_language_symbol_for_name(lang, name, (uint32_t)strlen(name), named);
}

static TSFieldId field(const TSLanguage *lang, const char *name)
{
    return ts_language_field_id_for_name(lang, name, (uint32_t)strlen(name));
}

static void load_names(const TSLanguage *l, struct js_syms *s)
{
    s->identifier = sym(l, "identifier", 1);
    s->property_identifier = sym(l, "property_identifier", 1);
    s->private_property_identifier = sym(l, "private_property_identifier", 1);
    s->shorthand_property_identifier = sym(l, "shorthand_property_identifier", 1);
    s->shorthand_property_identifier_pattern = sym(l, "shorthand_property_identifier_pattern", 1);
    s->this_ = sym(l, "this", 1);
    s->member_expression = sym(l, "member_expression", 1);
    s->subscript_expression = sym(l, "subscript_expression", 1);
    s->call_expression = sym(l, "call_expression", 1);
    s->new_expression = sym(l, "new_expression", 1);
    s->parenthesized_expression = sym(l, "parenthesized_expression", 1);
    s->sequence_expression = sym(l, "sequence_expression", 1);
    s->binary_expression = sym(l, "binary_expression", 1);
    s->unary_expression = sym(l, "unary_expression", 1);
    s->array = sym(l, "array", 1);
    s->arguments = sym(l, "arguments", 1);
    s->import = sym(l, "import", 1);
    s->string = sym(l, "string", 1);
    s->template_string = sym(l, "template_string", 1);
    s->template_substitution = sym(l, "template_substitution", 1);
    s->number = sym(l, "number", 1);
    s->true_ = sym(l, "true", 1);
    s->false_ = sym(l, "false", 1);
    s->null_ = sym(l, "null", 1);
    s->undefined = sym(l, "undefined", 1);
    s->plus = sym(l, "+", 0);
    s->minus = sym(l, "-", 0);
    s->comma = sym(l, ",", 0);
    s->tilde = sym(l, "~", 0);
}

static void load_structure(const TSLanguage *l, struct js_syms *s)
{
    s->object = sym(l, "object", 1);
    s->pair = sym(l, "pair", 1);
    s->pair_pattern = sym(l, "pair_pattern", 1);
    s->computed_property_name = sym(l, "computed_property_name", 1);
    s->class_body = sym(l, "class_body", 1);
    s->object_pattern = sym(l, "object_pattern", 1);
    s->object_assignment_pattern = sym(l, "object_assignment_pattern", 1);
    s->variable_declarator = sym(l, "variable_declarator", 1);
    s->assignment_expression = sym(l, "assignment_expression", 1);
    s->update_expression = sym(l, "update_expression", 1);
    s->spread_element = sym(l, "spread_element", 1);
    s->method_definition = sym(l, "method_definition", 1);
    s->function_declaration = sym(l, "function_declaration", 1);
    s->function_expression = sym(l, "function_expression", 1);
    s->generator_function = sym(l, "generator_function", 1);
    s->generator_function_declaration = sym(l, "generator_function_declaration", 1);
    s->expression_statement = sym(l, "expression_statement", 1);
    static const char *const ops[JS_NUMERIC_OPS] = {"-", "*", "/",  "%",  "**", "|",
                                                    "&", "^", "<<", ">>", ">>>"};
    for (int i = 0; i < JS_NUMERIC_OPS; i++)
        s->numeric_ops[i] = sym(l, ops[i], 0);
    s->error = sym(l, "ERROR", 1);
    s->hash_bang_line = sym(l, "hash_bang_line", 1);
    s->regex_pattern = sym(l, "regex_pattern", 1);
    s->string_fragment = sym(l, "string_fragment", 1);
    s->escape_sequence = sym(l, "escape_sequence", 1);
    s->import_statement = sym(l, "import_statement", 1);
    s->export_statement = sym(l, "export_statement", 1);
    s->with_statement = sym(l, "with_statement", 1);
    s->comment = sym(l, "comment", 1);
    s->html_comment = sym(l, "html_comment", 1);
    s->regex = sym(l, "regex", 1);
    s->jsx_element = sym(l, "jsx_element", 1);
    s->jsx_self_closing_element = sym(l, "jsx_self_closing_element", 1);
    s->jsx_opening_element = sym(l, "jsx_opening_element", 1);
    s->jsx_closing_element = sym(l, "jsx_closing_element", 1);
    s->class_heritage = sym(l, "class_heritage", 1);
    s->instanceof = sym(l, "instanceof", 0);
    s->arrow_function = sym(l, "arrow_function", 1);
    s->class_ = sym(l, "class", 1);
    s->field_definition = sym(l, "field_definition", 1);
    s->await_expression = sym(l, "await_expression", 1);
    s->yield_expression = sym(l, "yield_expression", 1);
    s->class_static_block = sym(l, "class_static_block", 1);
    s->decorator = sym(l, "decorator", 1);
    s->async_ = sym(l, "async", 0);
    s->star = sym(l, "*", 0);
}

static void load_fields(const TSLanguage *l, struct js_syms *s)
{
    s->f_function = field(l, "function");
    s->f_arguments = field(l, "arguments");
    s->f_object = field(l, "object");
    s->f_property = field(l, "property");
    s->f_index = field(l, "index");
    s->f_key = field(l, "key");
    s->f_value = field(l, "value");
    s->f_source = field(l, "source");
    s->f_operator = field(l, "operator");
    s->f_left = field(l, "left");
    s->f_right = field(l, "right");
    s->f_constructor = field(l, "constructor");
    s->f_argument = field(l, "argument");
    s->f_name = field(l, "name");
    s->f_body = field(l, "body");
}

static void init_syms(void)
{
    const TSLanguage *l = tree_sitter_javascript();
    load_names(l, &syms);
    load_structure(l, &syms);
    load_fields(l, &syms);
}

const struct js_syms *js_syms_get(void)
{
    pthread_once(&syms_once, init_syms);
    return &syms;
}
