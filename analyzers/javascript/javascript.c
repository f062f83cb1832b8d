/* javascript.c - the JavaScript (Node.js, CommonJS) analyzer: parse with
 * tree-sitter-javascript, fail closed on anything the parser and V8 could
 * read differently, enforce the structural limits, then walk the tree once
 * applying the rules of js_rules.c (and a second time only when the program
 * aliases an object that has forbidden members).
 *
 * The parser is this thread's cached one (ts_util.h). A check allocates
 * nothing per node: the tree, one cursor, one context (with the walk's
 * path) and the violations are all it allocates.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "javascript.h"
#include "js_consts.h"
#include "js_rules.h"
#include "js_syms.h"
#include "rules.h"
#include "sg_time.h"
#include "ts_util.h"
#include "ts_node.h"

#define JS_PATH_MAX (SG_LIMIT_DEPTH_MAX + 1) /* deepest walk any policy allows */

/* ---- fail closed on parse errors ---------------------------------------- */

/* V8 reads `<!--` anywhere, and `-->` at the start of a line, as the start
 * of a comment in scripts and CommonJS modules; tree-sitter reads `<!--` as
 * code. Rather than model the exact rules, any `<!--` or `-->` that is not
 * inside a string, template text, regex or comment is rejected, so no text
 * can be code for one and a comment for the other.
 *
 * The check rides on the walk: occurrences are found with memmem in source
 * order, and each literal node the walk meets (also in source order) covers
 * the occurrences inside it; one that comes before the next literal, or is
 * left at the end, is in code. Free when the source has none. */
static const char *const html_marks[] = {"<!--", "-->"};
#define HTML_MARKS 2
#define NO_MARK SIZE_MAX

struct marks {
    size_t next[HTML_MARKS]; /* byte offset of the next unchecked occurrence */
    size_t run_s, run_e;     /* the current run of adjacent or nested literals */
};

static int is_literal(const struct js_syms *sy, TSSymbol s)
{
    return s == sy->string || s == sy->string_fragment || s == sy->escape_sequence ||
           s == sy->comment || s == sy->regex || s == sy->regex_pattern || s == sy->hash_bang_line;
}

static size_t find_mark(const struct js_ctx *c, size_t m, size_t from)
{
    size_t mlen = strlen(html_marks[m]);
    if (from >= c->len)
        return NO_MARK;
    const char *hit = memmem(c->src + from, c->len - from, html_marks[m], mlen);
    return hit ? (size_t)(hit - c->src) : NO_MARK;
}

static void marks_init(const struct js_ctx *c, struct marks *mk)
{
    for (size_t m = 0; m < HTML_MARKS; m++)
        mk->next[m] = find_mark(c, m, 0);
    mk->run_s = mk->run_e = 0;
}

/* The walk reached a literal spanning [s, e) (s = e = len at the end).
 * Adjacent literals form one run (`\<` then `!--` in a template), so an
 * occurrence is covered when it lies inside the run, and in code when it
 * starts before the run. Returns 1 when one is in code (reported). */
static int marks_literal(struct js_ctx *c, struct marks *mk, size_t s, size_t e)
{
    if (s <= mk->run_e && mk->run_e > 0) {
        mk->run_e = e > mk->run_e ? e : mk->run_e;
    } else {
        mk->run_s = s;
        mk->run_e = e;
    }
    for (size_t m = 0; m < HTML_MARKS; m++) {
        size_t mlen = strlen(html_marks[m]);
        while (mk->next[m] != NO_MARK && mk->next[m] >= mk->run_s &&
               mk->next[m] + mlen <= mk->run_e)
            mk->next[m] = find_mark(c, m, mk->next[m] + 1);
        size_t at = mk->next[m];
        if (at == NO_MARK || at >= mk->run_s)
            continue; /* in this run's future or beyond it: later literals decide */
        int r = sg_violations_add_at(c->out, SG_RULE_SYNTAX_ERROR, c->src, c->len, at, at + mlen,
                                     "'%s' outside a string or comment is forbidden (Node may "
                                     "read it as an HTML-like comment; write 'x-- > y' for a "
                                     "comparison)",
                                     html_marks[m]);
        if (r < 0 && !c->err)
            c->err = r;
        return 1;
    }
    return 0;
}

/* ---- the walk ------------------------------------------------------------ */

/* JSX parses with this grammar but is not JavaScript Node runs; rejecting
 * it keeps the analyzer's view and Node's the same program. */
static int is_unsupported_syntax(const struct js_syms *sy, TSSymbol s)
{
    return s == sy->jsx_element || s == sy->jsx_self_closing_element ||
           s == sy->jsx_opening_element || s == sy->jsx_closing_element || s == sy->html_comment;
}

/* Limits and syntax that stop the walk; 1 when one fired. */
static int check_node_limits(struct js_ctx *c, TSNode n, TSSymbol sym, size_t depth, size_t nodes)
{
    const struct sg_lang_policy *lp = c->lp;
    if (nodes > lp->max_nodes) {
        js_report(c, n, SG_RULE_NODES, "the program has more than %zu syntax nodes", lp->max_nodes);
        return 1;
    }
    if (depth > lp->max_depth || depth >= c->path_len) {
        js_report(c, n, SG_RULE_DEPTH, "the program nests deeper than %zu syntax nodes",
                  lp->max_depth);
        return 1;
    }
    if (is_unsupported_syntax(c->sy, sym)) {
        js_report(c, n, SG_RULE_SYNTAX_ERROR,
                  sym == c->sy->html_comment ? "HTML-like comments ('-->') are forbidden"
                                             : "JSX is not JavaScript that Node runs");
        return 1;
    }
    return 0;
}

/* Depth-first, pre-order walk with one cursor; ctx->path mirrors the
 * cursor's ancestors. Depth counts nodes from the root (depth 1). */
static void walk(struct js_ctx *c, TSTreeCursor *cur, TSNode root, struct sg_analysis_stats *st)
{
    size_t depth = 1, nodes = 0, max_depth = 0;
    int stopped = 0;
    struct marks mk;
    marks_init(c, &mk);
    ts_tree_cursor_reset(cur, root);
    while (!stopped) {
        TSNode n = ts_tree_cursor_current_node(cur);
        TSSymbol sym = sg_ts_symbol(n);
        nodes++;
        max_depth = depth > max_depth ? depth : max_depth;
        if ((!c->second_pass && check_node_limits(c, n, sym, depth, nodes)) ||
            depth >= c->path_len ||
            (!c->second_pass && is_literal(c->sy, sym) &&
             marks_literal(c, &mk, ts_node_start_byte(n), ts_node_end_byte(n))))
            break;
        c->depth = depth - 1;
        c->path[c->depth] = n;
        c->sym = sym;
        js_rules_visit(c);
        if (c->stop || c->err)
            break;
        if (ts_tree_cursor_goto_first_child(cur)) {
            depth++;
            continue;
        }
        while (!stopped && !ts_tree_cursor_goto_next_sibling(cur)) {
            stopped = !ts_tree_cursor_goto_parent(cur);
            depth--;
        }
    }
    if (c->second_pass)
        return;
    st->nodes = nodes;
    st->max_depth = max_depth;
    if (stopped) /* walked to the end: what no literal covered is code */
        marks_literal(c, &mk, c->len + 1, c->len + 1);
}

static void analyze_tree(struct js_ctx *c, TSTree *tree, struct sg_analysis_stats *st)
{
    TSNode root = ts_tree_root_node(tree);
    TSTreeCursor cur = ts_tree_cursor_new(root);
    size_t first = c->out->count, before = c->out->count + c->out->dropped;
    walk(c, &cur, root, st);
    int complex_names = 0;
    if (c->out->count + c->out->dropped == before)
        complex_names = js_consts_finish(c); /* names built from other names */
    /* aliases and tainted names matter only for a program not rejected already */
    if ((c->n_aliases || c->n_taints || complex_names) && !c->err &&
        c->out->count + c->out->dropped == before) {
        c->second_pass = 1;
        walk(c, &cur, root, st);
    }
    ts_tree_cursor_delete(&cur);
    /* report in source order: the walk meets `a.b.c` at its outermost node first */
    sg_ts_sort_violations(c->out, first);
}

/* One allocation per check: the context and the walk's path, sized by the
 * policy's depth limit. */
static struct js_ctx *ctx_new(const struct sg_lang_policy *lp, const char *src, size_t len,
                              struct sg_violations *out)
{
    size_t path_len = (lp->max_depth < JS_PATH_MAX ? lp->max_depth : JS_PATH_MAX) + 1;
    struct js_ctx *c = calloc(1, sizeof(*c) + path_len * sizeof(TSNode));
    if (!c)
        return NULL;
    c->path = (TSNode *)(c + 1);
    c->path_len = path_len;
    c->lp = lp;
    c->sy = js_syms_get();
    c->src = src;
    c->len = len;
    c->out = out;
    js_ctx_init_filters(c);
    return c;
}

int sg_javascript_check(const struct sg_lang_policy *lp, const char *src, size_t len,
                        struct sg_violations *out, struct sg_analysis_stats *stats,
                        struct sg_error *err)
{
    TSTree *tree = NULL;
    uint64_t parse_us = 0, t0 = sg_time_mono_us();
    /* fails closed: a parse error, a timeout or the stack guard is one
     * violation and no tree (ts_util.h) */
    int r = sg_ts_parse_checked(tree_sitter_javascript(), src, len, out, &parse_us, &tree);
    stats->parse_us = parse_us;
    if (r == 0) {
        struct js_ctx *c = ctx_new(lp, src, len, out);
        if (c) {
            c->imports = &stats->imports;
            analyze_tree(c, tree, stats);
            r = c->err;
            js_consts_free(c->consts);
            free(c);
        } else {
            r = -ENOMEM;
        }
        ts_tree_delete(tree);
    }
    stats->eval_us = sg_time_mono_us() - t0 - parse_us;
    if (r < 0)
        return sg_error_set(err, r, "javascript analysis: %s",
                            r == -E2BIG ? "source too large" : "out of memory");
    return 0;
}
