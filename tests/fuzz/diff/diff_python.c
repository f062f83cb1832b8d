/* Differential fuzzing of the Python analyzer against CPython (diff_common.h):
 * the summary of tree-sitter-python's tree that py_oracle.py compares with
 * CPython's ast. */
#include <stddef.h>
#include <stdint.h>

#include "diff_common.h"

const TSLanguage *tree_sitter_python(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is(TSNode n, const char *type)
{
    return strcmp(ts_node_type(n), type) == 0;
}

/* An f-string (or a concatenation holding one): its literal parts are not
 * compared (CPython folds them into a JoinedStr), its expressions are. */
static int has_f_prefix(TSNode str, const char *src)
{
    uint32_t b = ts_node_start_byte(str), e = ts_node_end_byte(str);
    for (uint32_t i = b; i < e && src[i] != '"' && src[i] != '\''; i++)
        if (src[i] == 'f' || src[i] == 'F')
            return 1;
    return 0;
}

static int any_f_string(TSNode n, const char *src)
{
    if (is(n, "string"))
        return has_f_prefix(n, src);
    for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
        if (any_f_string(ts_node_named_child(n, i), src))
            return 1;
    return 0;
}

/* {"ids": [...], "attrs": [...], "calls": N, "strs": [source text of each
 * outermost string or concatenation]}: identifiers other than attribute
 * names, attribute names, calls, string literals. */
static json_t *summarise(TSNode root, const char *src)
{
    json_t *ids = json_array(), *attrs = json_array(), *strs = json_array();
    json_int_t calls = 0;
    TSTreeCursor c = ts_tree_cursor_new(root);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&c);
        int descend = 1;
        if (ts_node_is_named(n)) {
            if (is(n, "identifier")) {
                TSNode p = ts_node_parent(n);
                TSNode a = is(p, "attribute") ? ts_node_child_by_field_name(p, "attribute", 9)
                                              : (TSNode){0};
                diff_push_text(!ts_node_is_null(a) && ts_node_eq(a, n) ? attrs : ids, n, src);
            } else if (is(n, "call")) {
                calls++;
            } else if (is(n, "string") || is(n, "concatenated_string")) {
                /* plain literals are compared whole; an f-string's
                 * interpolations are walked for the expressions inside, and
                 * the plain parts of a concatenation holding an f-string are
                 * not compared (CPython folds them into its JoinedStr) */
                TSNode p = ts_node_parent(n);
                int in_joined = is(p, "concatenated_string") && any_f_string(p, src);
                if (!in_joined && !any_f_string(n, src)) {
                    diff_push_text(strs, n, src);
                    descend = 0;
                }
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
    return json_pack("{s:o,s:o,s:I,s:o}", "ids", ids, "attrs", attrs, "calls", calls, "strs", strs);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    diff_init("build/fuzz-diff/findings/python");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    diff_one(SG_LANG_PYTHON, tree_sitter_python(), data, size, summarise);
    return 0;
}
