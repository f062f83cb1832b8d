/* python_rules.h - the policy's rules applied to resolved Python names
 * (internal to the Python analyzer; see python_ctx.h). Each check reports
 * its own violation at the node it is given. */
#ifndef SG_PYTHON_RULES_H
#define SG_PYTHON_RULES_H

#include "python_ctx.h"

/* Flags for py_check_cand(). */
#define PY_CK_CALLEE 1u /* the reference is the function of a call */
#define PY_CK_IMPORT 2u /* the name comes from an import statement */
#define PY_CK_ATTR 4u   /* an attribute step (obj.x, getattr, match pattern) */

/* Add a violation spanning node n. */
void py_report(struct py_ctx *c, TSNode n, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* 1 for "__x__" names. */
int py_is_dunder(const char *s);

/* What the import rule says about every `from mod import x`. */
enum py_module_verdict {
    PY_MODULE_ALLOWED,  /* whatever x is */
    PY_MODULE_REJECTED, /* whatever x is: report mod once */
    PY_MODULE_PER_NAME  /* depends on x: check "mod.x" for each name */
};
enum py_module_verdict py_module_verdict(const struct py_ctx *c, const char *mod);

/* Apply the import rule to module path mod (from an import statement, a
 * constant __import__ argument, a sys.modules key). */
void py_check_module(struct py_ctx *c, TSNode at, const char *mod);

/* Apply the attribute rules (forbidden, dunder) to name; how says where it
 * came from (" via getattr()", "" ...). Returns 1 when a violation was added. */
int py_check_attr_name(struct py_ctx *c, TSNode at, const char *name, const char *how);

/* The same, for an attribute of a known receiver: own is 1 when it is the
 * job's own object (its classes and functions, a method's self/cls), which
 * may use private and capability names freely. */
int py_check_attr_rules(struct py_ctx *c, TSNode at, const char *name, const char *how, int own);

/* 1 when name is private ("_x", not a dunder) and the policy denies it. */
int py_is_private(const struct sg_lang_policy *lp, const char *name);

/* Apply the name, call and module rules to one thing a reference may be.
 * via names the alias the reference went through (NULL: none). */
void py_check_cand(struct py_ctx *c, TSNode at, const struct py_cand *cand, unsigned flags,
                   const char *via);

/* The alias to mention for cand reached from identifier root, or NULL
 * when the reference spells the name itself. */
const char *py_via(const struct py_cand *cand, const char *root);

#endif
