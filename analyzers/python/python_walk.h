/* python_walk.h - phase 1 of the Python analysis: one iterative walk over
 * the tree that enforces the structural limits and collects scopes,
 * bindings and the events phase 2 checks (see python_ctx.h). */
#ifndef SG_PYTHON_WALK_H
#define SG_PYTHON_WALK_H

#include "python_ctx.h"

/* Walk the tree under root (which has no error nodes). Sets c->nodes and
 * c->max_depth; a limit or a Python 2 statement adds its violation and sets
 * c->stopped. Returns 0, or a negative code (out of memory). */
int py_walk(struct py_ctx *c, TSNode root);

#endif
