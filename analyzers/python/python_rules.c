/* python_rules.c - policy rules on resolved names. */
#include "python_rules.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "ts_util.h"

void py_report(struct py_ctx *c, TSNode n, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = sg_ts_vreport(c->out, c->src, c->len, n, rule, fmt, ap);
    va_end(ap);
    if (r < 0)
        py_fail(c, r);
}

int py_is_dunder(const char *s)
{
    size_t n = strlen(s);
    return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';
}

/* 1 when some allow-list entry lies below mod ("urllib" for "urllib.parse"):
 * mod is then a package on the way to an allowed module. */
static int is_parent_of_entry(const struct sg_strset *set, const char *mod)
{
    size_t n = strlen(mod), lo = 0, hi = set->count;
    while (lo < hi) { /* first entry >= mod */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(set->items[mid], mod) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < set->count && strncmp(set->items[i], mod, n) == 0; i++)
        if (set->items[i][n] == '.')
            return 1;
    return 0;
}

/* Modules that are escape primitives wherever they are reached: in allow
 * mode an attribute step from an imported module to one of them
 * (`uuid.os`, `random._os`, `numpy.ctypeslib.ctypes`) is rejected unless the
 * policy allows that module itself. Kept short: every name here also
 * rejects a same-named submodule of an allowed package. */
static const char *const escape_modules[] = {
    "_ctypes",    "_pickle", "_posixsubprocess", "builtins", "codeop",  "ctypes",
    "gc",         "imp",     "importlib",        "inspect",  "marshal", "multiprocessing",
    "nt",         "os",      "pickle",           "posix",    "pty",     "runpy",
    "subprocess", "sys"};

/* "_os" is how many stdlib modules keep os: match it as "os". */
static const char *unprivate(const char *name)
{
    return name[0] == '_' && name[1] != '_' ? name + 1 : name;
}

static int is_escape_module(const char *name)
{
    for (size_t i = 0; i < sizeof(escape_modules) / sizeof(*escape_modules); i++)
        if (!strcmp(name, escape_modules[i]) || !strcmp(unprivate(name), escape_modules[i]))
            return 1;
    return 0;
}

/* Deny mode: the denied module mod reaches, or NULL. Every dotted suffix
 * counts, so `from glob import os` reaches os, and a private alias counts as
 * the module (`random._os`). With exact, a suffix must be an entry itself
 * (attribute steps are checked one step at a time). */
static const char *denied_in(const struct sg_lang_policy *lp, const char *mod, int exact)
{
    for (const char *p = mod; p; p = strchr(p, '.')) {
        if (*p == '.')
            p++;
        if (p == mod || !exact) {
            if (sg_strset_has_prefix(&lp->modules, p, '.') ||
                (p != mod && sg_strset_has_prefix(&lp->modules, unprivate(p), '.')))
                return p;
        } else if (sg_strset_has(&lp->modules, p) || sg_strset_has(&lp->modules, unprivate(p))) {
            return p;
        }
    }
    return NULL;
}

enum py_module_verdict py_module_verdict(const struct py_ctx *c, const char *mod)
{
    const struct sg_lang_policy *lp = c->lp;
    if (lp->import_mode == SG_IMPORTS_DENY)
        return denied_in(lp, mod, 0) ? PY_MODULE_REJECTED : PY_MODULE_PER_NAME;
    if (sg_strset_has_prefix(&lp->modules, mod, '.'))
        return PY_MODULE_ALLOWED;
    return is_parent_of_entry(&lp->modules, mod) ? PY_MODULE_PER_NAME : PY_MODULE_REJECTED;
}

void py_check_module(struct py_ctx *c, TSNode at, const char *mod)
{
    const struct sg_lang_policy *lp = c->lp;
    if (mod[0] != '.') /* top-level: "pandas" of "pandas.io.json" */
        sg_imports_add(c->imports, mod, strcspn(mod, "."));
    if (mod[0] == '.') {
        py_report(c, at,
                  lp->import_mode == SG_IMPORTS_ALLOW ? SG_RULE_IMPORT_NOT_ALLOWED
                                                      : SG_RULE_IMPORT_DENIED,
                  "relative import '%s' is not allowed: a job is a single file", mod);
        return;
    }
    if (lp->import_mode == SG_IMPORTS_ALLOW) {
        if (sg_strset_has_prefix(&lp->modules, mod, '.'))
            return;
        if (sg_strset_has_prefix(&lp->network_modules, mod, '.'))
            py_report(c, at, SG_RULE_NETWORK_DISABLED, "import of module '%s': %s", mod,
                      SG_NETWORK_DISABLED_HOW);
        else
            py_report(c, at, SG_RULE_IMPORT_NOT_ALLOWED, "import of module '%s' is not allowed",
                      mod);
        return;
    }
    const char *hit = denied_in(lp, mod, 0);
    if (hit == mod && sg_strset_has_prefix(&lp->network_modules, mod, '.')) {
        py_report(c, at, SG_RULE_NETWORK_DISABLED, "import of module '%s': %s", mod,
                  SG_NETWORK_DISABLED_HOW);
        return;
    }
    if (hit == mod)
        py_report(c, at, SG_RULE_IMPORT_DENIED, "import of module '%s' is denied", mod);
    else if (hit)
        py_report(c, at, SG_RULE_IMPORT_DENIED, "import of '%s' reaches denied module '%s'", mod,
                  hit);
}

int py_is_private(const struct sg_lang_policy *lp, const char *name)
{
    return lp->deny_private_attributes && name[0] == '_' && !py_is_dunder(name) &&
           !sg_strset_has(&lp->allowed_privates, name);
}

int py_check_attr_rules(struct py_ctx *c, TSNode at, const char *name, const char *how, int own)
{
    const struct sg_lang_policy *lp = c->lp;
    if (sg_strset_has(&lp->forbidden_attributes, name)) {
        py_report(c, at, SG_RULE_ATTRIBUTE_FORBIDDEN, "access to forbidden attribute '%s'%s", name,
                  how);
        return 1;
    }
    if (lp->deny_dunder_attributes && py_is_dunder(name) &&
        !sg_strset_has(&lp->allowed_dunders, name)) {
        py_report(c, at, SG_RULE_ATTRIBUTE_DUNDER, "access to dunder attribute '%s'%s", name, how);
        return 1;
    }
    if (own)
        return 0;
    if (py_is_private(lp, name)) {
        py_report(c, at, SG_RULE_ATTRIBUTE_PRIVATE,
                  "access to private attribute '%s'%s of an object the job did not define", name,
                  how);
        return 1;
    }
    if (sg_strset_has(&lp->capability_attributes, name)) {
        py_report(c, at, SG_RULE_ATTRIBUTE_CAPABILITY,
                  "access to capability attribute '%s'%s of an object the job did not define", name,
                  how);
        return 1;
    }
    return 0;
}

int py_check_attr_name(struct py_ctx *c, TSNode at, const char *name, const char *how)
{
    return py_check_attr_rules(c, at, name, how, 0);
}

/* A path reached from an import (`from numpy import testing`, a star
 * import's name, an alias of np.testing): every step after the module the
 * job imported is an attribute of a package, never the job's own. */
static void check_path_steps(struct py_ctx *c, TSNode at, const char *s)
{
    const struct sg_lang_policy *lp = c->lp;
    char step[PY_NAME_MAX];
    if (!lp->deny_private_attributes && lp->capability_attributes.count == 0)
        return;
    for (const char *p = strchr(s, '.'); p; p = strchr(p + 1, '.')) {
        const char *e = strchr(p + 1, '.');
        size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
        if (n == 0 || n >= sizeof(step))
            continue;
        memcpy(step, p + 1, n);
        step[n] = '\0';
        if (py_is_private(lp, step)) {
            py_report(c, at, SG_RULE_ATTRIBUTE_PRIVATE,
                      "'%s' reaches private name '%s' of a package", s, step);
            return;
        }
        if (sg_strset_has(&lp->capability_attributes, step)) {
            py_report(c, at, SG_RULE_ATTRIBUTE_CAPABILITY, "'%s' reaches capability name '%s'", s,
                      step);
            return;
        }
    }
}

/* The forbidden_calls entry s matches: s itself (a resolved root), or a
 * dotted suffix of two or more names (`x.os.system` on any object). An
 * import also matches by prefix: `import numpy.distutils.exec_command`
 * brings in the forbidden `numpy.distutils`. */
static const char *forbidden_call(const struct sg_lang_policy *lp, const struct py_cand *cand,
                                  unsigned flags, char *buf, size_t bufsz)
{
    const char *s = cand->s;
    if (cand->kind != PC_OPAQUE && sg_strset_has(&lp->forbidden_calls, s))
        return s;
    for (const char *d = strchr(s, '.'); (flags & PY_CK_IMPORT) && d; d = strchr(d + 1, '.')) {
        size_t n = (size_t)(d - s);
        if (n < bufsz && strchr(d + 1, '.') != d + 1) {
            memcpy(buf, s, n);
            buf[n] = '\0';
            if (strchr(buf, '.') && sg_strset_has(&lp->forbidden_calls, buf))
                return buf;
        }
    }
    for (const char *p = cand->kind == PC_OPAQUE ? s : strchr(s, '.'); p && *p;
         p = strchr(p, '.')) {
        if (*p == '.')
            p++;
        if (strchr(p, '.') && sg_strset_has(&lp->forbidden_calls, p))
            return p;
    }
    return NULL;
}

/* Functions that take a name to look up: used other than by a direct call
 * they are a dynamic lookup nobody can check. */
static void check_reflective_ref(struct py_ctx *c, TSNode at, const char *s, unsigned flags)
{
    static const char *const attr_fns[] = {"builtins.getattr",         "builtins.setattr",
                                           "builtins.delattr",         "builtins.hasattr",
                                           "operator.attrgetter",      "operator.methodcaller",
                                           "functools.update_wrapper", "functools.wraps"};
    static const char *const import_fns[] = {"builtins.__import__", "importlib.import_module",
                                             "importlib.__import__"};
    if (flags & (PY_CK_CALLEE | PY_CK_IMPORT))
        return;
    for (size_t i = 0; c->lp->deny_dynamic_attributes && i < sizeof(attr_fns) / sizeof(*attr_fns);
         i++)
        if (!strcmp(s, attr_fns[i]))
            py_report(c, at, SG_RULE_REFLECTION_DYNAMIC,
                      "'%s' used other than in a direct call: its names cannot be checked",
                      strrchr(s, '.') + 1);
    for (size_t i = 0; c->lp->deny_dynamic_imports && i < sizeof(import_fns) / sizeof(*import_fns);
         i++)
        if (!strcmp(s, import_fns[i]))
            py_report(c, at, SG_RULE_IMPORT_DYNAMIC,
                      "'%s' used other than in a direct call: its module cannot be checked",
                      strrchr(s, '.') + 1);
}

/* An attribute step on a module: a module the policy does not allow
 * reached through one it does (`import urllib.parse; urllib.request`), or
 * (deny mode) a denied module reached through any other (`glob.os`). */
static void check_module_step(struct py_ctx *c, TSNode at, const struct py_cand *cand)
{
    const struct sg_lang_policy *lp = c->lp;
    const char *s = cand->s, *last = strrchr(s, '.');
    char parent[PY_NAME_MAX];
    size_t pl = last ? (size_t)(last - s) : 0;
    if (!last || pl >= sizeof(parent))
        return;
    memcpy(parent, s, pl);
    parent[pl] = '\0';
    if (lp->import_mode == SG_IMPORTS_DENY) {
        /* reported once, at the step that first reaches a denied module */
        const char *hit = denied_in(lp, parent, 0) ? NULL : denied_in(lp, s, 1);
        if (hit)
            py_report(c, at, SG_RULE_IMPORT_DENIED, "'%s' reaches denied module '%s'", s, hit);
        return;
    }
    int parent_ok =
        sg_strset_has_prefix(&lp->modules, parent, '.') || is_parent_of_entry(&lp->modules, parent);
    if (parent_ok && !sg_strset_has_prefix(&lp->modules, s, '.') &&
        !is_parent_of_entry(&lp->modules, s)) {
        py_report(c, at, SG_RULE_IMPORT_NOT_ALLOWED,
                  "module '%s' (reached through '%s') is not allowed", s, parent);
        return;
    }
    const char *name = last + 1;
    if (is_escape_module(name) && !sg_strset_has_prefix(&lp->modules, name, '.') &&
        !sg_strset_has_prefix(&lp->modules, unprivate(name), '.'))
        py_report(c, at, SG_RULE_IMPORT_NOT_ALLOWED,
                  "'%s' reaches module '%s', which is not allowed", s, unprivate(name));
}

void py_check_cand(struct py_ctx *c, TSNode at, const struct py_cand *cand, unsigned flags,
                   const char *via)
{
    const struct sg_lang_policy *lp = c->lp;
    const char *s = cand->s;
    char how[PY_NAME_MAX + 32] = "";
    if (via)
        snprintf(how, sizeof(how), " (via alias '%s')", via);
    if (cand->kind == PC_BUILTIN || cand->kind == PC_IMPORT) {
        if (!strncmp(s, "builtins.", 9) && !strchr(s + 9, '.') &&
            sg_strset_has(&lp->forbidden_names, s + 9))
            py_report(c, at, SG_RULE_NAME_FORBIDDEN, "reference to forbidden builtin '%s'%s", s + 9,
                      how);
        check_reflective_ref(c, at, s, flags);
    }
    char prefix[PY_NAME_MAX];
    const char *fc = forbidden_call(lp, cand, flags, prefix, sizeof(prefix));
    if (fc)
        py_report(c, at, SG_RULE_CALL_FORBIDDEN, "%s forbidden function '%s'%s",
                  flags & PY_CK_CALLEE   ? "call to"
                  : flags & PY_CK_IMPORT ? "import of"
                                         : "reference to",
                  fc, how);
    if (cand->kind == PC_IMPORT && (flags & PY_CK_ATTR))
        check_module_step(c, at, cand);
    /* an attribute step checks its own name where it is taken */
    if (cand->kind == PC_IMPORT && (!(flags & PY_CK_ATTR) || (flags & PY_CK_IMPORT)))
        check_path_steps(c, at, s);
}

const char *py_via(const struct py_cand *cand, const char *root)
{
    if (!root || cand->kind == PC_OPAQUE || cand->kind == PC_NAMESPACE || cand->kind == PC_ATTRS)
        return NULL;
    const char *s = cand->s;
    if (cand->kind == PC_BUILTIN || !strncmp(s, "builtins.", 9))
        s += 9;
    size_t n = strlen(root);
    return strncmp(s, root, n) == 0 && (s[n] == '.' || s[n] == '\0') ? NULL : root;
}
