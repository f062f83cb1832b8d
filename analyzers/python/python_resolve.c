/* python_resolve.c - name lookup and expression resolution. */
#include "python_resolve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "python_fold.h"
#include "python_scope.h"

/* Attribute names followed from one root. */
#define CHAIN_MAX 32
/* Elements of a literal list/tuple indexed by a constant (`[eval][0]`). */
#define LITERAL_INDEX_MAX 64

void py_resolve_begin(struct py_ctx *c)
{
    c->steps = 0;
}

int py_step(struct py_ctx *c)
{
    c->steps_total++;
    return ++c->steps <= PY_RESOLVE_STEPS && c->steps_total <= PY_RESOLVE_STEPS_TOTAL;
}

void py_cands_add(struct py_ctx *c, struct py_cands *out, enum py_cand_kind kind, const char *s,
                  size_t len, int aux)
{
    for (uint32_t i = 0; i < out->n; i++)
        if (out->v[i].kind == kind && out->v[i].aux == aux && out->v[i].len == len &&
            memcmp(out->v[i].s, s, len) == 0)
            return;
    if (out->n == PY_CANDS_MAX) {
        out->overflow = 1;
        return;
    }
    char *p = sg_arena_strndup(&c->arena, s, len);
    if (!p) {
        py_fail(c, -ENOMEM);
        return;
    }
    out->v[out->n++] =
        (struct py_cand){.s = p, .len = (uint32_t)len, .kind = (uint8_t)kind, .aux = (uint8_t)aux};
}

TSNode py_first_expr(const struct py_ctx *c, TSNode n)
{
    (void)c;
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; i++) {
        TSNode k = ts_node_named_child(n, i);
        if (!ts_node_is_extra(k))
            return k;
    }
    return (TSNode){0};
}

/* Classify the bindings of (scope, name). */
struct scope_view {
    int has_real, definite, has_del, decl; /* decl: PB_GLOBAL / PB_NONLOCAL / -1 */
};

static struct scope_view view_of(const struct py_ctx *c, int32_t h, uint32_t pos)
{
    struct scope_view v = {.decl = -1};
    for (int32_t i = h; i >= 0; i = c->binds[i].next) {
        const struct py_binding *b = &c->binds[i];
        switch (b->kind) {
        case PB_GLOBAL:
        case PB_NONLOCAL:
            v.decl = b->kind;
            break;
        case PB_DEL:
            v.has_del = 1;
            break;
        default:
            v.has_real = 1;
            if (b->definite && b->stmt_end <= pos)
                v.definite = 1;
            break;
        }
    }
    return v;
}

void py_lookup_each(struct py_ctx *c, const char *name, int32_t scope, uint32_t pos,
                    py_binding_fn fn, void *ud)
{
    int32_t s = scope;
    int first = 1;
    while (s >= 0) {
        const struct py_scope *sc = &c->scopes[s];
        /* class bodies are not visible from the functions inside them */
        if (sc->kind == PS_CLASS && !first) {
            s = sc->parent;
            continue;
        }
        first = 0;
        int32_t h = py_bind_find(c, s, name);
        struct scope_view v = view_of(c, h, pos);
        if (v.decl == PB_GLOBAL && s != 0) {
            s = 0;
            continue;
        }
        if (v.decl == PB_NONLOCAL) {
            s = sc->parent;
            continue;
        }
        for (int32_t i = h; v.has_real && i >= 0; i = c->binds[i].next)
            if (c->binds[i].kind <= PB_OPAQUE && fn(c, &c->binds[i], ud))
                return;
        int local = sc->kind == PS_FUNCTION || sc->kind == PS_COMPREHENSION;
        if ((local && (v.has_real || v.has_del)) ||
            (sc->kind == PS_MODULE && v.definite && !v.has_del))
            return;
        s = sc->parent;
    }
    fn(c, NULL, ud);
}

struct single {
    const struct py_binding *b;
    int count;
};

static int single_fn(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct single *s = ud;
    (void)c;
    s->b = b;
    return ++s->count > 1;
}

const struct py_binding *py_lookup_single(struct py_ctx *c, const char *name, int32_t scope,
                                          uint32_t pos)
{
    struct single s = {0};
    py_lookup_each(c, name, scope, pos, single_fn, &s);
    return s.count == 1 && s.b && s.b->kind == PB_ALIAS ? s.b : NULL;
}

struct cands_ud {
    struct py_cands *out;
    const char *name;
    int depth;
};

static int cands_fn(struct py_ctx *c, const struct py_binding *b, void *ud)
{
    struct cands_ud *u = ud;
    char buf[PY_NAME_MAX];
    if (!b) {
        size_t n = strlen(u->name);
        if (n + 10 <= sizeof(buf)) {
            memcpy(buf, "builtins.", 9);
            memcpy(buf + 9, u->name, n + 1);
            py_cands_add(c, u->out, PC_BUILTIN, buf, n + 9, 0);
        }
        /* `from m import *` may have bound it to m.<name> */
        for (int32_t i = py_bind_find(c, PY_MODULE_SCOPE, "*"); i >= 0; i = c->binds[i].next) {
            const char *m = c->binds[i].import_val;
            size_t ml = strlen(m);
            if (ml + n + 2 > sizeof(buf))
                continue;
            memcpy(buf, m, ml);
            buf[ml] = '.';
            memcpy(buf + ml + 1, u->name, n + 1);
            py_cands_add(c, u->out, PC_IMPORT, buf, ml + n + 1, 0);
        }
        return 0;
    }
    switch (b->kind) {
    case PB_IMPORT:
        py_cands_add(c, u->out, PC_IMPORT, b->import_val, strlen(b->import_val), b->partial);
        break;
    case PB_ALIAS:
        if (c->binds[b - c->binds].busy)
            break; /* a cycle adds nothing the outer resolution lacks */
        c->binds[b - c->binds].busy = 1;
        py_resolve(c, b->value, b->eval_scope, u->depth + 1, u->out);
        c->binds[b - c->binds].busy = 0;
        break;
    default:
        py_cands_add(c, u->out, PC_OPAQUE, "", 0, 0);
        break;
    }
    return u->out->overflow;
}

void py_resolve_name(struct py_ctx *c, TSNode n, const char *name, int32_t scope, int depth,
                     struct py_cands *out)
{
    if (!name && !(name = py_name(c, n)))
        return;
    struct cands_ud u = {.out = out, .name = name, .depth = depth};
    py_lookup_each(c, name, scope, ts_node_start_byte(n), cands_fn, &u);
}

/* root candidates + ".a.b.c" (names[k-1] .. names[0]). */
static void append_chain(struct py_ctx *c, const struct py_cands *roots, const char **names, int k,
                         struct py_cands *out)
{
    out->overflow |= roots->overflow;
    for (uint32_t r = 0; r < roots->n; r++) {
        char buf[PY_NAME_MAX];
        size_t n = 0;
        const struct py_cand *rc = &roots->v[r];
        enum py_cand_kind kind = rc->kind;
        if (rc->len < sizeof(buf)) {
            memcpy(buf, rc->s, rc->len);
            n = rc->len;
        }
        for (int i = k - 1; i >= 0; i--) {
            size_t nl = strlen(names[i]);
            if (n + nl + 2 > sizeof(buf)) {
                /* too long to be any policy entry: keep the tail only */
                n = 0;
                kind = PC_OPAQUE;
            }
            if (n)
                buf[n++] = '.';
            memcpy(buf + n, names[i], nl);
            n += nl;
        }
        if (k > 0 && !strcmp(names[0], "__dict__") && kind != PC_OPAQUE) {
            /* obj.__dict__: a dict of obj's attributes, checked by key */
            n -= n > 9 ? 9 : n;
            py_cands_add(c, out, PC_ATTRS, buf, n, kind);
            continue;
        }
        py_cands_add(c, out, kind, buf, n, rc->aux);
    }
}

void py_cands_extend(struct py_ctx *c, const struct py_cands *roots, const char *const *names,
                     int k, struct py_cands *out)
{
    const char *rev[CHAIN_MAX];
    if (k > CHAIN_MAX)
        k = CHAIN_MAX;
    for (int i = 0; i < k; i++)
        rev[k - 1 - i] = names[i];
    append_chain(c, roots, rev, k, out);
}

static void resolve_attr(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_cands *out)
{
    const struct py_fields *f = &c->L->f;
    const char *names[CHAIN_MAX];
    int k = 0;
    TSNode cur = n;
    struct py_cands roots = {0};
    while (py_kind(c, cur) == PK_ATTRIBUTE && k < CHAIN_MAX) {
        names[k] = py_name(c, ts_node_child_by_field_id(cur, f->attribute));
        if (!names[k])
            return;
        k++;
        cur = ts_node_child_by_field_id(cur, f->object);
    }
    if (py_kind(c, cur) == PK_ATTRIBUTE)
        py_cands_add(c, &roots, PC_OPAQUE, "", 0, 0);
    else
        py_resolve(c, cur, scope, depth + 1, &roots);
    append_chain(c, &roots, names, k, out);
}

TSNode py_call_arg(struct py_ctx *c, TSNode call, uint32_t i, const char *kw, int *ret_unknown)
{
    const struct py_fields *f = &c->L->f;
    TSNode args = ts_node_child_by_field_id(call, f->arguments), found = {0};
    *ret_unknown = 0;
    if (py_kind(c, args) == PK_GENERATOR)
        return i == 0 ? args : found;
    TSTreeCursor *cur = py_cursor(c, args);
    if (!cur) {
        *ret_unknown = 1;
        return found;
    }
    uint32_t pos = 0;
    int splat = 0;
    for (int more = ts_tree_cursor_goto_first_child(cur); more;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        TSNode k = ts_tree_cursor_current_node(cur);
        if (!ts_node_is_named(k) || ts_node_is_extra(k))
            continue;
        enum py_kind kk = py_kind(c, k);
        if (kk == PK_LIST_SPLAT || kk == PK_DICT_SPLAT) {
            splat = 1;
        } else if (kk == PK_KEYWORD_ARGUMENT) {
            TSNode kn = ts_node_child_by_field_id(k, f->name);
            const char *name = kw ? py_name(c, kn) : NULL;
            if (name && strcmp(name, kw) == 0) {
                found = ts_node_child_by_field_id(k, f->value);
                break;
            }
        } else if (!splat && pos++ == i) {
            found = k;
            break;
        }
    }
    py_cursor_done(c, cur);
    if (ts_node_is_null(found) && splat)
        *ret_unknown = 1;
    return found;
}

/* What a call of a known reflective function returns. */
static void resolve_call_of(struct py_ctx *c, const struct py_cand *fc, TSNode call, int32_t scope,
                            int depth, struct py_cands *out)
{
    struct py_sbuf name;
    name.n = 0;
    int unknown;
    const char *s = fc->s;
    if (!strcmp(s, "builtins.__import__") || !strcmp(s, "importlib.__import__") ||
        !strcmp(s, "importlib.import_module")) {
        TSNode a = py_call_arg(c, call, 0, "name", &unknown);
        if (ts_node_is_null(a) || !py_fold_str(c, a, scope, depth + 1, &name))
            return;
        size_t n = name.n;
        int top = s[0] != 'i' || !strcmp(s, "importlib.__import__");
        const char *dot = top ? memchr(name.s, '.', n) : NULL;
        /* __import__("a.b") returns a; import_module("a.b") returns a.b */
        py_cands_add(c, out, PC_IMPORT, name.s, dot ? (size_t)(dot - name.s) : n, dot != NULL);
    } else if (!strcmp(s, "builtins.getattr")) {
        TSNode a = py_call_arg(c, call, 1, NULL, &unknown);
        if (ts_node_is_null(a) || !py_fold_str(c, a, scope, depth + 1, &name))
            return;
        struct py_cands roots = {0};
        py_resolve(c, py_call_arg(c, call, 0, NULL, &unknown), scope, depth + 1, &roots);
        const char *names[1] = {name.s};
        append_chain(c, &roots, names, 1, out);
    } else if (!strcmp(s, "builtins.globals") || !strcmp(s, "builtins.locals")) {
        py_cands_add(c, out, PC_NAMESPACE, s + 9, strlen(s + 9), 0);
    } else if (!strcmp(s, "builtins.vars")) {
        TSNode a = py_call_arg(c, call, 0, NULL, &unknown);
        struct py_cands objs = {0};
        if (ts_node_is_null(a) && !unknown) {
            py_cands_add(c, out, PC_NAMESPACE, "locals", 6, 0);
            return;
        }
        py_resolve(c, a, scope, depth + 1, &objs);
        out->overflow |= objs.overflow;
        for (uint32_t i = 0; i < objs.n; i++)
            py_cands_add(c, out, PC_ATTRS, objs.v[i].s, objs.v[i].len, objs.v[i].kind);
    }
}

static void resolve_call(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_cands *out)
{
    struct py_cands fn = {0};
    py_resolve(c, ts_node_child_by_field_id(n, c->L->f.function), scope, depth + 1, &fn);
    out->overflow |= fn.overflow;
    uint32_t before = out->n;
    for (uint32_t i = 0; i < fn.n; i++)
        if (fn.v[i].kind == PC_BUILTIN || fn.v[i].kind == PC_IMPORT)
            resolve_call_of(c, &fn.v[i], n, scope, depth, out);
    if (out->n == before)
        py_cands_add(c, out, PC_OPAQUE, "", 0, 0);
}

/* `[eval][0]`, `(a, b)[-1]`, `sys.modules["os"]`. */
static void resolve_subscript(struct py_ctx *c, TSNode n, int32_t scope, int depth,
                              struct py_cands *out)
{
    const struct py_fields *f = &c->L->f;
    TSNode v = ts_node_child_by_field_id(n, f->value),
           key = ts_node_child_by_field_id(n, f->subscript);
    while (py_kind(c, v) == PK_PAREN && !ts_node_is_null(py_first_expr(c, v)))
        v = py_first_expr(c, v);
    enum py_kind vk = py_kind(c, v);
    long long i;
    if ((vk == PK_LIST || vk == PK_TUPLE) && py_fold_int(c, key, scope, depth + 1, &i)) {
        uint32_t count = ts_node_named_child_count(v);
        if (i < 0)
            i += count;
        if (count <= LITERAL_INDEX_MAX && i >= 0 && i < (long long)count) {
            TSNode e = ts_node_named_child(v, (uint32_t)i);
            if (py_kind(c, e) != PK_LIST_SPLAT) {
                py_resolve(c, e, scope, depth + 1, out);
                return;
            }
        }
    }
    struct py_cands base = {0};
    struct py_sbuf name;
    name.n = 0;
    py_resolve(c, v, scope, depth + 1, &base);
    out->overflow |= base.overflow;
    for (uint32_t k = 0; k < base.n; k++) {
        const struct py_cand *b = &base.v[k];
        if (b->kind == PC_IMPORT && !strcmp(b->s, "sys.modules") &&
            py_fold_str(c, key, scope, depth + 1, &name)) {
            py_cands_add(c, out, PC_IMPORT, name.s, name.n, 0);
        } else if (b->kind == PC_ATTRS && py_fold_str(c, key, scope, depth + 1, &name)) {
            /* vars(obj)["x"] is obj.x */
            struct py_cands obj = {0};
            const char *names[1] = {name.s};
            py_cands_add(c, &obj, (enum py_cand_kind)b->aux, b->s, b->len, 0);
            append_chain(c, &obj, names, 1, out);
        }
    }
    py_cands_add(c, out, PC_OPAQUE, "", 0, 0);
}

void py_resolve(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_cands *out)
{
    const struct py_fields *f = &c->L->f;
    if (ts_node_is_null(n))
        return;
    if (depth > PY_RESOLVE_DEPTH || !py_step(c)) {
        out->overflow = 1;
        return;
    }
    switch (py_kind(c, n)) {
    case PK_PAREN:
        py_resolve(c, py_first_expr(c, n), scope, depth + 1, out);
        break;
    case PK_IDENTIFIER:
        py_resolve_name(c, n, NULL, scope, depth, out);
        break;
    case PK_ATTRIBUTE:
        resolve_attr(c, n, scope, depth, out);
        break;
    case PK_CALL:
        resolve_call(c, n, scope, depth, out);
        break;
    case PK_SUBSCRIPT:
        resolve_subscript(c, n, scope, depth, out);
        break;
    case PK_CONDITIONAL: {
        /* body, condition, alternative: the condition's candidates are
         * extra, which can only make the checks stricter */
        uint32_t count = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < count && i < 8; i++) {
            TSNode k = ts_node_named_child(n, i);
            if (!ts_node_is_extra(k))
                py_resolve(c, k, scope, depth + 1, out);
        }
        break;
    }
    case PK_BOOLEAN_OP:
        py_resolve(c, ts_node_child_by_field_id(n, f->left), scope, depth + 1, out);
        py_resolve(c, ts_node_child_by_field_id(n, f->right), scope, depth + 1, out);
        break;
    case PK_ASSIGNMENT:
        py_resolve(c, ts_node_child_by_field_id(n, f->right), scope, depth + 1, out);
        break;
    case PK_NAMED_EXPR:
        py_resolve(c, ts_node_child_by_field_id(n, f->value), scope, depth + 1, out);
        break;
    default:
        py_cands_add(c, out, PC_OPAQUE, "", 0, 0);
        break;
    }
}
