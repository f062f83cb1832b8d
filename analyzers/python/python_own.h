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

/* py_own_receiver() with the nesting so far (the inference recurses). */
int py_own_value(struct py_ctx *c, TSNode n, int32_t scope, int depth);

/* Coinductive inference: what is being inferred counts as the job's own
 * while it is (a value enters a cycle of assignments only through one
 * outside it, checked there). Returns -1 when key is already assumed in
 * this mode (answer: own), 0 when no more can be open (answer: not own), 1
 * when assumed: infer, then py_own_release(). */
int py_own_assume(struct py_ctx *c, const void *key);
void py_own_release(struct py_ctx *c);

/* def node fn binds an instance as its first parameter: not a classmethod
 * (decorated, or implicitly one) and not __new__. */
int py_binds_instance(struct py_ctx *c, TSNode fn);

/* python_own_flow.c. 1 when no class of the job's can be a value anywhere
 * the analysis does not see it (so an expression that is not
 * py_class_valued() is never one): its names are only called, read from,
 * compared with `is` or with classes, raised, caught or given to
 * isinstance; no type(x), super() or cls is a value; no annotation naming
 * one is read back; none sits in a class body or behind a decorator other
 * than dataclass/total_ordering; no dunder Python hands a class
 * (`__set_name__`, `__get__`, `__init_subclass__`, ...) is written. Once per
 * analysis. */
int py_class_values_contained(struct py_ctx *c);

/* Expression n is syntactically a class: one of the job's class names, a
 * classmethod's cls, type(...), super(...). */
int py_class_valued(struct py_ctx *c, TSNode n, int32_t scope);

/* python_own_infer.c. Class cls (a class_definition of the job's) has only
 * the job's classes, builtins and a few standard-library classes in its
 * hierarchy, nor is it a base of a class that has more. */
int py_class_plain(struct py_ctx *c, TSNode cls);

/* The function whose first parameter is `name` as read at use (the
 * innermost def binding it so); a null node when there is none. */
TSNode py_self_def(struct py_ctx *c, TSNode use, const char *name);

/* The class whose body holds def node def; a null node when none does. */
TSNode py_def_class(struct py_ctx *c, TSNode def);

/* 1 when expression n is certainly an instance of the job's classes, so a
 * method taken on it is bound: a method's self (not in a classmethod or
 * __new__), a call of the job's class, an isinstance-narrowed parameter,
 * a name bound only to these. */
int py_own_instance(struct py_ctx *c, TSNode n, int32_t scope, int depth);

/* Calling one of the job's classes gives its instance: no __new__ of the
 * job's returns anything but the job's own objects. */
int py_instances_own(struct py_ctx *c, int depth);

/* Every value the job stores in a field `name` (x.name = v anywhere, class
 * bodies) is its own object or a constant, and nothing stores there unseen. */
int py_field_own(struct py_ctx *c, const char *name, int depth);

/* f(...) where every binding of identifier f is a function of the job's
 * (undecorated) whose every return value is the job's own or a constant. */
int py_own_function_result(struct py_ctx *c, TSNode f, int32_t scope, int depth);

/* R.m(...) where R's class is known (py_own_class_of) and neither it nor
 * any class related to it by inheritance has a base other than the job's
 * classes, object or a builtin exception, m is only ever a method defined
 * in the job's class bodies (nothing stores to `.m`), each returning only
 * own values or constants. */
int py_own_method_result(struct py_ctx *c, TSNode attr, int32_t scope, int depth);

/* The job's class whose instance (or which itself) expression n is: a
 * method's self/cls, C or C(...), a name bound only to these, or R.m(...)
 * where every def of m ends `return self`; a null node when not known. */
TSNode py_own_class_of(struct py_ctx *c, TSNode n, int32_t scope, int depth);

/* Parameter `name`, read at use, is checked there by isinstance() against
 * the job's plain classes (an enclosing `and`, if or conditional
 * expression, or an earlier `if not isinstance(...): return/raise`). */
int py_narrowed_own(struct py_ctx *c, TSNode use, const char *name, int32_t scope);

/* The method rules for attribute event ev (`X.name`): reports when name is
 * a sensitive method of the job's and the access may hand it a foreign
 * first argument: X is a class of the job's, or may be one (a value that
 * is not provably an instance while classes may be values). */
void py_check_method_access(struct py_ctx *c, const struct py_event *ev, const char *name);

/* A name read in a class body (`table = {"go": go}`) that is a sensitive
 * method defined there: reported unless it only stays behind a descriptor
 * (`@go.setter`, `property(go)`). */
void py_check_method_name(struct py_ctx *c, const struct py_event *ev, const char *name);

/* 1 when name is a sensitive method of the job's (a name read as data:
 * getattr, attrgetter, which cannot tell a class from an instance). */
int py_is_sensitive_method(struct py_ctx *c, const char *name);

#endif
