/* python_strargs.c - attribute paths in constant string arguments
 * (python_strargs.h).
 *
 * The rule reads words, not prose: `print("use obj.__class__")` is
 * rejected (a `.`-prefixed denied dunder), `print("see __init__")` and
 * `logging.getLogger("__main__")` pass (bare dunders are not attribute
 * steps), and so does `print("the mro")` (a bare forbidden word without an
 * underscore). Docstrings and other strings that are not call arguments
 * are not read.
 *
 * Regular expressions are text too, not paths: the arguments of a call of
 * the `re` module's functions are not read, and anywhere else a `.` inside
 * a `[...]` (the first `]` closes it, as in a format field's index; a `{`
 * or `}` ends it) is not an attribute step when no Python expression could
 * put an attribute there: right after the `[`, after a character that ends
 * no expression (not a word character, `)`, `]`, a quote or a space), after
 * a run of digits (`9._x` is not Python) or after an escape (`\w._`). So
 * `[A-Za-z0-9._%+-]` passes, while `{0[k]._x}`, `[a._x]` and `[a ._x]`, which
 * a format string or an expression string (pandas' query handed over as a
 * value) would read as attributes, are still checked.
 */
#include "python_strargs.h"

#include <string.h>

#include "python_fold.h"
#include "python_resolve.h"
#include "python_rules.h"
#include "python_scope.h"

#define HOW " in a string argument"
#define SPLAT_ELEMS_MAX 64 /* elements of a literal *[...] argument read */

static int is_word_char(unsigned char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9');
}

static int is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

/* The `.` at s[dot], inside a `[...]` opened at s[open]: 1 when no Python
 * expression can end right before it (see the file comment). */
static int class_dot(const char *s, size_t open, size_t dot)
{
    if (dot == open + 1)
        return 1;
    unsigned char prev = (unsigned char)s[dot - 1];
    if (!is_word_char(prev))
        return !strchr(")]'\" \t\n\r\f\v", prev);
    size_t a = dot - 1, digits = 1;
    while (a > open + 1 && is_word_char((unsigned char)s[a - 1]))
        a--;
    for (size_t i = a; i < dot; i++)
        digits &= is_digit((unsigned char)s[i]);
    if (a > open + 1 && s[a - 1] == '\\')
        return 1;                                        /* an escape: \w */
    return digits && !(a > open + 1 && s[a - 1] == '.'); /* 1.2._x is (1.2)._x */
}

/* Check the words of s[0..n); 1 when one was reported. */
static int scan_text(struct py_ctx *c, TSNode at, const char *s, size_t n)
{
    char word[PY_NAME_MAX];
    size_t open = 0;
    int in_class = 0;
    for (size_t i = 0; i < n;) {
        if (!is_word_char((unsigned char)s[i])) {
            if (s[i] == '[' && !in_class)
                in_class = 1, open = i;
            else if (s[i] == ']' || s[i] == '{' || s[i] == '}')
                in_class = 0;
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && is_word_char((unsigned char)s[i]))
            i++;
        size_t len = i - start;
        if (len >= sizeof(word))
            continue;
        memcpy(word, s + start, len);
        word[len] = '\0';
        int after_dot =
            start > 0 && s[start - 1] == '.' && !(in_class && class_dot(s, open, start - 1));
        int bare_forbidden =
            memchr(word, '_', len) && sg_strset_has(&c->lp->forbidden_attributes, word);
        if ((after_dot || bare_forbidden) && py_check_attr_name(c, at, word, HOW))
            return 1;
    }
    return 0;
}

/* Expressions that may fold to a string (anything else is skipped
 * without folding: most arguments are names of other values). */
static int may_fold(enum py_kind k)
{
    return k == PK_STRING || k == PK_CONCAT_STRING || k == PK_BINARY_OP || k == PK_IDENTIFIER ||
           k == PK_CALL || k == PK_SUBSCRIPT || k == PK_PAREN;
}

/* An f-string's replacement fields are code, checked as code; its text
 * is folded or not read. */
static int is_fstring(const struct py_ctx *c, TSNode str)
{
    for (uint32_t i = ts_node_start_byte(str); i < ts_node_end_byte(str); i++) {
        char ch = c->src[i];
        if (ch == '"' || ch == '\'')
            return 0;
        if (ch == 'f' || ch == 'F')
            return 1;
    }
    return 0;
}

static void check_arg(struct py_ctx *c, TSNode a, int32_t scope)
{
    struct py_sbuf s = {0};
    enum py_kind k = py_kind(c, a);
    if (!may_fold(k))
        return;
    if (py_fold_str(c, a, scope, 0, &s)) {
        scan_text(c, a, s.s, s.n);
        return;
    }
    if (k == PK_STRING && !is_fstring(c, a)) { /* too long to fold: read the literal */
        uint32_t b = ts_node_start_byte(a), e = ts_node_end_byte(a);
        scan_text(c, a, c->src + b, e - b);
    }
}

/* The elements of `*[a, b]` / `*(a, b)`. */
static void check_splat(struct py_ctx *c, TSNode splat, int32_t scope)
{
    TSNode seq = py_first_expr(c, splat);
    enum py_kind k = py_kind(c, seq);
    if (k != PK_LIST && k != PK_TUPLE)
        return;
    uint32_t n = ts_node_named_child_count(seq);
    for (uint32_t i = 0; i < n && i < SPLAT_ELEMS_MAX; i++)
        check_arg(c, ts_node_named_child(seq, i), scope);
}

/* The callee is certainly one of the `re` module's functions, which read
 * their strings as patterns, subjects and replacements, never as names. */
static int regex_callee(struct py_ctx *c, const struct py_event *ev)
{
    static const char *const fns[] = {"compile", "search",   "match", "fullmatch", "split",
                                      "findall", "finditer", "sub",   "subn",      "escape"};
    struct py_cands k = {0};
    py_resolve(c, ts_node_child_by_field_id(ev->node, c->L->f.function), ev->scope, 0, &k);
    if (k.overflow || k.n == 0)
        return 0;
    for (uint32_t i = 0; i < k.n; i++) {
        const struct py_cand *fc = &k.v[i];
        int known = 0;
        if (fc->kind != PC_IMPORT || strncmp(fc->s, "re.", 3) != 0)
            return 0;
        for (size_t j = 0; j < sizeof(fns) / sizeof(*fns) && !known; j++)
            known = !strcmp(fc->s + 3, fns[j]);
        if (!known)
            return 0;
    }
    return 1;
}

void py_check_string_args(struct py_ctx *c, const struct py_event *ev)
{
    const struct py_fields *f = &c->L->f;
    TSNode args = ts_node_child_by_field_id(ev->node, f->arguments);
    if (py_kind(c, args) != PK_ARGUMENT_LIST || regex_callee(c, ev))
        return;
    TSTreeCursor *cur = py_cursor(c, args);
    if (!cur)
        return;
    for (int more = ts_tree_cursor_goto_first_child(cur); more && !c->err;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        TSNode a = ts_tree_cursor_current_node(cur);
        if (!ts_node_is_named(a) || ts_node_is_extra(a))
            continue;
        enum py_kind k = py_kind(c, a);
        if (k == PK_KEYWORD_ARGUMENT)
            check_arg(c, ts_node_child_by_field_id(a, f->value), ev->scope);
        else if (k == PK_LIST_SPLAT)
            check_splat(c, a, ev->scope);
        else
            check_arg(c, a, ev->scope);
    }
    py_cursor_done(c, cur);
}
