/* js_fold.h - constant folding of JavaScript expressions to strings.
 *
 * The analyzer folds module names (`require("child" + "_process")`) and
 * computed property keys (`x["con" + "structor"]`) before it matches them,
 * so spelling a name in pieces does not hide it. Folded forms: string,
 * number and template literals (substitutions folded), true/false/null/
 * undefined, `+`, parentheses, the comma operator, String(x), String.raw`..`,
 * String.fromCharCode/fromCodePoint(numbers), s.concat(..), [..].join(sep),
 * s.toLowerCase/toUpperCase (Unicode case mapping), s.toString/valueOf.
 * Anything else is dynamic. Folding is bounded in depth and in nodes: an
 * expression past either bound is reported as too complex, which callers
 * treat as a violation (an attacker could otherwise pad a name past the
 * bound to make it "dynamic").
 */
#ifndef SG_JS_FOLD_H
#define SG_JS_FOLD_H

#include <tree_sitter/api.h>

#include "js_lex.h"
#include "js_syms.h"

#define JS_FOLD_DEPTH_MAX 128  /* nested foldable expressions */
#define JS_FOLD_NODES_MAX 2048 /* nodes visited by one fold */

enum js_fold_kind {
    JS_FOLD_DYNAMIC = 0,    /* not a compile-time constant */
    JS_FOLD_STRING,         /* a string; its value is in the output */
    JS_FOLD_NUMBER,         /* a number whose decimal text is in the output */
    JS_FOLD_NUMBER_INEXACT, /* a number we do not render (1.5, 1e3, -1) */
    JS_FOLD_OTHER,          /* true, false, null, undefined: text in the output */
    JS_FOLD_COMPLEX,        /* past JS_FOLD_DEPTH_MAX or JS_FOLD_NODES_MAX */
};

/* Fold the expression `node` of src; its value (for STRING, NUMBER, OTHER)
 * replaces the contents of ret_value. */
enum js_fold_kind js_fold(const struct js_syms *sy, const char *src, TSNode node,
                          struct js_str *ret_value);

/* Constant bindings for js_fold_env: `lookup` returns the one expression an
 * identifier is bound to (`const b = a + "x"` gives `a + "x"` for b), or a
 * null node when the identifier is not a single known binding. Folding
 * follows identifiers through it, within the same depth and node bounds
 * (so a cycle or a long chain folds as JS_FOLD_COMPLEX). */
struct js_fold_env {
    TSNode (*lookup)(const void *arg, TSNode ident);
    const void *arg;
};

/* js_fold, following identifiers through env (NULL: like js_fold). */
enum js_fold_kind js_fold_env(const struct js_syms *sy, const char *src,
                              const struct js_fold_env *env, TSNode node, struct js_str *ret_value);

/* 1 when a kind is a constant whose text is exact (usable as a name). */
int js_fold_is_text(enum js_fold_kind kind);

#endif
