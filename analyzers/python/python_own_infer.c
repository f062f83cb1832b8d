/* python_own_infer.c - what else is the job's own object (python_own.h):
 * the classes whose MRO holds only the job's code, what the job stores in
 * its objects' fields, and parameters narrowed by isinstance() to the job's
 * classes.
 *
 * Each answer is "own" only when the analysis can see every way the value
 * arrives; anything it cannot see (a package base class, a store through
 * setattr or a tuple, a rebinding, a decorator that writes fields) makes the
 * answer "not own", so the cost of a gap is a false positive, never a
 * private name of a package.
 */
#include "python_own.h"

#include <string.h>

#include "python_resolve.h"
#include "python_scope.h"
#include "ts_node.h"

/* Bases of the job's classes that bring no private name worth having:
 * builtins (an unbound name), and these standard-library classes. */
static const char *const SAFE_BASES[] = {"abc.ABC",           "enum.Enum",      "enum.IntEnum",
                                         "enum.Flag",         "enum.IntFlag",   "enum.StrEnum",
                                         "typing.NamedTuple", "typing.Generic", "typing.Protocol",
                                         "typing.TypedDict",  "typing.Any"};

/* Spellings after which a field's value is no longer what the job's plain
 * stores put there: stores by name (setattr, object.__setattr__, vars(),
 * __dict__), attribute hooks and descriptors of the job's classes, and a
 * changed __class__. Textual: a match anywhere (a string too) counts. */
static const char *const FIELD_BLOCKERS[] = {"setattr", "vars",    "__dict__",  "__getattr",
                                             "__get__", "__set__", "__class__", "__slots__"};

static int node_is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(sg_ts_type(n), type) == 0;
}

/* Charges n visits to the analysis' ownership budget; 0 once it is spent. */
static int scan_budget(struct py_ctx *c, size_t n)
{
    c->own_scanned += n;
    return c->own_scanned <= PY_OWN_SCAN_TOTAL;
}

static int src_has(const struct py_ctx *c, const char *s)
{
    return memmem(c->src, c->len, s, strlen(s)) != NULL;
}

/* ---- the job's classes and their bases ---------------------------------- */

static int class_index(const struct py_ctx *c, TSNode cls)
{
    for (size_t i = 0; i < c->cls.n; i++)
        if (ts_node_eq(c->cls.node[i], cls))
            return (int)i;
    return -1;
}

struct base_ud {
    struct py_ctx *c;
    int self_idx, foreign, builtin;
};

static int base_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct base_ud *u = ud;
    if (!b) {
        u->builtin = 1; /* object, Exception, dict, ... */
        return 0;
    }
    int j = b->own == PY_OWN_CLASS && b->kind == PB_OPAQUE ? class_index(c, b->def) : -1;
    if (j < 0) {
        u->foreign = 1;
        return 1;
    }
    if (c->cls.n_edges == PY_CLASS_EDGES_MAX) {
        c->cls.all_tainted = 1;
        return 1;
    }
    c->cls.edge[c->cls.n_edges][0] = (uint16_t)u->self_idx;
    c->cls.edge[c->cls.n_edges++][1] = (uint16_t)j;
    return 0;
}

/* 1 when base expression b is an import of a SAFE_BASES class. */
static int safe_import_base(struct py_ctx *c, TSNode b, int32_t scope)
{
    struct py_cands k = {0};
    py_resolve_begin(c);
    py_resolve(c, b, scope, 0, &k);
    if (k.overflow || k.n == 0)
        return 0;
    for (uint32_t i = 0; i < k.n; i++) {
        int ok = 0;
        for (size_t s = 0; s < sizeof(SAFE_BASES) / sizeof(*SAFE_BASES); s++)
            ok |= k.v[i].kind == PC_IMPORT && strcmp(k.v[i].s, SAFE_BASES[s]) == 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* Builtin bases whose methods hand back nothing but the instance or None
 * (object; the exceptions' with_traceback/add_note): a method of the job's
 * called on such an instance is the job's (py_own_method_result). */
static int methodless_builtin(const char *name)
{
    static const char *const suffixes[] = {"Error", "Exception", "Warning"};
    size_t n = strlen(name);
    if (!strcmp(name, "object"))
        return 1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
        size_t sl = strlen(suffixes[i]);
        if (n >= sl && !strcmp(name + n - sl, suffixes[i]))
            return 1;
    }
    return 0;
}

/* Records class i's bases: edges to the job's classes; 1 when some base is
 * a package's class (or anything else the analysis cannot place). */
static int class_bases(struct py_ctx *c, size_t i, int32_t scope)
{
    TSNode supers = ts_node_child_by_field_id(c->cls.node[i], c->L->f.superclasses);
    uint32_t n = ts_node_is_null(supers) ? 0 : ts_node_named_child_count(supers);
    int foreign = 0; /* every base is looked at: the edges to the job's classes count too */
    for (uint32_t a = 0; a < n; a++) {
        TSNode b = ts_node_named_child(supers, a);
        if (ts_node_is_extra(b))
            continue;
        if (py_kind(c, b) == PK_SUBSCRIPT) /* Generic[T] */
            b = ts_node_child_by_field_id(b, c->L->f.value);
        if (py_kind(c, b) == PK_IDENTIFIER) {
            struct base_ud u = {.c = c, .self_idx = (int)i};
            const char *name = py_name(c, b);
            if (name)
                py_lookup_each(c, name, scope, ts_node_start_byte(b), base_binding, &u);
            if (name && u.builtin && !methodless_builtin(name))
                c->cls.mtainted[i] = 1;
            if (name && u.builtin && !strcmp(name, "type"))
                c->cls.all_tainted = 1; /* a metaclass of the job's makes classes */
            if (name && !u.foreign)
                continue;
        }
        /* metaclass=, *bases, an attribute chain: only the safe imports */
        c->cls.mtainted[i] = 1;
        if (safe_import_base(c, b, scope))
            c->cls.stdlib_bases = 1;
        else
            foreign = 1;
    }
    return foreign;
}

/* Taint spreads along the base edges both ways (a base's methods see its
 * subclasses' instances), a fixed point in at most n rounds. */
static void spread(struct py_ctx *c, uint8_t *taint)
{
    for (size_t round = 0, changed = 1; changed && round <= c->cls.n; round++) {
        changed = 0;
        for (size_t e = 0; e < c->cls.n_edges; e++) {
            uint8_t *a = &taint[c->cls.edge[e][0]], *b = &taint[c->cls.edge[e][1]];
            if (*a != *b) {
                *a = *b = 1;
                changed = 1;
            }
        }
    }
}

struct cls_ud {
    const char *name;
    int own, other;
};

static int any_class_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct cls_ud *u = ud;
    (void)c;
    if (b && b->own == PY_OWN_CLASS && b->kind == PB_OPAQUE)
        u->own = 1;
    return 0;
}

static int is_builtin_name(struct py_ctx *c, TSNode n, const char *want, int32_t scope);

/* Where a class of the job's may be named without the class escaping into
 * something that could derive from it (type("B", (A, pkg.X), {}),
 * make_dataclass(bases=...), a metaclass call): called, an attribute read,
 * isinstance/issubclass's second argument, a base of a class statement, an
 * except clause, raise, a comparison, an annotation. */
static int class_use_contained(struct py_ctx *c, TSNode n, int32_t scope)
{
    TSNode p = ts_node_parent(n);
    enum py_kind pk = py_kind(c, p);
    if ((pk == PK_CALL && ts_node_eq(ts_node_child_by_field_id(p, c->L->f.function), n)) ||
        (pk == PK_ATTRIBUTE && ts_node_eq(ts_node_child_by_field_id(p, c->L->f.object), n)) ||
        node_is(p, "raise_statement") || node_is(p, "comparison_operator"))
        return 1;
    if (pk == PK_TUPLE || pk == PK_PAREN) /* isinstance(x, (A, B)), except (A, B): */
        p = ts_node_parent(p), pk = py_kind(c, p);
    if (pk == PK_EXCEPT_CLAUSE || pk == PK_EXCEPT_GROUP_CLAUSE)
        return 1;
    if (pk == PK_ARGUMENT_LIST) {
        TSNode call = ts_node_parent(p);
        if (py_kind(c, call) == PK_CLASS_DEF)
            return 1; /* a base: the class statement is seen */
        TSNode fn = py_kind(c, call) == PK_CALL ? ts_node_child_by_field_id(call, c->L->f.function)
                                                : (TSNode){0};
        if (!ts_node_is_null(fn) && (is_builtin_name(c, fn, "isinstance", scope) ||
                                     is_builtin_name(c, fn, "issubclass", scope)))
            return 1;
    }
    for (int up = 0; up < 4 && !ts_node_is_null(p); up++, p = ts_node_parent(p))
        if (node_is(p, "type"))
            return 1; /* x: A, def f(a: A) -> List[A] */
    return 0;
}

/* Spellings of the other ways to make a class from bases the job picks. */
static const char *const CLASS_MAKERS[] = {
    "new_class", "prepare_class", "make_dataclass", "ABCMeta", "EnumMeta", "EnumType", "metaclass"};

/* `type` anywhere but a one-argument call, which only reads a class. */
static int type_makes_class(struct py_ctx *c, const struct py_event *ev)
{
    if (ev->kind != PE_NAME || !is_builtin_name(c, ev->node, "type", ev->scope))
        return 0;
    TSNode call = ts_node_parent(ev->node);
    int unknown = 0;
    if (py_kind(c, call) != PK_CALL ||
        !ts_node_eq(ts_node_child_by_field_id(call, c->L->f.function), ev->node))
        return 1;
    TSNode a1 = py_call_arg(c, call, 1, NULL, &unknown);
    return unknown || !ts_node_is_null(a1) || py_kind(c, ts_node_parent(call)) == PK_CALL;
}

/* A class of the job's named anywhere else, a class made at run time, or a
 * metaclass of the job's: a class may derive from the job's where the
 * analysis does not see it, so no class hierarchy is known. */
static void classes_escape(struct py_ctx *c)
{
    for (size_t i = 0; i < sizeof(CLASS_MAKERS) / sizeof(*CLASS_MAKERS); i++)
        if (src_has(c, CLASS_MAKERS[i]))
            c->cls.all_tainted = 1;
    if (!scan_budget(c, c->n_events)) {
        c->cls.all_tainted = 1;
        return;
    }
    for (size_t i = 0; i < c->n_events && !c->cls.all_tainted; i++) {
        const struct py_event *ev = &c->events[i];
        const char *name = ev->kind == PE_NAME ? py_name(c, ev->node) : NULL;
        struct cls_ud u = {.name = name};
        if (type_makes_class(c, ev))
            c->cls.all_tainted = 1;
        if (!name)
            continue;
        py_lookup_each(c, name, ev->scope, ts_node_start_byte(ev->node), any_class_binding, &u);
        if (u.own && !class_use_contained(c, ev->node, ev->scope))
            c->cls.all_tainted = 1;
    }
}

/* Once per analysis: which of the job's classes may have a package's class
 * in their MRO, or be an ancestor of one that does (its methods then see
 * such instances as self): tainted, no exemption for either. */
static void classes_ready(struct py_ctx *c)
{
    if (c->cls.ready)
        return;
    c->cls.ready = 1;
    for (size_t i = 0; i < c->n_binds; i++) {
        const struct py_binding *b = &c->binds[i];
        if (b->own != PY_OWN_CLASS || b->kind != PB_OPAQUE || class_index(c, b->def) >= 0)
            continue;
        if (c->cls.n == PY_CLASSES_MAX) {
            c->cls.all_tainted = 1;
            return;
        }
        c->cls.scope[c->cls.n] = b->scope;
        c->cls.node[c->cls.n++] = b->def;
    }
    for (size_t i = 0; i < c->cls.n && !c->cls.all_tainted; i++)
        c->cls.tainted[i] = (uint8_t)class_bases(c, i, c->cls.scope[i]);
    spread(c, c->cls.tainted);
    spread(c, c->cls.mtainted);
    classes_escape(c);
}

int py_class_plain(struct py_ctx *c, TSNode cls)
{
    classes_ready(c);
    int i = class_index(c, cls);
    return !c->cls.all_tainted && i >= 0 && !c->cls.tainted[i];
}

TSNode py_self_def(struct py_ctx *c, TSNode use, const char *name)
{
    for (TSNode n = ts_node_parent(use); !ts_node_is_null(n); n = ts_node_parent(n)) {
        if (py_kind(c, n) != PK_FUNCTION_DEF)
            continue;
        TSNode params = ts_node_child_by_field_id(n, c->L->f.parameters);
        TSNode p0 = ts_node_is_null(params) ? params : ts_node_named_child(params, 0);
        if (py_kind(c, p0) == PK_TYPED_PARAM)
            p0 = ts_node_named_child(p0, 0);
        const char *p = py_kind(c, p0) == PK_IDENTIFIER ? py_name(c, p0) : NULL;
        if (p && strcmp(p, name) == 0)
            return n;
    }
    return (TSNode){0};
}

TSNode py_def_class(struct py_ctx *c, TSNode def)
{
    if (ts_node_is_null(def))
        return def;
    TSNode up = ts_node_parent(def);
    if (py_kind(c, up) == PK_DECORATED_DEF)
        up = ts_node_parent(up);
    up = ts_node_parent(up); /* the block's owner */
    return py_kind(c, up) == PK_CLASS_DEF ? up : (TSNode){0};
}

static int inert(struct py_ctx *c, TSNode v);

/* ---- instances: C() is the job's own object when no __new__ of the job's
 * returns anything else ------------------------------------------------- */

static int returns_own(struct py_ctx *c, TSNode body, int32_t scope, int depth)
{
    TSTreeCursor *cur = py_cursor(c, body);
    if (!cur)
        return 0;
    int ok = 1;
    unsigned steps = 0;
    for (int more = ts_tree_cursor_goto_first_child(cur); more && ok;) {
        TSNode n = ts_tree_cursor_current_node(cur);
        enum py_kind k = py_kind(c, n);
        if (++steps > PY_OWN_SCAN_NODES || !scan_budget(c, 1)) {
            ok = 0;
            break;
        }
        if (node_is(n, "return_statement")) {
            TSNode v = ts_node_named_child(n, 0);
            ok = ts_node_is_null(v) || inert(c, v) || py_own_value(c, v, scope, depth + 1);
        }
        /* nested functions and classes return for themselves */
        int skip = k == PK_FUNCTION_DEF || k == PK_LAMBDA || k == PK_CLASS_DEF;
        if (!skip && ts_tree_cursor_goto_first_child(cur))
            continue;
        while (!(more = ts_tree_cursor_goto_next_sibling(cur)))
            if (!ts_tree_cursor_goto_parent(cur) ||
                ts_node_eq(ts_tree_cursor_current_node(cur), body))
                break;
    }
    py_cursor_done(c, cur);
    return ok;
}

int py_instances_own(struct py_ctx *c, int depth)
{
    if (c->new_state == 1 || c->new_state == 2)
        return c->new_state == 1;
    if (c->new_state == 3 || depth > PY_RESOLVE_DEPTH)
        return 0; /* a __new__ that returns an instance made by itself: unknown */
    c->new_state = 3;
    int ok = 1;
    for (size_t i = 0; i < c->n_binds && ok; i++) {
        const struct py_binding *b = &c->binds[i];
        if (strcmp(b->name, "__new__") != 0)
            continue;
        if (b->kind != PB_OPAQUE || py_kind(c, b->def) != PK_FUNCTION_DEF)
            ok = 0; /* __new__ = something */
        else
            ok = returns_own(c, ts_node_child_by_field_id(b->def, c->L->f.body), b->inner, depth);
    }
    c->new_state = ok ? 1 : 2;
    return ok;
}

/* ---- results of the job's functions and methods ------------------------- */

/* def node fn: undecorated, or decorated only by classmethod/staticmethod
 * (which leave what a call returns alone), and every return is own; a def
 * being checked counts as own (recursion), as fields do. */
static int def_returns_own(struct py_ctx *c, TSNode fn, int32_t body_scope, int depth)
{
    TSNode p = ts_node_parent(fn);
    uint32_t n = py_kind(c, p) == PK_DECORATED_DEF ? ts_node_named_child_count(p) : 0;
    for (uint32_t i = 0; i < n; i++) {
        TSNode d = ts_node_named_child(p, i);
        if (ts_node_eq(d, fn) || ts_node_is_extra(d))
            continue;
        TSNode e = ts_node_named_child(d, 0);
        uint32_t a = ts_node_start_byte(e), b = ts_node_end_byte(e);
        if (!((b - a == 11 && !memcmp(c->src + a, "classmethod", 11)) ||
              (b - a == 12 && !memcmp(c->src + a, "staticmethod", 12))))
            return 0;
    }
    if (node_is(ts_node_child_by_field_id(fn, c->L->f.name), "identifier") &&
        memmem(c->src + ts_node_start_byte(fn), ts_node_end_byte(fn) - ts_node_start_byte(fn),
               "yield", 5))
        return 0; /* a generator (textual: a match anywhere in it counts) */
    int r = py_own_assume(c, fn.id);
    if (r <= 0)
        return r < 0;
    int own = returns_own(c, ts_node_child_by_field_id(fn, c->L->f.body), body_scope, depth);
    py_own_release(c);
    return own;
}

struct fn_ud {
    int own, other, depth;
};

static int own_def_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct fn_ud *u = ud;
    if (!b)
        return 0; /* unbound: a NameError */
    if (b->kind == PB_OPAQUE && b->own && py_kind(c, b->def) == PK_FUNCTION_DEF &&
        def_returns_own(c, b->def, b->inner, u->depth)) {
        u->own = 1;
        return 0;
    }
    u->other = 1;
    return 1;
}

int py_own_function_result(struct py_ctx *c, TSNode f, int32_t scope, int depth)
{
    const char *name = py_kind(c, f) == PK_IDENTIFIER ? py_name(c, f) : NULL;
    struct fn_ud u = {.depth = depth};
    if (!name || depth > PY_OWN_DEPTH)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(f), own_def_binding, &u);
    return u.own && !u.other;
}

/* Every def of the job's named `name` in a class body returns its first
 * parameter (`return self`): a call of it gives back its receiver. */
static int returns_receiver(struct py_ctx *c, const char *name)
{
    int defs = 0;
    for (size_t i = 0; i < c->n_binds; i++) {
        const struct py_binding *b = &c->binds[i];
        if (strcmp(b->name, name) != 0 || c->scopes[b->scope].kind != PS_CLASS)
            continue;
        /* undecorated: a staticmethod's first parameter is no receiver */
        if (b->kind != PB_OPAQUE || py_kind(c, b->def) != PK_FUNCTION_DEF ||
            py_kind(c, ts_node_parent(b->def)) == PK_DECORATED_DEF)
            return 0;
        TSNode params = ts_node_child_by_field_id(b->def, c->L->f.parameters);
        TSNode p0 = ts_node_is_null(params) ? params : ts_node_named_child(params, 0);
        const char *self = py_kind(c, p0) == PK_IDENTIFIER ? py_name(c, p0) : NULL;
        TSNode body = ts_node_child_by_field_id(b->def, c->L->f.body);
        uint32_t n = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
        TSNode last = n ? ts_node_named_child(body, n - 1) : (TSNode){0};
        TSNode v = node_is(last, "return_statement") ? ts_node_named_child(last, 0) : last;
        /* only the plain form: a body whose every return is the last `return self` */
        const char *vn = py_kind(c, v) == PK_IDENTIFIER ? py_name(c, v) : NULL;
        if (!self || !vn || strcmp(self, vn) != 0 ||
            memmem(c->src + ts_node_start_byte(body),
                   ts_node_start_byte(last) - ts_node_start_byte(body), "return", 6))
            return 0;
        defs++;
    }
    return defs > 0;
}

struct class_of_ud {
    TSNode use, cls;
    int depth, other;
};

static int class_of_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct class_of_ud *u = ud;
    TSNode k = {0};
    if (!b)
        return 0; /* unbound: a NameError */
    if (b->kind == PB_OPAQUE && b->own == PY_OWN_CLASS)
        k = b->def;
    else if (b->kind == PB_OPAQUE && b->own == PY_OWN_VALUE)
        k = py_def_class(c, py_self_def(c, u->use, b->name));
    else if (b->kind == PB_ALIAS && u->depth < PY_OWN_DEPTH)
        k = py_own_class_of(c, b->value, b->eval_scope, u->depth + 1);
    if (ts_node_is_null(k) || (!ts_node_is_null(u->cls) && !ts_node_eq(k, u->cls))) {
        u->other = 1;
        return 1;
    }
    u->cls = k;
    return 0;
}

TSNode py_own_class_of(struct py_ctx *c, TSNode n, int32_t scope, int depth)
{
    for (int guard = 0; py_kind(c, n) == PK_PAREN && guard < PY_RESOLVE_DEPTH; guard++)
        n = py_first_expr(c, n);
    if (depth > PY_OWN_DEPTH || !py_step(c))
        return (TSNode){0};
    if (py_kind(c, n) == PK_CALL) {
        TSNode fn = ts_node_child_by_field_id(n, c->L->f.function);
        if (py_kind(c, fn) == PK_ATTRIBUTE) {
            const char *m = py_name(c, ts_node_child_by_field_id(fn, c->L->f.attribute));
            return m && returns_receiver(c, m)
                       ? py_own_class_of(c, ts_node_child_by_field_id(fn, c->L->f.object), scope,
                                         depth + 1)
                       : (TSNode){0};
        }
        n = fn; /* C(...): C's instance; its class is C */
    }
    const char *name = py_kind(c, n) == PK_IDENTIFIER ? py_name(c, n) : NULL;
    struct class_of_ud u = {.use = n, .depth = depth};
    if (!name)
        return (TSNode){0};
    py_lookup_each(c, name, scope, ts_node_start_byte(n), class_of_binding, &u);
    return u.other ? (TSNode){0} : u.cls;
}

int py_own_method_result(struct py_ctx *c, TSNode attr, int32_t scope, int depth)
{
    const char *name = py_name(c, ts_node_child_by_field_id(attr, c->L->f.attribute));
    if (!name || depth > PY_OWN_DEPTH)
        return 0;
    /* the receiver's class is known, and no class related to it has a base
     * whose methods could answer instead of the job's (dict.get, Enum's) */
    classes_ready(c);
    TSNode cls =
        py_own_class_of(c, ts_node_child_by_field_id(attr, c->L->f.object), scope, depth + 1);
    int i = ts_node_is_null(cls) ? -1 : class_index(c, cls);
    if (i < 0 || c->cls.all_tainted || c->cls.tainted[i] || c->cls.mtainted[i])
        return 0;
    /* nothing may store to `.name` (it would be a field, not the method) */
    if (!scan_budget(c, c->n_events + c->n_binds))
        return 0;
    for (size_t e = 0; e < c->n_events; e++) {
        const struct py_event *ev = &c->events[e];
        const char *an = ev->kind == PE_ATTR
                             ? py_name(c, ts_node_child_by_field_id(ev->node, c->L->f.attribute))
                             : NULL;
        TSNode p = an && !strcmp(an, name) ? ts_node_parent(ev->node) : (TSNode){0};
        if (!ts_node_is_null(p) && py_kind(c, p) != PK_CALL && py_kind(c, p) != PK_ATTRIBUTE &&
            py_kind(c, p) != PK_EXPRESSION_STMT && py_kind(c, p) != PK_ARGUMENT_LIST)
            return 0;
    }
    int defs = 0;
    for (size_t b = 0; b < c->n_binds; b++) {
        const struct py_binding *d = &c->binds[b];
        if (strcmp(d->name, name) != 0 || c->scopes[d->scope].kind != PS_CLASS)
            continue;
        if (d->kind != PB_OPAQUE || py_kind(c, d->def) != PK_FUNCTION_DEF ||
            !def_returns_own(c, d->def, d->inner, depth))
            return 0;
        defs++;
    }
    return defs > 0;
}

/* ---- fields: what the job stores in `x.name` ----------------------------- */

static int inert(struct py_ctx *c, TSNode v)
{
    enum py_kind k = py_kind(c, v);
    return k == PK_STRING || k == PK_CONCAT_STRING || k == PK_INTEGER || node_is(v, "float") ||
           node_is(v, "true") || node_is(v, "false") || node_is(v, "none");
}

static int stored_own(struct py_ctx *c, TSNode v, int32_t scope, int depth)
{
    for (int guard = 0; py_kind(c, v) == PK_ASSIGNMENT && guard < PY_RESOLVE_DEPTH; guard++)
        v = ts_node_child_by_field_id(v, c->L->f.right); /* a = b = v */
    return !ts_node_is_null(v) && (inert(c, v) || py_own_value(c, v, scope, depth + 1));
}

/* Every store to `<anything>.name` outside class bodies: 1 when each stores
 * the job's own object or a constant; *stores counts them. */
static int attr_stores_own(struct py_ctx *c, const char *name, int depth, unsigned *stores)
{
    if (!scan_budget(c, c->n_events))
        return 0;
    for (size_t i = 0; i < c->n_events; i++) {
        const struct py_event *ev = &c->events[i];
        if (ev->kind != PE_ATTR)
            continue;
        const char *an = py_name(c, ts_node_child_by_field_id(ev->node, c->L->f.attribute));
        if (!an || strcmp(an, name) != 0)
            continue;
        TSNode p = ts_node_parent(ev->node);
        enum py_kind pk = py_kind(c, p);
        int is_left = ts_node_eq(ts_node_child_by_field_id(p, c->L->f.left), ev->node);
        if (pk == PK_ASSIGNMENT && is_left) {
            TSNode v = ts_node_child_by_field_id(p, c->L->f.right);
            if (!ts_node_is_null(v) && !stored_own(c, v, ev->scope, depth))
                return 0;
            *stores += !ts_node_is_null(v);
        } else if ((pk == PK_AUG_ASSIGNMENT || pk == PK_FOR_STATEMENT || pk == PK_FOR_IN_CLAUSE) &&
                   is_left) {
            return 0;
        } else if (pk == PK_PATTERN_LIST || pk == PK_TUPLE_PATTERN || pk == PK_LIST_PATTERN ||
                   pk == PK_LIST_SPLAT_PATTERN || pk == PK_EXPRESSION_LIST || pk == PK_TUPLE ||
                   pk == PK_LIST || pk == PK_LIST_SPLAT || pk == PK_PAREN ||
                   pk == PK_AS_PATTERN_TARGET || pk == PK_WITH_ITEM || pk == PK_AS_PATTERN) {
            return 0; /* may be one target of several: the value is not seen */
        }
    }
    return 1;
}

/* In class bodies: `name = v` (and any other binding of name there), and
 * in a decorated class an annotated `name: T` (dataclass-like decorators
 * make it an __init__ parameter). */
static int class_stores_own(struct py_ctx *c, const char *name, int depth, unsigned *stores)
{
    if (!scan_budget(c, c->n_binds + c->cls.n))
        return 0;
    for (size_t i = 0; i < c->cls.n; i++) {
        TSNode cls = c->cls.node[i], body = ts_node_child_by_field_id(cls, c->L->f.body);
        int decorated = py_kind(c, ts_node_parent(cls)) == PK_DECORATED_DEF;
        uint32_t n = ts_node_is_null(body) ? 0 : ts_node_named_child_count(body);
        for (uint32_t s = 0; decorated && s < n && s < PY_OWN_SCAN_NODES; s++) {
            TSNode st = ts_node_named_child(body, s), a = ts_node_named_child(st, 0);
            TSNode left = ts_node_child_by_field_id(a, c->L->f.left);
            const char *ln = py_kind(c, left) == PK_IDENTIFIER ? py_name(c, left) : NULL;
            if (py_kind(c, a) == PK_ASSIGNMENT && ln && !strcmp(ln, name) &&
                !ts_node_is_null(ts_node_child_by_field_id(a, c->L->f.type)))
                return 0;
        }
    }
    for (size_t i = 0; i < c->n_binds; i++) {
        const struct py_binding *b = &c->binds[i];
        if (strcmp(b->name, name) != 0 || c->scopes[b->scope].kind != PS_CLASS)
            continue;
        if (b->kind != PB_ALIAS || !stored_own(c, b->value, b->eval_scope, depth))
            return 0;
        (*stores)++;
    }
    return 1;
}

/* A field being computed counts as own (a greatest fixed point: a value
 * enters a cycle of stores only through a store outside it, checked there).
 * A result is remembered only when no such assumption was open, so nothing
 * remembered rests on one that later failed. */
int py_field_own(struct py_ctx *c, const char *name, int depth)
{
    if (!c->fields_state) {
        c->fields_state = 1;
        for (size_t i = 0; i < sizeof(FIELD_BLOCKERS) / sizeof(*FIELD_BLOCKERS); i++)
            if (src_has(c, FIELD_BLOCKERS[i]))
                c->fields_state = 2;
    }
    classes_ready(c);
    /* the standard-library bases set private fields of their own (Enum's
     * _value_ is the member's value, NamedTuple's _fields, ABC's _abc_impl),
     * unseen: with any of them in the program no field is known */
    if (c->fields_state == 2 || depth > PY_OWN_DEPTH || c->cls.stdlib_bases)
        return 0;
    size_t i = 0;
    while (i < c->n_fields &&
           (c->fields[i].mode != c->own_mode || strcmp(c->fields[i].name, name) != 0))
        i++;
    if (i < c->n_fields)
        return c->fields[i].state != 2;
    if (i == PY_FIELDS_CACHED)
        return 0;
    int outermost = c->own_open == 0;
    c->fields[c->n_fields].name = name;
    c->fields[c->n_fields].mode = c->own_mode;
    c->fields[c->n_fields++].state = 3;
    c->own_open++;
    classes_ready(c);
    /* a field the job never stores holds what a base or a library put
     * there (enum.Enum's _value_ is the member's value): not known */
    unsigned stores = 0;
    int own = attr_stores_own(c, name, depth, &stores) &&
              class_stores_own(c, name, depth, &stores) && stores > 0;
    c->own_open--;
    if (outermost)
        c->fields[i].state = own ? 1 : 2;
    else
        c->n_fields = i; /* nested entries were removed when they finished */
    return own;
}

/* ---- isinstance(p, C) narrowing ------------------------------------------ */

struct one_ud {
    int n, param;
};

static int one_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct one_ud *u = ud;
    (void)c;
    u->n++;
    u->param = b && b->kind == PB_OPAQUE && !b->own;
    return u->n > 1;
}

static int plain_class_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct cls_ud *u = ud;
    /* A use inside the class's own methods may run before the class
     * statement ends, so the builtin of the name is reached too: harmless
     * for a capitalised name (no builtin class of that spelling has every
     * object, or any object with private names, as an instance). */
    if (!b && u->name[0] >= 'A' && u->name[0] <= 'Z')
        return 0;
    if (b && b->own == PY_OWN_CLASS && b->kind == PB_OPAQUE && py_class_plain(c, b->def)) {
        u->own = 1;
        return 0;
    }
    u->other = 1;
    return 1;
}

/* Identifier or tuple of identifiers naming only the job's plain classes. */
static int plain_classes(struct py_ctx *c, TSNode n, int32_t scope)
{
    enum py_kind k = py_kind(c, n);
    if (k == PK_TUPLE || k == PK_PAREN) {
        uint32_t cnt = ts_node_named_child_count(n), seen = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            TSNode e = ts_node_named_child(n, i);
            if (ts_node_is_extra(e))
                continue;
            if (!plain_classes(c, e, scope))
                return 0;
            seen++;
        }
        return seen > 0;
    }
    const char *name = k == PK_IDENTIFIER ? py_name(c, n) : NULL;
    struct cls_ud u = {.name = name};
    if (!name)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), plain_class_binding, &u);
    return u.own && !u.other;
}

static int builtin_only(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    (void)c;
    *(int *)ud |= b ? 2 : 1;
    return b != NULL;
}

/* Identifier n is `want` and can only be the builtin of that name. */
static int is_builtin_name(struct py_ctx *c, TSNode n, const char *want, int32_t scope)
{
    const char *name = py_kind(c, n) == PK_IDENTIFIER ? py_name(c, n) : NULL;
    int seen = 0;
    if (!name || strcmp(name, want) != 0)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), builtin_only, &seen);
    return seen == 1;
}

/* cond guarantees isinstance(name, <the job's plain classes>) when it
 * evaluates to `when` (1 true, 0 false): `and` when true, `or` when false,
 * `not` flips. */
static int narrows(struct py_ctx *c, TSNode cond, const char *name, int32_t scope, int depth,
                   int when)
{
    enum py_kind k = py_kind(c, cond);
    if (depth > PY_RESOLVE_DEPTH)
        return 0;
    if (k == PK_PAREN)
        return narrows(c, py_first_expr(c, cond), name, scope, depth + 1, when);
    if (node_is(cond, "not_operator"))
        return narrows(c, ts_node_child_by_field_id(cond, c->L->f.argument), name, scope, depth + 1,
                       !when);
    if (k == PK_BOOLEAN_OP) {
        TSNode op = ts_node_child_by_field_id(cond, c->L->f.operator);
        return node_is(op, when ? "and" : "or") &&
               (narrows(c, ts_node_child_by_field_id(cond, c->L->f.left), name, scope, depth + 1,
                        when) ||
                narrows(c, ts_node_child_by_field_id(cond, c->L->f.right), name, scope, depth + 1,
                        when));
    }
    if (k != PK_CALL || !when)
        return 0;
    int unknown = 0;
    TSNode a0 = py_call_arg(c, cond, 0, NULL, &unknown),
           a1 = py_call_arg(c, cond, 1, NULL, &unknown);
    const char *an = py_kind(c, a0) == PK_IDENTIFIER ? py_name(c, a0) : NULL;
    return !unknown && an && !strcmp(an, name) && !ts_node_is_null(a1) &&
           is_builtin_name(c, ts_node_child_by_field_id(cond, c->L->f.function), "isinstance",
                           scope) &&
           plain_classes(c, a1, scope);
}

/* `if not isinstance(name, C): return/raise ...` (no elif or else; the
 * condition may be `not isinstance(...) or ...`). */
static int early_exit(struct py_ctx *c, TSNode st, const char *name, int32_t scope)
{
    if (!node_is(st, "if_statement"))
        return 0;
    TSNode cond = ts_node_child_by_field_id(st, c->L->f.condition);
    TSNode then = ts_node_child_by_field_id(st, c->L->f.consequence);
    if (ts_node_is_null(then) ||
        !ts_node_is_null(ts_node_child_by_field_id(st, c->L->f.alternative)))
        return 0;
    TSNode last = ts_node_named_child(then, ts_node_named_child_count(then) - 1);
    return (node_is(last, "return_statement") || node_is(last, "raise_statement")) &&
           narrows(c, cond, name, scope, 0, 0);
}

int py_narrowed_own(struct py_ctx *c, TSNode use, const char *name, int32_t scope)
{
    struct one_ud u = {0};
    if (src_has(c, "nonlocal"))
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(use), one_binding, &u);
    if (u.n != 1 || !u.param)
        return 0; /* rebound somewhere: a check proves nothing about a later read */
    TSNode ch = use;
    for (int guard = 0; guard < PY_OWN_SCAN_NODES; guard++) {
        TSNode p = ts_node_parent(ch);
        enum py_kind pk = py_kind(c, p);
        if (ts_node_is_null(p) || pk == PK_LAMBDA || pk == PK_CLASS_DEF)
            return 0;
        if (pk == PK_BOOLEAN_OP && ts_node_eq(ts_node_child_by_field_id(p, c->L->f.right), ch) &&
            node_is(ts_node_child_by_field_id(p, c->L->f.operator), "and") &&
            narrows(c, ts_node_child_by_field_id(p, c->L->f.left), name, scope, 0, 1))
            return 1;
        if ((node_is(p, "if_statement") || node_is(p, "elif_clause")) &&
            ts_node_eq(ts_node_child_by_field_id(p, c->L->f.consequence), ch) &&
            narrows(c, ts_node_child_by_field_id(p, c->L->f.condition), name, scope, 0, 1))
            return 1;
        if (pk == PK_CONDITIONAL && ts_node_eq(ts_node_named_child(p, 0), ch) &&
            narrows(c, ts_node_named_child(p, 1), name, scope, 0, 1))
            return 1;
        if (pk == PK_FUNCTION_DEF) {
            /* ch is the body: an early exit among the statements before the use */
            uint32_t n = ts_node_named_child_count(ch), at = ts_node_start_byte(use);
            for (uint32_t i = 0; i < n && i < PY_OWN_SCAN_NODES; i++) {
                TSNode st = ts_node_named_child(ch, i);
                if (ts_node_start_byte(st) > at || ts_node_end_byte(st) > at)
                    break;
                if (early_exit(c, st, name, scope))
                    return 1;
            }
            return 0;
        }
        ch = p;
    }
    return 0;
}
