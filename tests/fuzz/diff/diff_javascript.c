/* Differential fuzzing of the JavaScript analyzer against V8 and acorn
 * (diff_common.h): the summary of tree-sitter-javascript's tree that
 * js_oracle.js compares with acorn's, for sources V8 compiles. */
#include <stddef.h>
#include <stdint.h>

#include "diff_common.h"

const TSLanguage *tree_sitter_javascript(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is(TSNode n, const char *type)
{
    return strcmp(ts_node_type(n), type) == 0;
}

static int is_ident(TSNode n)
{
    static const char *const kinds[] = {"identifier",
                                        "property_identifier",
                                        "shorthand_property_identifier",
                                        "private_property_identifier",
                                        "shorthand_property_identifier_pattern",
                                        "statement_identifier",
                                        "undefined"};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
        if (is(n, kinds[i]))
            return 1;
    return 0;
}

/* {"ids", "attrs", "calls", "strs", "regexes"}: identifiers other than
 * member names, non-computed member names, calls (new, tagged templates and
 * import() included), string literals as written, regex literals. */
static json_t *summarise(TSNode root, const char *src)
{
    json_t *ids = json_array(), *attrs = json_array(), *strs = json_array(),
           *regexes = json_array();
    json_int_t calls = 0;
    TSTreeCursor c = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        int descend = 1;
        if (ts_node_is_named(n)) {
            if (is_ident(n)) {
                TSNode p = ts_node_parent(n);
                TSNode prop = is(p, "member_expression")
                                  ? ts_node_child_by_field_name(p, "property", 8)
                                  : (TSNode){0};
                diff_push_text(!ts_node_is_null(prop) && ts_node_eq(prop, n) ? attrs : ids, n, src);
            } else if (is(n, "call_expression") || is(n, "new_expression")) {
                calls++;
            } else if (is(n, "string")) {
                diff_push_text(strs, n, src);
                descend = 0;
            } else if (is(n, "regex")) {
                diff_push_text(regexes, n, src);
                descend = 0;
            }
        }
        if (descend && ts_tree_cursor_goto_first_child(&c))
            continue;
        while (!ts_tree_cursor_goto_next_sibling(&c))
            if (!ts_tree_cursor_goto_parent(&c))
                goto done;
    }
done:
    ts_tree_cursor_delete(&c);
    return json_pack("{s:o,s:o,s:I,s:o,s:o}", "ids", ids, "attrs", attrs, "calls", calls, "strs",
                     strs, "regexes", regexes);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    diff_init("build/fuzz-diff/findings/javascript");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    diff_one(SG_LANG_JAVASCRIPT, tree_sitter_javascript(), data, size, summarise);
    return 0;
}
