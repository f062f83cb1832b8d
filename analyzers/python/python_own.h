/* python_own.h - what belongs to the job itself (internal to the Python
 * analyzer; see python_ctx.h).
 *
 * The private and capability attribute rules exempt the job's own objects:
 * its classes and functions, a method's self/cls, instances of its
 * classes. A method's self is the job's own only while Python binds it, so
 * the job's methods that read private or capability names through their
 * first parameter ("sensitive" methods) may not be taken unbound: calling
 * one with a package as the first argument would make the package its
 * self.
 */
#ifndef SG_PYTHON_OWN_H
#define SG_PYTHON_OWN_H

#include "python_ctx.h"

/* 1 when expression n (in scope) is the job's own object. */
int py_own_receiver(struct py_ctx *c, TSNode n, int32_t scope);

/* The method rules for attribute event ev (`X.name`): reports when name is
 * a sensitive method of the job's and the access may hand it a foreign
 * first argument. */
void py_check_method_access(struct py_ctx *c, const struct py_event *ev, const char *name);

/* 1 when name is a sensitive method of the job's (a name read as data:
 * getattr, attrgetter, which cannot tell a class from an instance). */
int py_is_sensitive_method(struct py_ctx *c, const char *name);

#endif
