/* python_own.c - the job's own objects and its methods (python_own.h). */
#include "python_own.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "python_resolve.h"
#include "python_rules.h"
#include "python_scope.h"
#include "rules.h"

/* Bytes of a method body scanned for reads through its first parameter. */
#define METHOD_SCAN_MAX (64u * 1024u)

struct own_ud {
    TSNode use;
    int own, other, depth;
};

static int own_identifier(struct py_ctx *c, TSNode n, int32_t scope, int depth);

int py_binds_instance(struct py_ctx *c, TSNode fn)
{
    static const char *const implicit[] = {"__new__", "__init_subclass__", "__class_getitem__"};
    const char *name = py_name(c, ts_node_child_by_field_id(fn, c->L->f.name));
    TSNode p = ts_node_parent(fn);
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof(implicit) / sizeof(*implicit); i++)
        if (!strcmp(name, implicit[i]))
            return 0;
    uint32_t n = py_kind(c, p) == PK_DECORATED_DEF ? ts_node_named_child_count(p) : 0;
    for (uint32_t i = 0; i < n; i++) {
        TSNode d = ts_node_named_child(p, i);
        uint32_t a = ts_node_start_byte(d), b = ts_node_end_byte(d);
        if (!ts_node_eq(d, fn) && memmem(c->src + a, b - a, "classmethod", 11))
            return 0;
    }
    return 1;
}

int py_own_assume(struct py_ctx *c, const void *key)
{
    for (unsigned i = 0; i < c->n_own_keys; i++)
        if (c->own_keys[i] == key && c->own_key_mode[i] == c->own_mode)
            return -1;
    if (c->n_own_keys == PY_OWN_KEYS_MAX)
        return 0;
    c->own_key_mode[c->n_own_keys] = c->own_mode;
    c->own_keys[c->n_own_keys++] = key;
    c->own_open++;
    return 1;
}

void py_own_release(struct py_ctx *c)
{
    c->own_open--;
    c->n_own_keys--;
}

/* An alias being inferred counts as own, as fields do (python_own_infer.c):
 * `node = self._head` then `node = node._next` in a loop. */
static int alias_own(struct py_ctx *c, const struct py_binding *b, int depth)
{
    int r = py_own_assume(c, b);
    if (r <= 0)
        return r < 0;
    int own = py_own_value(c, b->value, b->eval_scope, depth + 1);
    py_own_release(c);
    return own;
}

/* Every binding the name may have is the job's own: a def/class name, a
 * method's self/cls (of a class whose hierarchy is the job's own), or an
 * alias of an own value (`x = C()`, `y = x`). */
static int own_fn(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct own_ud *u = ud;
    if (!b)
        return 0; /* unbound here: a NameError, not some other object */
    if (b->own && b->kind == PB_OPAQUE && c->own_mode) {
        /* an instance: only a method's self (the def names are classes,
         * functions and methods) */
        TSNode def = b->own == PY_OWN_VALUE ? py_self_def(c, u->use, b->name) : (TSNode){0};
        if (!ts_node_is_null(def) && py_binds_instance(c, def) &&
            py_class_plain(c, py_def_class(c, def))) {
            u->own = 1;
            return 0;
        }
    } else if (b->own && b->kind == PB_OPAQUE) {
        TSNode cls =
            b->own == PY_OWN_CLASS ? b->def : py_def_class(c, py_self_def(c, u->use, b->name));
        if (ts_node_is_null(cls) || py_class_plain(c, cls)) {
            u->own = 1;
            return 0;
        }
    } else if (b->kind == PB_ALIAS && alias_own(c, b, u->depth)) {
        u->own = 1;
        return 0;
    }
    u->other = 1;
    return 1;
}

static int own_identifier(struct py_ctx *c, TSNode n, int32_t scope, int depth)
{
    const char *name = py_name(c, n);
    struct own_ud u = {.use = n, .depth = depth};
    if (!name)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), own_fn, &u);
    return (u.own && !u.other) || py_narrowed_own(c, n, name, scope);
}

static int own_classes_call(struct py_ctx *c, TSNode fn, int32_t scope, int depth);
static int own_in_mode(struct py_ctx *c, TSNode n, int32_t scope, int depth, uint8_t mode);

/* `super().__new__(x)` / `object.__new__(x)` with x the job's own: an
 * instance of x's class. */
static int own_new_call(struct py_ctx *c, TSNode call, TSNode fn, int32_t scope, int depth)
{
    TSNode obj = ts_node_child_by_field_id(fn, c->L->f.object);
    const char *attr = py_name(c, ts_node_child_by_field_id(fn, c->L->f.attribute));
    int unknown = 0;
    TSNode a0 = py_call_arg(c, call, 0, NULL, &unknown);
    if (!attr || strcmp(attr, "__new__") != 0 || unknown || ts_node_is_null(a0))
        return 0;
    TSNode callee =
        py_kind(c, obj) == PK_CALL ? ts_node_child_by_field_id(obj, c->L->f.function) : obj;
    const char *root = py_kind(c, callee) == PK_IDENTIFIER ? py_name(c, callee) : NULL;
    /* C.__new__(x) on the job's class: whatever __new__ the MRO holds is the
     * job's (checked by py_instances_own) or object's */
    if (py_kind(c, obj) != PK_CALL && own_in_mode(c, obj, scope, depth + 1, 0) &&
        py_instances_own(c, depth + 1))
        return own_in_mode(c, a0, scope, depth + 1, 0);
    if (!root || (strcmp(root, py_kind(c, obj) == PK_CALL ? "super" : "object") != 0))
        return 0;
    struct py_cands k = {0};
    py_resolve(c, callee, scope, depth, &k);
    return k.n == 1 && !k.overflow && k.v[0].kind == PC_BUILTIN &&
           own_in_mode(c, a0, scope, depth + 1, 0);
}

int py_own_value(struct py_ctx *c, TSNode n, int32_t scope, int depth)
{
    if (depth > PY_OWN_DEPTH || !py_step(c))
        return 0;
    for (int guard = 0; py_kind(c, n) == PK_PAREN && guard < PY_RESOLVE_DEPTH; guard++)
        n = py_first_expr(c, n);
    switch (py_kind(c, n)) {
    case PK_IDENTIFIER:
        return own_identifier(c, n, scope, depth);
    case PK_ATTRIBUTE: {
        const char *attr = py_name(c, ts_node_child_by_field_id(n, c->L->f.attribute));
        /* the receiver is the job's (class or instance); the field decides */
        return attr &&
               own_in_mode(c, ts_node_child_by_field_id(n, c->L->f.object), scope, depth + 1, 0) &&
               py_field_own(c, attr, depth + 1);
    }
    case PK_CALL: {
        TSNode fn = ts_node_child_by_field_id(n, c->L->f.function);
        if (py_kind(c, fn) == PK_ATTRIBUTE)
            return own_new_call(c, n, fn, scope, depth) ||
                   py_own_method_result(c, fn, scope, depth);
        return own_classes_call(c, fn, scope, depth) || py_own_function_result(c, fn, scope, depth);
    }
    case PK_CONDITIONAL: /* a if cond else b */
        return py_own_value(c, ts_node_named_child(n, 0), scope, depth + 1) &&
               py_own_value(c, ts_node_named_child(n, 2), scope, depth + 1);
    case PK_BOOLEAN_OP: /* a or b, a and b: one of the two */
        return py_own_value(c, ts_node_child_by_field_id(n, c->L->f.left), scope, depth + 1) &&
               py_own_value(c, ts_node_child_by_field_id(n, c->L->f.right), scope, depth + 1);
    default:
        return 0;
    }
}

/* Runs py_own_value() in mode (0 own, 1 instance), then restores the mode. */
static int own_in_mode(struct py_ctx *c, TSNode n, int32_t scope, int depth, uint8_t mode)
{
    uint8_t saved = c->own_mode;
    c->own_mode = mode;
    int own = py_own_value(c, n, scope, depth);
    c->own_mode = saved;
    return own;
}

int py_own_instance(struct py_ctx *c, TSNode n, int32_t scope, int depth)
{
    return own_in_mode(c, n, scope, depth, 1);
}

/* 1 when expression n is the job's own object (see own_fn). */
int py_own_receiver(struct py_ctx *c, TSNode n, int32_t scope)
{
    return py_own_value(c, n, scope, 0);
}

struct class_ud {
    const struct py_binding *cls[PY_CANDS_MAX];
    int n, other;
};

static int class_fn(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct class_ud *u = ud;
    (void)c;
    if (!b)
        return 0;
    if (b->kind != PB_OPAQUE || b->own != PY_OWN_CLASS || u->n == PY_CANDS_MAX) {
        u->other = 1;
        return 1;
    }
    u->cls[u->n++] = b;
    return 0;
}

/* The job's classes identifier n names (all its bindings), or 0. */
static int own_classes(struct py_ctx *c, TSNode n, int32_t scope, struct class_ud *u)
{
    const char *name = py_kind(c, n) == PK_IDENTIFIER ? py_name(c, n) : NULL;
    u->n = u->other = 0;
    if (!name)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), class_fn, u);
    return u->n > 0 && !u->other;
}

/* C(...) where every binding of C is one of the job's plain classes and no
 * __new__ of the job's returns anything else: an instance of the job's. */
static int own_classes_call(struct py_ctx *c, TSNode fn, int32_t scope, int depth)
{
    struct class_ud u;
    if (!own_classes(c, fn, scope, &u))
        return 0;
    for (int i = 0; i < u.n; i++)
        if (!py_class_plain(c, u.cls[i]->def))
            return 0;
    return py_instances_own(c, depth);
}

/* The first parameter of def node fn and its count of required
 * positional parameters (self included); 0 when there is none. */
static const char *first_param(struct py_ctx *c, TSNode fn, uint32_t *ret_req)
{
    TSNode params = ts_node_child_by_field_id(fn, c->L->f.parameters);
    uint32_t n = ts_node_is_null(params) ? 0 : ts_node_named_child_count(params), req = 0;
    const char *first = NULL;
    for (uint32_t i = 0; i < n; i++) {
        TSNode p = ts_node_named_child(params, i);
        enum py_kind k = py_kind(c, p);
        if (ts_node_is_extra(p))
            continue;
        if (k != PK_IDENTIFIER && k != PK_TYPED_PARAM)
            break; /* a default, *args, a bare `*`: the rest is optional */
        TSNode id = k == PK_IDENTIFIER ? p : ts_node_named_child(p, 0);
        if (!first && py_kind(c, id) == PK_IDENTIFIER)
            first = py_name(c, id);
        req++;
    }
    *ret_req = req;
    return first;
}

static int word_char(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || (unsigned char)ch >= 0x80;
}

/* 1 when the body of def fn reads a private or capability name through
 * its first parameter p (`p._x`, `p.os`) or hands p to getattr. Textual
 * and conservative: a match inside a string counts too. */
static int reads_through(struct py_ctx *c, TSNode fn, const char *p)
{
    TSNode body = ts_node_child_by_field_id(fn, c->L->f.body);
    if (ts_node_is_null(body))
        return 0;
    uint32_t a = ts_node_start_byte(body), b = ts_node_end_byte(body), pl = (uint32_t)strlen(p);
    if (b - a > METHOD_SCAN_MAX)
        return 1;
    for (uint32_t i = a; i + pl < b; i++) {
        if (memcmp(c->src + i, p, pl) != 0 || (i > a && word_char(c->src[i - 1])))
            continue;
        uint32_t j = i + pl;
        if (c->src[j] == '.' || c->src[j] == ')' || c->src[j] == ',') {
            char name[PY_NAME_MAX];
            uint32_t k = j + 1, n = 0;
            if (c->src[j] != '.')
                continue;
            while (k < b && word_char(c->src[k]) && n + 1 < sizeof(name))
                name[n++] = c->src[k++];
            name[n] = '\0';
            if (py_is_private(c->lp, name) || sg_strset_has(&c->lp->capability_attributes, name) ||
                py_is_dunder(name))
                return 1;
        }
    }
    return 0;
}

/* Collect the sensitive methods once per analysis. */
static void collect_sensitive(struct py_ctx *c)
{
    if (c->sens_ready)
        return;
    c->sens_ready = 1;
    for (size_t i = 0; i < c->n_binds; i++) {
        const struct py_binding *b = &c->binds[i];
        uint32_t req;
        if (b->own != PY_OWN_METHOD)
            continue;
        const char *p = first_param(c, b->def, &req);
        if (!p || !reads_through(c, b->def, p))
            continue;
        if (c->n_sens == PY_SENSITIVE_MAX) {
            c->sens_all = 1;
            return;
        }
        c->sens[c->n_sens].name = b->name;
        c->sens[c->n_sens++].req = req;
    }
}

/* Required positional parameters (self included) of the sensitive method
 * `name`, the smallest when several share it; 0 when name is none. */
static uint32_t sensitive_req(struct py_ctx *c, const char *name)
{
    uint32_t req = 0;
    collect_sensitive(c);
    if (c->sens_all)
        return 1;
    for (size_t i = 0; i < c->n_sens; i++)
        if (!strcmp(c->sens[i].name, name) && (!req || c->sens[i].req < req))
            req = c->sens[i].req;
    return req;
}

int py_is_sensitive_method(struct py_ctx *c, const char *name)
{
    /* dunders too: A.__init__(pkg) and A.__new__(pkg) pick self/cls */
    return c->lp->deny_private_attributes && sensitive_req(c, name) > 0;
}

/* Positional arguments of call (a splat counts as many). */
static uint32_t positional_args(struct py_ctx *c, TSNode call)
{
    TSNode args = ts_node_child_by_field_id(call, c->L->f.arguments);
    uint32_t n = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args), pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        TSNode a = ts_node_named_child(args, i);
        enum py_kind k = py_kind(c, a);
        if (ts_node_is_extra(a) || k == PK_KEYWORD_ARGUMENT)
            continue;
        if (k == PK_LIST_SPLAT || k == PK_DICT_SPLAT)
            return UINT32_MAX;
        pos++;
    }
    return pos;
}

/* `X.m` where m is a sensitive method: Python binds self only through an
 * instance. On the job's own instance (self, `c = C()`) it is bound. On
 * the job's class, only a direct call whose first argument is the job's
 * own object passes. On anything else (a parameter, an alias of the class,
 * `type(x)`, a container) only a direct call with fewer positional
 * arguments than the method's required ones passes: that many cannot fill
 * self, so the object must have been an instance. */
void py_check_method_access(struct py_ctx *c, const struct py_event *ev, const char *name)
{
    struct class_ud u;
    if (!py_is_sensitive_method(c, name))
        return;
    uint32_t req = sensitive_req(c, name);
    TSNode recv = ts_node_child_by_field_id(ev->node, c->L->f.object);
    TSNode call = ts_node_parent(ev->node);
    int callee = ev->callee && py_kind(c, call) == PK_CALL;
    int unknown;
    TSNode a0 = callee ? py_call_arg(c, call, 0, NULL, &unknown) : (TSNode){0};
    /* a first argument that is the job's own object is a safe self */
    if (!ts_node_is_null(a0) && py_own_receiver(c, a0, ev->scope))
        return;
    if (own_classes(c, recv, ev->scope, &u))
        ; /* the class itself: only the case above passes */
    else if (py_own_instance(c, recv, ev->scope, 0))
        return;
    else if (callee && positional_args(c, call) < req)
        return;
    else if (!py_class_valued(c, recv, ev->scope) && py_class_values_contained(c))
        return; /* an instance: bound to it, or not the job's method */
    py_report(c, ev->node, SG_RULE_ATTRIBUTE_PRIVATE,
              "method '%s' reads private names through its self and is taken where the caller "
              "may choose self (only the job's own objects may be its self)",
              name);
}

struct method_names {
    int method;
};

static int method_binding(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct method_names *u = ud;
    (void)c;
    u->method |= b && b->own == PY_OWN_METHOD;
    return u->method;
}

/* `@x.setter` and friends, property(x): the method stays behind a
 * descriptor, whose class-side access is checked as X.name. */
static int behind_descriptor(struct py_ctx *c, TSNode n, int32_t scope)
{
    static const char *const accessors[] = {"setter", "getter", "deleter"};
    TSNode p = ts_node_parent(n);
    if (py_kind(c, p) == PK_ATTRIBUTE) {
        const char *a = py_name(c, ts_node_child_by_field_id(p, c->L->f.attribute));
        for (size_t i = 0; a && i < sizeof(accessors) / sizeof(*accessors); i++)
            if (!strcmp(a, accessors[i]))
                return 1;
        return 0;
    }
    if (py_kind(c, p) != PK_ARGUMENT_LIST || py_kind(c, ts_node_parent(p)) != PK_CALL)
        return 0;
    struct py_cands k = {0};
    py_resolve(c, ts_node_child_by_field_id(ts_node_parent(p), c->L->f.function), scope, 0, &k);
    return k.n == 1 && !k.overflow &&
           ((k.v[0].kind == PC_BUILTIN && !strcmp(k.v[0].s, "builtins.property")) ||
            (k.v[0].kind == PC_IMPORT && !strcmp(k.v[0].s, "functools.cached_property")));
}

void py_check_method_name(struct py_ctx *c, const struct py_event *ev, const char *name)
{
    struct method_names u = {0};
    if (!py_is_sensitive_method(c, name))
        return;
    py_lookup_each(c, name, ev->scope, ts_node_start_byte(ev->node), method_binding, &u);
    if (!u.method || behind_descriptor(c, ev->node, ev->scope))
        return;
    py_report(c, ev->node, SG_RULE_ATTRIBUTE_PRIVATE,
              "method '%s' reads private names through its self and is taken as a value in its "
              "class body, where any caller may choose self",
              name);
}
