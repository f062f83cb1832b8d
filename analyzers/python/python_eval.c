/* python_eval.c - phase 2: every recorded event against the policy. */
#include "python_eval.h"

#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "python_fold.h"
#include "python_own.h"
#include "python_resolve.h"
#include "python_rules.h"
#include "python_scope.h"
#include "python_strargs.h"
#include "rules.h"

/* Positional arguments of attrgetter() examined. */
#define ATTRGETTER_ARGS_MAX 16
/* Names of one match dotted pattern examined. */
#define CHAIN_NAMES_MAX 32

enum ns_kind { NS_NONE, NS_NAMES, NS_ATTRS, NS_MODULES };

static void report_complex(struct py_ctx *c, TSNode n, const char *what)
{
    py_report(c, n, SG_RULE_DEPTH,
              "cannot resolve '%s': too many possible values or too long an alias chain", what);
}

static void check_cands(struct py_ctx *c, TSNode at, const struct py_cands *k, unsigned flags,
                        const char *root, const char *what)
{
    if (k->overflow)
        report_complex(c, at, what);
    for (uint32_t i = 0; i < k->n && !c->err; i++)
        py_check_cand(c, at, &k->v[i], flags, py_via(&k->v[i], root));
}

static void eval_name(struct py_ctx *c, const struct py_event *ev)
{
    const struct sg_lang_policy *lp = c->lp;
    const char *name = py_name(c, ev->node);
    struct py_cands k = {0};
    if (!name)
        return;
    py_resolve_name(c, ev->node, name, ev->scope, 0, &k);
    int builtin = 0;
    for (uint32_t i = 0; i < k.n; i++)
        builtin |= k.v[i].kind == PC_BUILTIN;
    /* module globals such as __loader__ or __spec__ lead to the import system */
    if (builtin && lp->deny_dunder_attributes && py_is_dunder(name) &&
        !sg_strset_has(&lp->allowed_dunders, name) && !sg_strset_has(&lp->forbidden_names, name))
        py_report(c, ev->node, SG_RULE_ATTRIBUTE_DUNDER, "reference to dunder name '%s'", name);
    check_cands(c, ev->node, &k, ev->callee ? PY_CK_CALLEE : 0, name, name);
    py_check_method_name(c, ev, name);
}

/* The identifier an attribute chain starts from, or NULL. */
static const char *chain_root(struct py_ctx *c, TSNode n)
{
    const struct py_fields *f = &c->L->f;
    for (int guard = 0; guard < PY_RESOLVE_DEPTH * 4; guard++) {
        enum py_kind k = py_kind(c, n);
        if (k == PK_ATTRIBUTE)
            n = ts_node_child_by_field_id(n, f->object);
        else if (k == PK_PAREN)
            n = py_first_expr(c, n);
        else
            return k == PK_IDENTIFIER ? py_name(c, n) : NULL;
    }
    return NULL;
}

static void eval_attr(struct py_ctx *c, const struct py_event *ev)
{
    TSNode an = ts_node_child_by_field_id(ev->node, c->L->f.attribute);
    const char *name = py_name(c, an);
    struct py_cands k = {0};
    if (!name)
        return;
    /* only the private and capability rules exempt the job's own objects */
    int own = (py_is_private(c->lp, name) || sg_strset_has(&c->lp->capability_attributes, name)) &&
              py_own_receiver(c, ts_node_child_by_field_id(ev->node, c->L->f.object), ev->scope);
    py_check_attr_rules(c, an, name, "", own);
    py_check_method_access(c, ev, name);
    py_resolve(c, ev->node, ev->scope, 0, &k);
    check_cands(c, ev->node, &k, PY_CK_ATTR | (ev->callee ? PY_CK_CALLEE : 0),
                chain_root(c, ev->node), name);
}

/* A match value pattern `case a.b.c:` or class pattern `case C(...)`. */
static void eval_chain(struct py_ctx *c, const struct py_event *ev)
{
    const char *names[CHAIN_NAMES_MAX];
    int k = 0;
    TSNode root = {0};
    uint32_t count = ts_node_named_child_count(ev->node);
    for (uint32_t i = 0; i < count && k < CHAIN_NAMES_MAX; i++) {
        TSNode id = ts_node_named_child(ev->node, i);
        if (py_kind(c, id) != PK_IDENTIFIER)
            continue;
        if (ts_node_is_null(root)) {
            root = id;
            continue;
        }
        if (!(names[k++] = py_name(c, id)))
            return;
        py_check_attr_name(c, id, names[k - 1], "");
    }
    if (ts_node_is_null(root))
        return;
    struct py_cands roots = {0}, out = {0};
    py_resolve(c, root, ev->scope, 0, &roots);
    py_cands_extend(c, &roots, names, k, &out);
    check_cands(c, ev->node, &out, k ? PY_CK_ATTR : 0, py_name(c, root), "pattern");
}

/* One imported name of `import p` / `from m import p`. */
static void eval_import_name(struct py_ctx *c, TSNode k, const char *mod, int verdict)
{
    TSNode target =
        py_kind(c, k) == PK_ALIASED_IMPORT ? ts_node_child_by_field_id(k, c->L->f.name) : k;
    const char *path = py_dotted(c, target);
    char full[PY_NAME_MAX];
    if (!path)
        return;
    snprintf(full, sizeof(full), "%s%s%s", mod ? mod : "", mod ? "." : "", path);
    if (verdict == PY_MODULE_PER_NAME)
        py_check_module(c, k, full);
    /* `from random import _os` is the attribute step random._os */
    struct py_cand cand = {.s = full, .len = (uint32_t)strlen(full), .kind = PC_IMPORT};
    py_check_cand(c, k, &cand,
                  PY_CK_IMPORT | (mod && verdict == PY_MODULE_ALLOWED ? PY_CK_ATTR : 0), NULL);
}

static void eval_import(struct py_ctx *c, const struct py_event *ev)
{
    const struct py_fields *f = &c->L->f;
    TSNode n = ev->node, modn = ts_node_child_by_field_id(n, f->module_name);
    int from = py_kind(c, n) == PK_IMPORT_FROM, verdict = PY_MODULE_PER_NAME;
    const char *mod = NULL;
    if (from && py_kind(c, modn) == PK_RELATIVE_IMPORT) {
        char rel[PY_NAME_MAX];
        size_t a = ts_node_start_byte(modn), b = ts_node_end_byte(modn);
        snprintf(rel, sizeof(rel), "%.*s", (int)(b - a < 200 ? b - a : 200), c->src + a);
        py_check_module(c, modn, rel);
        return;
    }
    if (from) {
        if (!(mod = py_dotted(c, modn)))
            return;
        sg_imports_add(c->imports, mod, strcspn(mod, ".")); /* whatever the verdict */
        /* `from os import a, b` is one problem, reported once */
        verdict = py_module_verdict(c, mod);
        if (verdict == PY_MODULE_REJECTED)
            py_check_module(c, modn, mod);
    }
    TSTreeCursor *cur = py_cursor(c, n);
    for (int more = cur && ts_tree_cursor_goto_first_child(cur); more && !c->err;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        TSNode k = ts_tree_cursor_current_node(cur);
        if (py_kind(c, k) == PK_WILDCARD_IMPORT && verdict == PY_MODULE_PER_NAME)
            py_check_module(c, k, mod);
        else if (ts_tree_cursor_current_field_id(cur) == f->name)
            eval_import_name(c, k, mod, verdict);
    }
    py_cursor_done(c, cur);
}

static int cand_is(const struct py_cand *k, const char *s)
{
    return (k->kind == PC_BUILTIN || k->kind == PC_IMPORT) && !strcmp(k->s, s);
}

/* getattr/setattr/delattr/hasattr(obj, NAME, ...). */
static void check_getattr(struct py_ctx *c, const struct py_event *ev, const char *fname)
{
    int unknown;
    TSNode a = py_call_arg(c, ev->node, 1, NULL, &unknown);
    struct py_sbuf name = {0};
    char how[48];
    snprintf(how, sizeof(how), " via %s()", fname);
    if (ts_node_is_null(a) || !py_fold_str(c, a, ev->scope, 0, &name)) {
        if (c->lp->deny_dynamic_attributes)
            py_report(c, ts_node_is_null(a) ? ev->node : a, SG_RULE_REFLECTION_DYNAMIC,
                      "%s() with a non-constant attribute name", fname);
        return;
    }
    py_check_attr_name(c, a, name.s, how);
    if (py_is_sensitive_method(c, name.s))
        py_report(c, a, SG_RULE_ATTRIBUTE_PRIVATE,
                  "method '%s' of the job's taken by name: its self could be any object", name.s);
    if (strcmp(fname, "getattr"))
        return;
    /* the result is obj.NAME: apply the call and module rules to it */
    struct py_cands k = {0};
    py_resolve(c, ev->node, ev->scope, 0, &k);
    for (uint32_t i = 0; i < k.n; i++)
        if (k.v[i].kind != PC_OPAQUE || strchr(k.v[i].s, '.'))
            py_check_cand(c, ev->node, &k.v[i], PY_CK_ATTR | (ev->callee ? PY_CK_CALLEE : 0), NULL);
}

/* __import__ / importlib.import_module(NAME). */
static void check_importer(struct py_ctx *c, const struct py_event *ev, const char *fname)
{
    int unknown;
    TSNode a = py_call_arg(c, ev->node, 0, "name", &unknown);
    struct py_sbuf name = {0};
    if (!ts_node_is_null(a) && py_fold_str(c, a, ev->scope, 0, &name))
        py_check_module(c, a, name.s);
    else if (c->lp->deny_dynamic_imports)
        py_report(c, ts_node_is_null(a) ? ev->node : a, SG_RULE_IMPORT_DYNAMIC,
                  "%s() with a non-constant module name", fname);
}

/* operator.attrgetter("a.b", ...) / operator.methodcaller("name", ...). */
static void check_attrgetter(struct py_ctx *c, const struct py_event *ev, int methodcaller)
{
    const char *fname = methodcaller ? "methodcaller" : "attrgetter";
    char how[48];
    snprintf(how, sizeof(how), " via %s()", fname);
    for (uint32_t i = 0; i < (methodcaller ? 1u : ATTRGETTER_ARGS_MAX); i++) {
        int unknown;
        TSNode a = py_call_arg(c, ev->node, i, NULL, &unknown);
        struct py_sbuf name = {0};
        if (ts_node_is_null(a) && !unknown && i > 0)
            return;
        if (ts_node_is_null(a) || !py_fold_str(c, a, ev->scope, 0, &name)) {
            if (c->lp->deny_dynamic_attributes)
                py_report(c, ts_node_is_null(a) ? ev->node : a, SG_RULE_REFLECTION_DYNAMIC,
                          "%s() with a non-constant attribute name", fname);
            return;
        }
        for (char *p = name.s, *dot; p; p = dot ? dot + 1 : NULL) {
            dot = strchr(p, '.');
            if (dot)
                *dot = '\0';
            py_check_attr_name(c, a, p, how);
            if (!methodcaller && py_is_sensitive_method(c, p))
                py_report(c, a, SG_RULE_ATTRIBUTE_PRIVATE,
                          "method '%s' of the job's taken by name: its self could be any object",
                          p);
        }
    }
}

struct text_check {
    TSNode at;
    const char *how;
};

/* A name read out of a constant string (format field, expression word). */
static void text_name(struct py_ctx *c, const char *s, size_t n, void *ud)
{
    const struct text_check *t = ud;
    char name[PY_NAME_MAX];
    if (n == 0 || n >= sizeof(name))
        return;
    memcpy(name, s, n);
    name[n] = '\0';
    py_check_attr_name(c, t->at, name, t->how);
}

/* Whether an unfolded template/expression is a string the call walks as
 * names: always for eval/query (pandas evaluates it) and for vformat and
 * str.format; for .format/.format_map when the receiver is an expression
 * that may be a string: anything but pandas' `df.style`, whose format()
 * takes formatters, not a template. */
static int template_is_data(struct py_ctx *c, int fmt, int str_format, TSNode recv, TSNode arg0)
{
    if (!c->lp->deny_dynamic_attributes)
        return 0;
    if (!fmt || str_format)
        return 1;
    enum py_kind k = py_kind(c, recv);
    (void)arg0;
    if (k == PK_ATTRIBUTE) {
        const char *last = py_name(c, ts_node_child_by_field_id(recv, c->L->f.attribute));
        return !last || strcmp(last, "style") != 0;
    }
    return k == PK_IDENTIFIER || k == PK_STRING || k == PK_CONCAT_STRING || k == PK_BINARY_OP ||
           k == PK_CALL || k == PK_SUBSCRIPT || k == PK_PAREN || k == PK_CONDITIONAL;
}

/* '{0.__class__}'.format(x): replacement fields read attributes; pandas'
 * eval/query strings name attributes too. The template is read whole,
 * whatever its length (py_template_text). */
static void check_template(struct py_ctx *c, const struct py_event *ev, TSNode fn,
                           const char *method, int str_format)
{
    const struct py_fields *f = &c->L->f;
    int unknown;
    struct py_text s = {.cap = c->len + PY_NAME_MAX};
    int fmt = str_format || strncmp(method, "format", 6) == 0 || !strcmp(method, "vformat");
    TSNode src = str_format ? py_call_arg(c, ev->node, 0, NULL, &unknown)
                 : fmt      ? ts_node_child_by_field_id(fn, f->object)
                            : py_call_arg(c, ev->node, 0, "expr", &unknown);
    s.s = malloc(s.cap);
    if (!s.s) {
        py_fail(c, -ENOMEM);
        return;
    }
    s.s[0] = '\0';
    if (ts_node_is_null(src) || !py_template_text(c, src, ev->scope, 0, &s)) {
        /* string.Formatter().format(TEMPLATE, ...) and vformat */
        TSNode first = src;
        src = fmt && !str_format ? py_call_arg(c, ev->node, 0, NULL, &unknown) : (TSNode){0};
        s.n = 0;
        if (ts_node_is_null(src) || !py_template_text(c, src, ev->scope, 0, &s)) {
            if (template_is_data(c, fmt, str_format, first, src))
                py_report(
                    c, ts_node_is_null(first) ? ev->node : first, SG_RULE_REFLECTION_DYNAMIC,
                    "%s() with a %s that is not a constant string: its names cannot be checked",
                    method, fmt ? "format template" : "expression");
            goto out;
        }
    }
    struct text_check t = {.at = src,
                           .how = fmt ? " in a format string" : " in an expression string"};
    if (fmt)
        py_format_fields(c, s.s, s.n, text_name, &t);
    else
        py_words(c, s.s, s.n, text_name, &t);
out:
    free(s.s);
}

static enum ns_kind ns_of(const struct py_cand *k)
{
    if (k->kind == PC_NAMESPACE)
        return NS_NAMES;
    if (k->kind == PC_ATTRS)
        return NS_ATTRS;
    if (cand_is(k, "sys.modules"))
        return NS_MODULES;
    if (cand_is(k, "builtins.__builtins__"))
        return NS_NAMES;
    return NS_NONE;
}

/* globals()[KEY], vars(x)[KEY], sys.modules[KEY] and their .get(KEY). */
static void check_key(struct py_ctx *c, TSNode key, int32_t scope, const struct py_cand *m,
                      TSNode at)
{
    enum ns_kind ns = ns_of(m);
    const struct sg_lang_policy *lp = c->lp;
    struct py_sbuf k = {0};
    if (ts_node_is_null(key) || !py_fold_str(c, key, scope, 0, &k)) {
        TSNode where = ts_node_is_null(key) ? at : key;
        if (ns == NS_MODULES && lp->deny_dynamic_imports)
            py_report(c, where, SG_RULE_IMPORT_DYNAMIC,
                      "sys.modules indexed by a non-constant name");
        else if (ns != NS_MODULES && lp->deny_dynamic_attributes)
            py_report(c, where, SG_RULE_REFLECTION_DYNAMIC,
                      "namespace dictionary indexed by a non-constant name");
        return;
    }
    if (ns == NS_MODULES) {
        py_check_module(c, key, k.s);
    } else if (ns == NS_ATTRS) {
        /* vars(obj)["x"] / obj.__dict__["x"] is obj.x */
        if (!py_check_attr_name(c, key, k.s, " via __dict__")) {
            struct py_cands obj = {0}, out = {0};
            const char *names[1] = {k.s};
            py_cands_add(c, &obj, (enum py_cand_kind)m->aux, m->s, m->len, 0);
            py_cands_extend(c, &obj, names, 1, &out);
            for (uint32_t i = 0; i < out.n; i++)
                py_check_cand(c, key, &out.v[i], PY_CK_ATTR, NULL);
        }
    } else if (sg_strset_has(&lp->forbidden_names, k.s)) {
        py_report(c, key, SG_RULE_NAME_FORBIDDEN,
                  "access to forbidden name '%s' through a namespace dictionary", k.s);
    } else if (lp->deny_dunder_attributes && py_is_dunder(k.s) &&
               !sg_strset_has(&lp->allowed_dunders, k.s)) {
        py_report(c, key, SG_RULE_ATTRIBUTE_DUNDER,
                  "access to dunder name '%s' through a namespace dictionary", k.s);
    }
}

/* Check KEY against each namespace `obj` may be (names and modules once). */
static void check_mapping(struct py_ctx *c, TSNode obj, TSNode key, int32_t scope, TSNode at)
{
    struct py_cands k = {0};
    unsigned done = 0;
    py_resolve(c, obj, scope, 0, &k);
    for (uint32_t i = 0; i < k.n; i++) {
        enum ns_kind ns = ns_of(&k.v[i]);
        if (ns != NS_NONE && (ns == NS_ATTRS || !(done & (1u << ns)))) {
            done |= 1u << ns;
            check_key(c, key, scope, &k.v[i], at);
        }
    }
}

/* numpy.load(f, allow_pickle=X) (X is argument `pos`): unpickling a file the program wrote is
 * running code, as pandas.read_pickle is. Only a literal False (or no
 * argument) passes. */
static void check_allow_pickle(struct py_ctx *c, const struct py_event *ev, const char *fname,
                               uint32_t pos)
{
    int unknown;
    TSNode a = py_call_arg(c, ev->node, pos, "allow_pickle", &unknown);
    if (ts_node_is_null(a) && !unknown)
        return;
    if (!ts_node_is_null(a)) {
        uint32_t s = ts_node_start_byte(a), e = ts_node_end_byte(a);
        if (e - s == 5 && memcmp(c->src + s, "False", 5) == 0)
            return;
    }
    py_report(c, ts_node_is_null(a) ? ev->node : a, SG_RULE_CALL_FORBIDDEN,
              "%s() with allow_pickle other than False unpickles (runs code from) the file", fname);
}

/* update_wrapper(w, f, assigned, updated) / wraps(f, assigned, updated):
 * the names are read from one object and set on another, so each must be
 * a constant the attribute rules accept. Absent, the defaults apply. */
static void check_name_list(struct py_ctx *c, const struct py_event *ev, uint32_t pos,
                            const char *kw)
{
    int unknown;
    TSNode a = py_call_arg(c, ev->node, pos, kw, &unknown);
    if (ts_node_is_null(a) && !unknown)
        return;
    enum py_kind k = py_kind(c, a);
    uint32_t n = ts_node_is_null(a) ? 0 : ts_node_named_child_count(a);
    if ((k == PK_TUPLE || k == PK_LIST) && n <= ATTRGETTER_ARGS_MAX) {
        for (uint32_t i = 0; i < n; i++) {
            TSNode e = ts_node_named_child(a, i);
            struct py_sbuf name = {0};
            if (ts_node_is_extra(e))
                continue;
            if (!py_fold_str(c, e, ev->scope, 0, &name)) {
                a = e;
                goto dynamic;
            }
            py_check_attr_name(c, e, name.s, " via update_wrapper()");
        }
        return;
    }
dynamic:
    if (c->lp->deny_dynamic_attributes)
        py_report(
            c, ts_node_is_null(a) ? ev->node : a, SG_RULE_REFLECTION_DYNAMIC,
            "'%s' names attributes to copy: only a literal tuple of constant names is checked", kw);
}

/* Backends the plotting libraries import by name: a name outside this set
 * (`module://x`, a pandas plotting backend) imports a module. */
static int known_backend(const char *s)
{
    static const char *const names[] = {"matplotlib", "agg",   "svg", "pdf",
                                        "ps",         "cairo", "pgf", "template"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        if (!strcasecmp(s, names[i]))
            return 1;
    return 0;
}

static void check_backend(struct py_ctx *c, TSNode v, int32_t scope, TSNode at)
{
    struct py_sbuf name = {0};
    if (!ts_node_is_null(v) && py_fold_str(c, v, scope, 0, &name) && known_backend(name.s))
        return;
    if (c->lp->deny_dynamic_imports)
        py_report(c, ts_node_is_null(v) ? at : v, SG_RULE_IMPORT_DYNAMIC,
                  "a plotting backend other than a constant built-in one imports a module by name");
}

/* Keyword arguments whose value decides code, on any callee: allow_pickle
 * (numpy's loaders, however reached: a partial, an alias, a parameter)
 * and backend (pandas' plot(backend=...) imports it). */
static void check_keywords(struct py_ctx *c, const struct py_event *ev)
{
    int unknown;
    TSNode a = py_call_arg(c, ev->node, UINT32_MAX, "allow_pickle", &unknown);
    if (!ts_node_is_null(a)) {
        uint32_t s = ts_node_start_byte(a), e = ts_node_end_byte(a);
        if (e - s != 5 || memcmp(c->src + s, "False", 5) != 0)
            py_report(c, a, SG_RULE_CALL_FORBIDDEN,
                      "allow_pickle other than False unpickles (runs code from) the file");
    }
    a = py_call_arg(c, ev->node, UINT32_MAX, "backend", &unknown);
    if (!ts_node_is_null(a))
        check_backend(c, a, ev->scope, ev->node);
}

/* pandas.set_option(KEY, VALUE): a backend key takes a module name. */
static void check_set_option(struct py_ctx *c, const struct py_event *ev)
{
    int unknown;
    TSNode k = py_call_arg(c, ev->node, 0, "pat", &unknown);
    struct py_sbuf key = {0};
    if (!ts_node_is_null(k) && py_fold_str(c, k, ev->scope, 0, &key) && !strstr(key.s, "backend"))
        return;
    check_backend(c, py_call_arg(c, ev->node, 1, NULL, &unknown), ev->scope, ev->node);
}

static void eval_call(struct py_ctx *c, const struct py_event *ev)
{
    const struct py_fields *f = &c->L->f;
    TSNode fn = ts_node_child_by_field_id(ev->node, f->function);
    struct py_cands k = {0};
    py_resolve(c, fn, ev->scope, 0, &k);
    for (uint32_t i = 0; i < k.n && !c->err; i++) {
        const struct py_cand *fc = &k.v[i];
        if (cand_is(fc, "builtins.getattr") || cand_is(fc, "builtins.setattr") ||
            cand_is(fc, "builtins.delattr") || cand_is(fc, "builtins.hasattr"))
            check_getattr(c, ev, fc->s + 9);
        else if (cand_is(fc, "builtins.__import__") || cand_is(fc, "importlib.__import__") ||
                 cand_is(fc, "importlib.import_module"))
            check_importer(c, ev, strrchr(fc->s, '.') + 1);
        else if (cand_is(fc, "operator.attrgetter") || cand_is(fc, "operator.methodcaller"))
            check_attrgetter(c, ev, fc->s[9] == 'm');
        else if (cand_is(fc, "builtins.str.format"))
            check_template(c, ev, fn, "format", 1);
        else if (cand_is(fc, "numpy.load") || cand_is(fc, "numpy.lib.npyio.load"))
            check_allow_pickle(c, ev, fc->s, 2);
        else if (cand_is(fc, "numpy.lib.format.read_array"))
            check_allow_pickle(c, ev, fc->s, 1);
        else if (cand_is(fc, "functools.update_wrapper") || cand_is(fc, "functools.wraps")) {
            uint32_t pos = fc->s[10] == 'u' ? 2 : 1;
            check_name_list(c, ev, pos, "assigned");
            check_name_list(c, ev, pos + 1, "updated");
        } else if (cand_is(fc, "matplotlib.use") ||
                   cand_is(fc, "matplotlib.pyplot.switch_backend")) {
            int unknown;
            check_backend(c, py_call_arg(c, ev->node, 0, "backend", &unknown), ev->scope, ev->node);
        } else if (cand_is(fc, "pandas.set_option")) {
            check_set_option(c, ev);
        }
    }
    check_keywords(c, ev);
    if (py_kind(c, fn) != PK_ATTRIBUTE || c->err)
        return;
    const char *m = py_name(c, ts_node_child_by_field_id(fn, f->attribute));
    if (!m)
        return;
    /* numpy's load(file, mmap_mode, allow_pickle) on a receiver the
     * analysis cannot name (a parameter, a re-export): the third
     * positional argument decides unpickling */
    if (!strcmp(m, "load"))
        check_allow_pickle(c, ev, "load", 2);
    if (!strcmp(m, "format") || !strcmp(m, "format_map") || !strcmp(m, "vformat") ||
        !strcmp(m, "eval") || !strcmp(m, "query"))
        check_template(c, ev, fn, m, 0);
    else if (!strcmp(m, "get") || !strcmp(m, "pop") || !strcmp(m, "setdefault") ||
             !strcmp(m, "__getitem__")) {
        int unknown;
        check_mapping(c, ts_node_child_by_field_id(fn, f->object),
                      py_call_arg(c, ev->node, 0, NULL, &unknown), ev->scope, ev->node);
    }
}

static void eval_subscript(struct py_ctx *c, const struct py_event *ev)
{
    const struct py_fields *f = &c->L->f;
    check_mapping(c, ts_node_child_by_field_id(ev->node, f->value),
                  ts_node_child_by_field_id(ev->node, f->subscript), ev->scope, ev->node);
}

int py_eval(struct py_ctx *c)
{
    for (size_t i = 0; i < c->n_events && !c->err; i++) {
        const struct py_event *ev = &c->events[i];
        py_resolve_begin(c);
        switch (ev->kind) {
        case PE_NAME:
            eval_name(c, ev);
            break;
        case PE_ATTR:
            eval_attr(c, ev);
            break;
        case PE_CALL: {
            size_t before = c->out->count + c->out->dropped;
            eval_call(c, ev);
            /* strings that name attributes (get_field("0.__class__")), once */
            if (!c->err && c->out->count + c->out->dropped == before)
                py_check_string_args(c, ev);
            break;
        }
        case PE_SUBSCRIPT:
            eval_subscript(c, ev);
            break;
        case PE_IMPORT:
            eval_import(c, ev);
            break;
        case PE_ATTRNAME: {
            const char *name = py_name(c, ev->node);
            if (name)
                py_check_attr_name(c, ev->node, name, " in a match pattern");
            break;
        }
        case PE_CHAIN:
            eval_chain(c, ev);
            break;
        default:
            break;
        }
    }
    return c->err;
}
