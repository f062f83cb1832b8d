/* python_scope.c - scope table, binding hash, identifier normalisation. */
#include "python_scope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"

/* Initial sizes; tables double from there. */
#define SCOPES_INITIAL 16
#define BINDS_INITIAL 64
#define HTAB_INITIAL 128

/* Grow *items (of elem bytes) so that one more fits. */
static int grow(void **items, size_t *cap, size_t count, size_t elem, size_t initial)
{
    if (count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : initial;
    if (ncap < *cap || ncap > SIZE_MAX / elem)
        return -ENOMEM;
    void *p = realloc(*items, ncap * elem);
    if (!p)
        return -ENOMEM;
    *items = p;
    *cap = ncap;
    return 0;
}

int32_t py_scope_new(struct py_ctx *c, int32_t parent, enum py_scope_kind kind)
{
    if (c->n_scopes >= INT32_MAX || grow((void **)&c->scopes, &c->cap_scopes, c->n_scopes,
                                         sizeof(*c->scopes), SCOPES_INITIAL) < 0) {
        py_fail(c, -ENOMEM);
        return -1;
    }
    c->scopes[c->n_scopes] = (struct py_scope){.parent = parent, .kind = (uint8_t)kind};
    return (int32_t)c->n_scopes++;
}

const char *py_name(struct py_ctx *c, TSNode ident)
{
    uint32_t a = ts_node_start_byte(ident), b = ts_node_end_byte(ident);
    if (b > c->len || b < a)
        b = a;
    const char *s = c->src + a;
    size_t n = b - a, i = 0;
    while (i < n && !((unsigned char)s[i] & 0x80))
        i++;
    if (i == n) {
        char *p = sg_arena_strndup(&c->arena, s, n);
        if (!p)
            py_fail(c, -ENOMEM);
        return p;
    }
    /* CPython reads identifiers in NFKC form: `ｅｘｅｃ` is `exec` */
    char *norm = NULL;
    int r = sg_nfkc(s, n, &norm);
    const char *p = r == 0 ? sg_arena_strndup(&c->arena, norm, strlen(norm))
                           : sg_arena_strndup(&c->arena, s, n);
    free(norm);
    if (!p)
        py_fail(c, -ENOMEM);
    return p;
}

const char *py_dotted(struct py_ctx *c, TSNode dotted)
{
    if (py_kind(c, dotted) == PK_IDENTIFIER)
        return py_name(c, dotted);
    char buf[PY_NAME_MAX];
    size_t n = 0;
    TSTreeCursor *cur = py_cursor(c, dotted);
    int more = cur && ts_tree_cursor_goto_first_child(cur);
    for (; more; more = ts_tree_cursor_goto_next_sibling(cur)) {
        TSNode k = ts_tree_cursor_current_node(cur);
        if (py_kind(c, k) != PK_IDENTIFIER)
            continue;
        const char *part = py_name(c, k);
        size_t pl = part ? strlen(part) : 0;
        if (!part || n + pl + 2 > sizeof(buf))
            break; /* over PY_NAME_MAX: longer than any policy entry */
        if (n)
            buf[n++] = '.';
        memcpy(buf + n, part, pl);
        n += pl;
    }
    py_cursor_done(c, cur);
    if (c->err)
        return NULL;
    char *p = sg_arena_strndup(&c->arena, buf, n);
    if (!p)
        py_fail(c, -ENOMEM);
    return p;
}

static size_t slot_hash(int32_t scope, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)scope;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot holding (scope, name)'s chain, or the empty slot where it goes. */
static size_t slot_find(const struct py_ctx *c, int32_t scope, const char *name)
{
    size_t mask = c->hcap - 1, i = slot_hash(scope, name) & mask;
    for (;;) {
        int32_t h = c->htab[i];
        if (h < 0 || (c->binds[h].scope == scope && strcmp(c->binds[h].name, name) == 0))
            return i;
        i = (i + 1) & mask;
    }
}

static int htab_grow(struct py_ctx *c)
{
    if (c->hcap && c->n_binds * 2 < c->hcap)
        return 0;
    size_t ncap = c->hcap ? c->hcap * 2 : HTAB_INITIAL;
    int32_t *old = c->htab, *nt = malloc(ncap * sizeof(*nt));
    if (!nt)
        return -ENOMEM;
    memset(nt, 0xff, ncap * sizeof(*nt)); /* -1 everywhere */
    size_t ocap = c->hcap;
    c->htab = nt;
    c->hcap = ncap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i] >= 0)
            nt[slot_find(c, c->binds[old[i]].scope, c->binds[old[i]].name)] = old[i];
    free(old);
    return 0;
}

int32_t py_bind_find(const struct py_ctx *c, int32_t scope, const char *name)
{
    if (!c->hcap)
        return -1;
    return c->htab[slot_find(c, scope, name)];
}

/* Where a binding of name in scope s really lands (global/nonlocal). */
static int32_t bind_target(const struct py_ctx *c, int32_t s, const char *name, uint8_t *definite)
{
    for (int32_t i = py_bind_find(c, s, name); i >= 0; i = c->binds[i].next) {
        if (c->binds[i].kind == PB_GLOBAL) {
            *definite = 0;
            return PY_MODULE_SCOPE;
        }
        if (c->binds[i].kind == PB_NONLOCAL) {
            for (int32_t p = c->scopes[s].parent; p >= 0; p = c->scopes[p].parent)
                if (c->scopes[p].kind == PS_FUNCTION)
                    return p;
            return s;
        }
    }
    return s;
}

int py_bind(struct py_ctx *c, const struct py_binding *b)
{
    if (!b->name)
        return c->err;
    if (c->n_binds >= INT32_MAX / 2 ||
        grow((void **)&c->binds, &c->cap_binds, c->n_binds, sizeof(*c->binds), BINDS_INITIAL) < 0 ||
        htab_grow(c) < 0) {
        py_fail(c, -ENOMEM);
        return -ENOMEM;
    }
    struct py_binding nb = *b;
    if (nb.kind != PB_GLOBAL && nb.kind != PB_NONLOCAL && nb.scope != PY_MODULE_SCOPE)
        nb.scope = bind_target(c, nb.scope, nb.name, &nb.definite);
    if (nb.scope != PY_MODULE_SCOPE)
        nb.definite = 0;
    nb.busy = 0;
    size_t slot = slot_find(c, nb.scope, nb.name);
    nb.next = c->htab[slot];
    int32_t idx = (int32_t)c->n_binds++;
    c->binds[idx] = nb;
    c->htab[slot] = idx;
    return 0;
}

int32_t py_scope_non_comprehension(const struct py_ctx *c, int32_t s)
{
    while (s > 0 && c->scopes[s].kind == PS_COMPREHENSION)
        s = c->scopes[s].parent;
    return s;
}

TSTreeCursor *py_cursor(struct py_ctx *c, TSNode n)
{
    if (c->cursors_used >= PY_CURSORS)
        return NULL;
    uint32_t i = c->cursors_used++;
    if (i < c->cursors_made) {
        ts_tree_cursor_reset(&c->cursors[i], n);
    } else {
        c->cursors[i] = ts_tree_cursor_new(n);
        c->cursors_made++;
    }
    return &c->cursors[i];
}

void py_cursor_done(struct py_ctx *c, TSTreeCursor *cur)
{
    if (cur && c->cursors_used > 0)
        c->cursors_used--;
}

void py_scope_free(struct py_ctx *c)
{
    for (uint32_t i = 0; i < c->cursors_made; i++)
        ts_tree_cursor_delete(&c->cursors[i]);
    c->cursors_made = c->cursors_used = 0;
    free(c->scopes);
    free(c->binds);
    free(c->htab);
    c->scopes = NULL;
    c->binds = NULL;
    c->htab = NULL;
    c->n_scopes = c->cap_scopes = c->n_binds = c->cap_binds = c->hcap = 0;
}
