/* js_consts.c - constant propagation through bindings (js_consts.h).
 *
 * `const a = "constr"; const b = a + "uctor"; f[b]` spells a forbidden
 * property in pieces held by names. The first walk records every binding
 * of a name to an expression that may fold to a string; after the walk the
 * table is complete (so uses before a declaration count too) and each
 * binding is folded with identifiers followed through the table.
 *
 * A name bound more than once (two declarations in different scopes, or a
 * `let` assigned again) has no single value and folds as dynamic; a name
 * that any of its bindings sets to a forbidden property name is still
 * tainted (js_names.c), so `x[k]` is caught whichever binding reaches it.
 * Parameters, catch and loop bindings are not recorded: a parameter named
 * like a constant is folded as that constant (a false positive at worst).
 * The table only ever adds violations: a key that folded without it is
 * checked as before.
 */
#include "js_consts.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "js_fold.h"
#include "js_names.h"
#include "rules.h"
#include "ts_node.h"

#define CONSTS_MAX 65536   /* recorded bindings; past it the check fails closed */
#define DEFER_MAX 65536    /* deferred keys; past it the check fails closed */
#define LOOKUPS_MAX 262144 /* identifiers followed after the walk, in total */

struct const_entry {
    uint64_t hash; /* of the decoded name */
    TSNode name, value;
    int complex; /* the value is too deep or large to fold */
};

struct deferred {
    TSNode expr;
    enum js_defer_kind kind;
};

struct js_consts {
    struct const_entry *v;
    size_t n, cap;
    struct deferred *d;
    size_t nd, capd;
    int sorted;
    int any_complex;
};

void js_consts_free(struct js_consts *k)
{
    if (!k)
        return;
    free(k->v);
    free(k->d);
    free(k);
}

static uint64_t name_hash(const struct js_str *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < s->len; i++)
        h = (h ^ (unsigned char)s->buf[i]) * 1099511628211ULL;
    return h;
}

static struct js_consts *consts_of(struct js_ctx *c)
{
    if (!c->consts && !(c->consts = calloc(1, sizeof(*c->consts))) && !c->err)
        c->err = -ENOMEM;
    return c->consts;
}

/* Grow an array of `size`-byte items to hold one more; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t n, size_t size, size_t max)
{
    if (n < *cap)
        return 0;
    if (n >= max)
        return -1;
    size_t nc = *cap ? *cap * 2 : 64;
    void *p = realloc(*arr, nc * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* Expressions that may fold to a string; anything else never does. */
static int may_fold(const struct js_syms *sy, TSNode v)
{
    TSSymbol s = sg_ts_symbol(v);
    return s == sy->string || s == sy->template_string || s == sy->binary_expression ||
           s == sy->call_expression || s == sy->identifier || s == sy->array ||
           s == sy->parenthesized_expression || s == sy->sequence_expression;
}

void js_consts_record(struct js_ctx *c, TSNode name, TSNode value)
{
    struct js_str s;
    struct js_consts *k;
    if (!may_fold(c->sy, value) || !(k = consts_of(c)))
        return;
    if (grow((void **)&k->v, &k->cap, k->n, sizeof(*k->v), CONSTS_MAX) < 0) {
        js_report(c, value, SG_RULE_REFLECTION_DYNAMIC,
                  "too many string bindings to check (at most %d)", CONSTS_MAX);
        c->stop = 1;
        return;
    }
    js_node_name(c, name, &s);
    k->v[k->n++] = (struct const_entry){.hash = name_hash(&s), .name = name, .value = value};
}

void js_consts_defer(struct js_ctx *c, TSNode expr, enum js_defer_kind kind)
{
    struct js_consts *k = consts_of(c);
    if (!k)
        return;
    if (grow((void **)&k->d, &k->capd, k->nd, sizeof(*k->d), DEFER_MAX) < 0) {
        js_report(c, expr, SG_RULE_REFLECTION_DYNAMIC,
                  "too many computed names to check (at most %d)", DEFER_MAX);
        c->stop = 1;
        return;
    }
    k->d[k->nd++] = (struct deferred){.expr = expr, .kind = kind};
}

static int cmp_entry(const void *a, const void *b)
{
    const struct const_entry *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return ts_node_start_byte(x->name) < ts_node_start_byte(y->name) ? -1 : 1;
}

/* The entry of the one binding of ident's name; NULL when there is none
 * or more than one. */
static const struct const_entry *single_binding(const struct js_ctx *c, TSNode ident)
{
    const struct js_consts *k = c->consts;
    struct js_str name, other;
    if (!k || !k->sorted || !k->n)
        return NULL;
    js_node_name(c, ident, &name);
    uint64_t h = name_hash(&name);
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->v[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct const_entry *found = NULL;
    for (size_t i = lo; i < k->n && k->v[i].hash == h; i++) {
        js_node_name(c, k->v[i].name, &other);
        if (other.len != name.len || memcmp(other.buf, name.buf, name.len) != 0)
            continue; /* a hash collision */
        if (found)
            return NULL; /* bound twice: no single value */
        found = &k->v[i];
    }
    return found;
}

/* The lookup's state: each fold is bounded on its own (JS_FOLD_NODES_MAX),
 * this bounds the work of all of them together. */
struct lookup_arg {
    const struct js_ctx *c;
    size_t *lookups;
};

static TSNode lookup(const void *arg, TSNode ident)
{
    const struct lookup_arg *la = arg;
    if (++*la->lookups > LOOKUPS_MAX)
        return (TSNode){0};
    const struct const_entry *e = single_binding(la->c, ident);
    return e ? e->value : (TSNode){0};
}

int js_consts_is_complex(const struct js_ctx *c, TSNode ident)
{
    if (!c->consts || !c->consts->any_complex || !js_is(ident, c->sy->identifier))
        return 0;
    const struct const_entry *e = single_binding(c, ident);
    return e && e->complex;
}

static void check_deferred(struct js_ctx *c, const struct js_fold_env *env,
                           const struct deferred *d)
{
    struct js_str v;
    enum js_fold_kind kind = js_fold_env(c->sy, c->src, env, d->expr, &v);
    if (kind == JS_FOLD_COMPLEX)
        js_report(c, d->expr, SG_RULE_REFLECTION_DYNAMIC,
                  d->kind == JS_DEFER_KEY ? "computed property name is too complex to check"
                                          : "timer argument is too complex to check");
    else if (kind == JS_FOLD_STRING && d->kind == JS_DEFER_TIMER)
        js_report(c, d->expr, SG_RULE_CALL_FORBIDDEN,
                  "timer with a string argument evaluates code (the string is built from "
                  "constants)");
    else if (kind == JS_FOLD_STRING && js_is_forbidden_attr(c, &v))
        js_report(c, d->expr, SG_RULE_ATTRIBUTE_FORBIDDEN,
                  "computed property name holds '%.80s' (built from constants), which is "
                  "forbidden",
                  v.buf);
    else if (kind == JS_FOLD_STRING && js_is_denied_dunder(c, &v))
        js_report(c, d->expr, SG_RULE_ATTRIBUTE_DUNDER,
                  "computed property name holds dunder '%.80s' (built from constants), which "
                  "is forbidden",
                  v.buf);
}

int js_consts_finish(struct js_ctx *c)
{
    struct js_consts *k = c->consts;
    struct js_str v;
    if (!k || !k->n || c->err || c->stop)
        return 0;
    qsort(k->v, k->n, sizeof(*k->v), cmp_entry);
    k->sorted = 1;
    size_t lookups = 0;
    const struct lookup_arg la = {.c = c, .lookups = &lookups};
    const struct js_fold_env env = {.lookup = lookup, .arg = &la};
    for (size_t i = 0; i < k->n && !c->err; i++) {
        enum js_fold_kind kind = js_fold_env(c->sy, c->src, &env, k->v[i].value, &v);
        if (kind == JS_FOLD_STRING)
            js_taint_name(c, k->v[i].name, k->v[i].value, &v);
        else if (kind == JS_FOLD_COMPLEX)
            k->v[i].complex = k->any_complex = 1;
    }
    for (size_t i = 0; i < k->nd && !c->err; i++)
        check_deferred(c, &env, &k->d[i]);
    if (lookups > LOOKUPS_MAX) /* fail closed: some folds stopped early */
        js_report(c, k->v[0].value, SG_RULE_REFLECTION_DYNAMIC,
                  "too many constant names to follow (at most %d)", LOOKUPS_MAX);
    return k->any_complex;
}
