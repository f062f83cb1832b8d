/* python_scope.h - scopes, bindings and normalised names of one Python
 * analysis (internal to the Python analyzer; see python_ctx.h). */
#ifndef SG_PYTHON_SCOPE_H
#define SG_PYTHON_SCOPE_H

#include "python_ctx.h"

/* The module scope is always scope 0. */
#define PY_MODULE_SCOPE 0

/* Append a scope; returns its index, or -1 (out of memory, recorded in c). */
int32_t py_scope_new(struct py_ctx *c, int32_t parent, enum py_scope_kind kind);

/* The NFKC-normalised text of an identifier node, as CPython reads it
 * (arena string; NULL when out of memory, recorded in c). */
const char *py_name(struct py_ctx *c, TSNode ident);

/* The dotted path of a dotted_name node, components NFKC-normalised and
 * joined with '.' (arena string; NULL when out of memory). */
const char *py_dotted(struct py_ctx *c, TSNode dotted);

/* Add a binding (copied). A name declared `global` / `nonlocal` in b->scope
 * is bound in the module / enclosing function scope instead, as Python
 * does. Returns 0 or -ENOMEM (recorded in c). */
int py_bind(struct py_ctx *c, const struct py_binding *b);

/* First binding of name in scope (follow ->next for the others), or -1. */
int32_t py_bind_find(const struct py_ctx *c, int32_t scope, const char *name);

/* Nearest scope at or above s that is a function or the module (where a
 * walrus target in a comprehension binds). */
int32_t py_scope_non_comprehension(const struct py_ctx *c, int32_t s);

/* A cursor on n from the context's pool (so iterating children costs no
 * malloc), or NULL when the pool is exhausted. Release in LIFO order with
 * py_cursor_done(). */
TSTreeCursor *py_cursor(struct py_ctx *c, TSNode n);
void py_cursor_done(struct py_ctx *c, TSTreeCursor *cur);

/* Release the tables; the context struct is the caller's. */
void py_scope_free(struct py_ctx *c);

#endif
