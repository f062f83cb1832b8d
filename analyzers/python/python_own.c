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
    int own, other, depth;
};

static int own_identifier(struct py_ctx *c, TSNode n, int32_t scope, int depth);

/* Every binding the name may have is the job's own: a def/class name, a
 * method's self/cls, or an instance of the job's own class (`x = C()`). */
static int own_fn(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct own_ud *u = ud;
    if (!b)
        return 0; /* unbound here: a NameError, not some other object */
    if (b->own && b->kind == PB_OPAQUE) {
        u->own = 1;
        return 0;
    }
    if (b->kind == PB_ALIAS && u->depth < 2 && py_kind(c, b->value) == PK_CALL) {
        TSNode fn = ts_node_child_by_field_id(b->value, c->L->f.function);
        if (py_kind(c, fn) == PK_IDENTIFIER && own_identifier(c, fn, b->eval_scope, u->depth + 1)) {
            u->own = 1;
            return 0;
        }
    }
    u->other = 1;
    return 1;
}

static int own_identifier(struct py_ctx *c, TSNode n, int32_t scope, int depth)
{
    const char *name = py_name(c, n);
    struct own_ud u = {.depth = depth};
    if (!name)
        return 0;
    py_lookup_each(c, name, scope, ts_node_start_byte(n), own_fn, &u);
    return u.own && !u.other;
}

/* 1 when expression n is the job's own object (see own_fn). */
int py_own_receiver(struct py_ctx *c, TSNode n, int32_t scope)
{
    for (int guard = 0; py_kind(c, n) == PK_PAREN && guard < PY_RESOLVE_DEPTH; guard++)
        n = py_first_expr(c, n);
    return py_kind(c, n) == PK_IDENTIFIER && own_identifier(c, n, scope, 0);
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
    else if (py_own_receiver(c, recv, ev->scope))
        return;
    else if (callee && positional_args(c, call) < req)
        return;
    py_report(c, ev->node, SG_RULE_ATTRIBUTE_PRIVATE,
              "method '%s' reads private names through its self and is taken where the caller "
              "may choose self (only the job's own objects may be its self)",
              name);
}
