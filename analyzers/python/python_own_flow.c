/* python_own_flow.c - where the job's classes can be values (python_own.h).
 *
 * `X.m` hands m an object of the caller's choice as self only when X is the
 * class (or holds the plain function): on any instance Python binds self
 * to that instance, and a package's instance has no method of the job's.
 * So a receiver that is not a class is safe, provided no class of the
 * job's can reach it as a value. Class names are followed by
 * python_own_infer.c (a name used anywhere but called, read from, compared,
 * raised, caught or as a base makes every class unplain); this file follows
 * the other ways a class becomes a value: type(x), super(), a classmethod's
 * cls, an annotation read back, a class in a class body, a decorator, and
 * the dunders that Python hands a class (`__eq__` reflected from a
 * comparison with a class, `__set_name__`, `__init_subclass__`, ...).
 */
#include "python_own.h"

#include <string.h>

#include "python_resolve.h"
#include "python_scope.h"
#include "ts_node.h"

/* Dunders Python calls with a class as an argument: a job defining one
 * receives its classes as values. */
static const char *const CLASS_TAKERS[] = {
    "__get__",     "__set_name__",      "__init_subclass__", "__class_getitem__", "__mro_entries__",
    "__prepare__", "__instancecheck__", "__subclasscheck__", "__subclasshook__"};

/* Spellings of what reads annotations back as objects (textual). */
static const char *const HINT_READERS[] = {"get_type_hints", "annotations", "signature", "fields"};

/* Class decorators that hand back the class and keep no reference. */
static const char *const PLAIN_DECORATORS[] = {"dataclasses.dataclass", "functools.total_ordering"};

static int src_has(const struct py_ctx *c, const char *s)
{
    return memmem(c->src, c->len, s, strlen(s)) != NULL;
}

static int node_is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(sg_ts_type(n), type) == 0;
}

/* The single builtin or import expression n names ("builtins.type"), else NULL. */
static const char *named(struct py_ctx *c, TSNode n, int32_t scope)
{
    struct py_cands k = {0};
    py_resolve(c, n, scope, 0, &k);
    if (k.overflow || k.n != 1 || (k.v[0].kind != PC_BUILTIN && k.v[0].kind != PC_IMPORT))
        return NULL;
    return k.v[0].s;
}

struct class_names {
    int seen, other;
};

static int all_classes(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct class_names *u = ud;
    (void)c;
    if (b && b->kind == PB_OPAQUE && b->own == PY_OWN_CLASS)
        u->seen = 1;
    else
        u->other = 1;
    return u->other;
}

/* Identifier n names one of the job's classes in every binding. */
static int names_class(struct py_ctx *c, TSNode n, int32_t scope)
{
    const char *name = py_kind(c, n) == PK_IDENTIFIER ? py_name(c, n) : NULL;
    struct class_names u = {0};
    if (!name)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), all_classes, &u);
    return u.seen && !u.other;
}

/* Identifier n is the first parameter of a def Python does not bind to an
 * instance (a classmethod's cls, __new__'s cls). */
static int cls_param(struct py_ctx *c, TSNode n)
{
    const char *name = py_kind(c, n) == PK_IDENTIFIER ? py_name(c, n) : NULL;
    TSNode def = name ? py_self_def(c, n, name) : (TSNode){0};
    return !ts_node_is_null(def) && !py_binds_instance(c, def);
}

static int builtin_call(struct py_ctx *c, TSNode n, int32_t scope, const char *want)
{
    if (py_kind(c, n) != PK_CALL)
        return 0;
    const char *s = named(c, ts_node_child_by_field_id(n, c->L->f.function), scope);
    return s && !strcmp(s, want);
}

int py_class_valued(struct py_ctx *c, TSNode n, int32_t scope)
{
    for (int guard = 0; py_kind(c, n) == PK_PAREN && guard < PY_RESOLVE_DEPTH; guard++)
        n = py_first_expr(c, n);
    return names_class(c, n, scope) || cls_param(c, n) ||
           builtin_call(c, n, scope, "builtins.type") ||
           builtin_call(c, n, scope, "builtins.super");
}

/* A comparison hands its operands to the other side's __eq__/__lt__/
 * __contains__ unless it is `is`/`is not` or every operand is a class (no
 * class of the job's has a metaclass, so type's own comparisons answer). */
static int comparison_contained(struct py_ctx *c, TSNode cmp, int32_t scope)
{
    int only_is = 1, all_cls = 1;
    uint32_t n = ts_node_child_count(cmp);
    for (uint32_t i = 0; i < n; i++) {
        TSNode k = ts_node_child(cmp, i);
        if (ts_node_is_extra(k))
            continue;
        if (!ts_node_is_named(k)) {
            const char *t = sg_ts_type(k);
            only_is &= !strcmp(t, "is") || !strcmp(t, "is not") || !strcmp(t, "not");
            continue;
        }
        all_cls &= py_class_valued(c, k, scope) || node_is(k, "none");
    }
    return only_is || all_cls;
}

/* The class value at n is only called, read from, compared as above,
 * raised, caught or given to isinstance/issubclass. */
static int value_contained(struct py_ctx *c, TSNode n, int32_t scope)
{
    TSNode p = ts_node_parent(n);
    for (int guard = 0; py_kind(c, p) == PK_PAREN && guard < PY_RESOLVE_DEPTH; guard++)
        n = p, p = ts_node_parent(p);
    enum py_kind pk = py_kind(c, p);
    if ((pk == PK_CALL && ts_node_eq(ts_node_child_by_field_id(p, c->L->f.function), n)) ||
        (pk == PK_ATTRIBUTE && ts_node_eq(ts_node_child_by_field_id(p, c->L->f.object), n)) ||
        node_is(p, "raise_statement"))
        return 1;
    if (node_is(p, "comparison_operator"))
        return comparison_contained(c, p, scope);
    if (pk == PK_TUPLE)
        p = ts_node_parent(p), pk = py_kind(c, p);
    if (pk == PK_EXCEPT_CLAUSE || pk == PK_EXCEPT_GROUP_CLAUSE)
        return 1;
    if (pk != PK_ARGUMENT_LIST || py_kind(c, ts_node_parent(p)) != PK_CALL)
        return 0;
    const char *fn =
        named(c, ts_node_child_by_field_id(ts_node_parent(p), c->L->f.function), scope);
    return fn && (!strcmp(fn, "builtins.isinstance") || !strcmp(fn, "builtins.issubclass"));
}

static int in_annotation(TSNode n)
{
    for (int up = 0; up < 4 && !ts_node_is_null(n); up++, n = ts_node_parent(n))
        if (node_is(n, "type"))
            return 1;
    return 0;
}

/* super() without arguments in a method Python binds to an instance:
 * bound to that instance. */
static int super_bound(struct py_ctx *c, TSNode call)
{
    TSNode args = ts_node_child_by_field_id(call, c->L->f.arguments);
    if (!ts_node_is_null(args) && ts_node_named_child_count(args) > 0)
        return 0;
    for (TSNode n = ts_node_parent(call); !ts_node_is_null(n); n = ts_node_parent(n))
        if (py_kind(c, n) == PK_FUNCTION_DEF)
            return !ts_node_is_null(py_def_class(c, n)) && py_binds_instance(c, n);
    return 0;
}

/* One read of a name: 1 when it lets a class of the job's be a value. */
static int name_flows(struct py_ctx *c, const struct py_event *ev, int hints)
{
    TSNode n = ev->node;
    if (names_class(c, n, ev->scope))
        return in_annotation(n) ? hints : !value_contained(c, n, ev->scope);
    if (cls_param(c, n))
        return !value_contained(c, n, ev->scope);
    const char *name = py_name(c, n);
    if (!name || (strcmp(name, "type") && strcmp(name, "super")))
        return 0;
    const char *s = named(c, n, ev->scope);
    if (!s)
        return 1; /* not known to be the job's own `type` either */
    if (strcmp(s, "builtins.type") && strcmp(s, "builtins.super"))
        return 0;
    TSNode call = ts_node_parent(n);
    if (py_kind(c, call) != PK_CALL ||
        !ts_node_eq(ts_node_child_by_field_id(call, c->L->f.function), n))
        return 1;
    if (s[9] == 's' && !super_bound(c, call))
        return 1;
    return !value_contained(c, call, ev->scope);
}

/* A class of the job's in a class body (read as an attribute), or behind a
 * decorator that may keep it. */
static int class_placed(struct py_ctx *c, TSNode cls, int32_t scope)
{
    TSNode up = ts_node_parent(cls);
    if (py_kind(c, up) == PK_DECORATED_DEF) {
        uint32_t n = ts_node_named_child_count(up);
        for (uint32_t i = 0; i < n; i++) {
            TSNode d = ts_node_named_child(up, i);
            if (ts_node_eq(d, cls) || ts_node_is_extra(d))
                continue;
            TSNode e = py_first_expr(c, d);
            if (py_kind(c, e) == PK_CALL)
                e = ts_node_child_by_field_id(e, c->L->f.function);
            const char *s = named(c, e, scope);
            int plain = 0;
            for (size_t j = 0; s && j < sizeof(PLAIN_DECORATORS) / sizeof(*PLAIN_DECORATORS); j++)
                plain |= !strcmp(s, PLAIN_DECORATORS[j]);
            if (!plain)
                return 1;
        }
    }
    TSNode block = ts_node_is_null(up) ? up : ts_node_parent(up);
    return !ts_node_is_null(block) && py_kind(c, ts_node_parent(block)) == PK_CLASS_DEF;
}

static int compute_flows(struct py_ctx *c)
{
    int hints = 0;
    py_class_plain(c, (TSNode){0}); /* the class table */
    if (c->cls.all_tainted)
        return 1;
    for (size_t i = 0; i < sizeof(CLASS_TAKERS) / sizeof(*CLASS_TAKERS); i++)
        if (src_has(c, CLASS_TAKERS[i]))
            return 1;
    for (size_t i = 0; i < sizeof(HINT_READERS) / sizeof(*HINT_READERS); i++)
        hints |= src_has(c, HINT_READERS[i]);
    for (size_t i = 0; i < c->cls.n; i++)
        if (class_placed(c, c->cls.node[i], c->cls.scope[i]))
            return 1;
    for (size_t i = 0; i < c->n_events && !c->err; i++) {
        if (c->events[i].kind != PE_NAME)
            continue;
        py_resolve_begin(c);
        if (name_flows(c, &c->events[i], hints))
            return 1;
    }
    return c->err != 0;
}

int py_class_values_contained(struct py_ctx *c)
{
    if (!c->flow_ready) {
        c->flow_ready = 1;
        c->flow = (uint8_t)compute_flows(c);
    }
    return !c->flow;
}
