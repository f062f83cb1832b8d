/* python_strargs.h - attribute paths hidden in the constant strings a call
 * is given (internal to the Python analyzer; see python_ctx.h).
 *
 * Several library functions read attributes named by a string argument:
 * string.Formatter().get_field("0.__class__", ...), pandas' DataFrame.agg
 * / apply("name"), logging's "%(x.y)s" styles. Rather than list every such
 * function, every constant string argument of every call is scanned. */
#ifndef SG_PYTHON_STRARGS_H
#define SG_PYTHON_STRARGS_H

#include "python_ctx.h"

/* Scan each constant string argument of the call ev->node (positional,
 * keyword values, and the elements of a literal `*[...]` / `*(...)`):
 * a word after a `.` is checked like an attribute (forbidden, dunder), and
 * a bare word that is a forbidden attribute containing `_` (`__globals__`,
 * `gi_frame`) is reported too. One violation per argument at most. */
void py_check_string_args(struct py_ctx *c, const struct py_event *ev);

#endif
