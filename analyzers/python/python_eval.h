/* python_eval.h - phase 2 of the Python analysis: check every event the
 * walk recorded against the policy (see python_ctx.h). */
#ifndef SG_PYTHON_EVAL_H
#define SG_PYTHON_EVAL_H

#include "python_ctx.h"

/* Check all events in order. Returns 0 or a negative code (out of memory). */
int py_eval(struct py_ctx *c);

#endif
