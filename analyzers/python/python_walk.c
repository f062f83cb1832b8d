/* python_walk.c - phase 1: limits, scopes, bindings, events.
 *
 * The walk is a TSTreeCursor loop with an explicit frame per depth, so a
 * hostile nesting depth costs heap (bounded by limit.depth), never C stack.
 * Each frame says how the node's identifiers are used (load, store, ...) and
 * in which scope they are looked up and bound, following Python's rules:
 * default values, decorators and annotations belong to the enclosing scope,
 * a comprehension's first iterable too, a walrus target binds outside the
 * comprehension, `global`/`nonlocal` redirect bindings.
 */
#include "python_walk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python_rules.h"
#include "python_scope.h"
#include "rules.h"

/* Targets of the pairwise `a, b = x, y` value mapping. */
#define PAIRWISE_MAX 64

/* How identifiers in a subtree are used. */
enum py_mode {
    CM_LOAD,     /* a reference */
    CM_STORE,    /* an assignment target */
    CM_AUG,      /* `x += 1`: read and written */
    CM_PARAMS,   /* inside a parameter list */
    CM_PARAM,    /* a parameter name */
    CM_DEF,      /* a def/class name */
    CM_DEL,      /* `del x` */
    CM_GLOBAL,   /* `global x` */
    CM_NONLOCAL, /* `nonlocal x` */
    CM_PATTERN,  /* a match-case pattern */
    CM_CAPTURE,  /* a capture name in a pattern */
    CM_CHAIN,    /* a dotted name read as a value (match class/value pattern) */
    CM_ATTRNAME, /* an attribute name (match keyword pattern) */
    CM_SKIP      /* nothing to record (import names, keyword names, ...) */
};

struct py_frame {
    TSNode node;
    TSNode value;  /* CM_STORE: the value stored into this target */
    int32_t scope; /* where loads are looked up */
    int32_t bind;  /* where stores bind */
    int32_t inner; /* scope this node opens, or -1 */
    int32_t outer; /* first for_in_clause: the comprehension's enclosing scope */
    uint32_t top_end;
    uint16_t nidx; /* named children entered so far */
    uint8_t kind, mode, has_value, top, callee, seen_for, first_for;
    uint8_t own;  /* the name bound here is the job's own object (enum py_own) */
    TSNode owner; /* CM_DEF of a class: the class_definition (its body is inner) */
    int32_t owner_scope;
    uint8_t method; /* a def whose first parameter is the instance (or class) */
};

/* py_frame.method */
enum { METHOD_INSTANCE = 1, METHOD_CLASS = 2 };

static int add_event(struct py_ctx *c, TSNode n, int32_t scope, enum py_event_kind kind, int callee)
{
    if (c->n_events == c->cap_events) {
        size_t ncap = c->cap_events ? c->cap_events * 2 : 256;
        struct py_event *e = realloc(c->events, ncap * sizeof(*e));
        if (!e) {
            py_fail(c, -ENOMEM);
            return -ENOMEM;
        }
        c->events = e;
        c->cap_events = ncap;
    }
    c->events[c->n_events++] = (struct py_event){
        .node = n, .scope = scope, .kind = (uint8_t)kind, .callee = (uint8_t)callee};
    return 0;
}

static void bind_simple(struct py_ctx *c, const struct py_frame *F, TSNode ident,
                        enum py_bind_kind kind)
{
    struct py_binding b = {.name = py_name(c, ident),
                           .scope = F->bind,
                           .eval_scope = F->scope,
                           .kind = (uint8_t)kind,
                           .definite = F->top,
                           .stmt_end = F->top_end,
                           .own = (uint8_t)(kind == PB_OPAQUE ? F->own : 0),
                           .inner = F->owner_scope,
                           .def = F->owner};
    if (kind == PB_OPAQUE && F->mode == CM_STORE && F->has_value) {
        b.kind = PB_ALIAS;
        b.value = F->value;
    }
    py_bind(c, &b);
}

static void on_identifier(struct py_ctx *c, const struct py_frame *F, TSNode n)
{
    switch (F->mode) {
    case CM_LOAD:
        add_event(c, n, F->scope, PE_NAME, F->callee);
        break;
    case CM_AUG:
        add_event(c, n, F->scope, PE_NAME, 0);
        bind_simple(c, F, n, PB_OPAQUE);
        break;
    case CM_STORE:
    case CM_PARAM:
    case CM_DEF:
    case CM_CAPTURE:
        bind_simple(c, F, n, PB_OPAQUE);
        break;
    case CM_DEL:
        add_event(c, n, F->scope, PE_NAME, 0); /* `del __builtins__` names it too */
        bind_simple(c, F, n, PB_DEL);
        break;
    case CM_GLOBAL:
        bind_simple(c, F, n, PB_GLOBAL);
        break;
    case CM_NONLOCAL:
        bind_simple(c, F, n, PB_NONLOCAL);
        break;
    case CM_ATTRNAME:
        add_event(c, n, F->scope, PE_ATTRNAME, 0);
        break;
    default:
        break;
    }
}

static void bind_import(struct py_ctx *c, const struct py_frame *F, TSNode name_ident,
                        const char *path, int partial)
{
    struct py_binding b = {.name = py_name(c, name_ident),
                           .scope = F->scope,
                           .eval_scope = F->scope,
                           .kind = PB_IMPORT,
                           .import_val = path,
                           .partial = (uint8_t)partial,
                           .definite = F->top,
                           .stmt_end = F->top_end};
    if (path)
        py_bind(c, &b);
}

/* `import a.b.c` binds a (partial); `import a.b as x` binds x = a.b. */
static void bind_import_stmt(struct py_ctx *c, const struct py_frame *F, TSNode n)
{
    const struct py_fields *f = &c->L->f;
    TSTreeCursor *cur = py_cursor(c, n);
    for (int more = cur && ts_tree_cursor_goto_first_child(cur); more;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        if (ts_tree_cursor_current_field_id(cur) != f->name)
            continue;
        TSNode k = ts_tree_cursor_current_node(cur);
        if (py_kind(c, k) == PK_ALIASED_IMPORT) {
            TSNode mod = ts_node_child_by_field_id(k, f->name);
            TSNode alias = ts_node_child_by_field_id(k, f->alias);
            if (!ts_node_is_null(mod) && !ts_node_is_null(alias))
                bind_import(c, F, alias, py_dotted(c, mod), 0);
        } else if (py_kind(c, k) == PK_DOTTED_NAME && ts_node_named_child_count(k) > 0) {
            TSNode first = ts_node_named_child(k, 0);
            bind_import(c, F, first, py_name(c, first), ts_node_named_child_count(k) > 1);
        }
    }
    py_cursor_done(c, cur);
}

/* Join "module.name" into the arena. */
static const char *join_path(struct py_ctx *c, const char *mod, const char *name)
{
    if (!mod || !name)
        return NULL;
    size_t a = strlen(mod), b = strlen(name);
    char *p = sg_arena_alloc(&c->arena, a + b + 2);
    if (!p) {
        py_fail(c, -ENOMEM);
        return NULL;
    }
    memcpy(p, mod, a);
    p[a] = '.';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* `from m import n as x` binds x = m.n; a relative module binds opaquely. */
static void bind_from_stmt(struct py_ctx *c, const struct py_frame *F, TSNode n)
{
    const struct py_fields *f = &c->L->f;
    TSNode modn = ts_node_child_by_field_id(n, f->module_name);
    const char *mod = py_kind(c, modn) == PK_DOTTED_NAME ? py_dotted(c, modn) : NULL;
    TSTreeCursor *cur = py_cursor(c, n);
    for (int more = cur && ts_tree_cursor_goto_first_child(cur); more;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        if (py_kind(c, ts_tree_cursor_current_node(cur)) == PK_WILDCARD_IMPORT && mod) {
            /* recorded under "*": an unbound name may be any of mod's */
            struct py_binding b = {.name = "*",
                                   .scope = PY_MODULE_SCOPE,
                                   .eval_scope = F->scope,
                                   .kind = PB_IMPORT,
                                   .import_val = mod};
            py_bind(c, &b);
            continue;
        }
        if (ts_tree_cursor_current_field_id(cur) != f->name)
            continue;
        TSNode k = ts_tree_cursor_current_node(cur), target = k, alias = k;
        if (py_kind(c, k) == PK_ALIASED_IMPORT) {
            target = ts_node_child_by_field_id(k, f->name);
            alias = ts_node_child_by_field_id(k, f->alias);
        }
        if (ts_node_is_null(target) || ts_node_is_null(alias))
            continue;
        if (py_kind(c, alias) == PK_DOTTED_NAME && ts_node_named_child_count(alias) > 0)
            alias = ts_node_named_child(alias, 0);
        if (mod) {
            bind_import(c, F, alias, join_path(c, mod, py_dotted(c, target)), 0);
        } else {
            struct py_frame G = *F;
            G.bind = F->scope;
            G.mode = CM_DEF;
            bind_simple(c, &G, alias, PB_OPAQUE);
        }
    }
    py_cursor_done(c, cur);
}

static int is_container(enum py_kind k)
{
    switch (k) {
    case PK_PATTERN_LIST:
    case PK_TUPLE_PATTERN:
    case PK_LIST_PATTERN:
    case PK_TUPLE:
    case PK_LIST:
    case PK_EXPRESSION_LIST:
    case PK_PAREN:
    case PK_LIST_SPLAT_PATTERN:
    case PK_LIST_SPLAT:
    case PK_AS_PATTERN_TARGET:
        return 1;
    default:
        return 0;
    }
}

/* A target container keeps its value only when `a, b = x, y` can be
 * mapped element by element (same length, no starred value). */
static void check_pairwise(struct py_ctx *c, struct py_frame *F)
{
    if (!F->has_value || F->kind == PK_PAREN || F->kind == PK_AS_PATTERN_TARGET)
        return;
    TSNode v = F->value;
    enum py_kind vk = py_kind(c, v);
    uint32_t nv = ts_node_named_child_count(v);
    F->has_value = 0;
    if ((vk != PK_TUPLE && vk != PK_EXPRESSION_LIST && vk != PK_LIST) || nv > PAIRWISE_MAX ||
        nv != ts_node_named_child_count(F->node))
        return;
    for (uint32_t i = 0; i < nv; i++)
        if (py_kind(c, ts_node_named_child(v, i)) == PK_LIST_SPLAT)
            return;
    F->has_value = 1;
}

/* How the children of a STORE/DEL/PATTERN/PARAMS container are used. */
static void derive_generic(struct py_ctx *c, const struct py_frame *P, struct py_frame *F, int idx)
{
    switch (P->mode) {
    case CM_STORE:
    case CM_DEL:
        if (!is_container(P->kind))
            return;
        F->mode = P->mode;
        if (P->mode == CM_STORE && P->has_value && idx >= 0) {
            if (P->kind == PK_PAREN || P->kind == PK_AS_PATTERN_TARGET) {
                F->value = P->value;
                F->has_value = 1;
            } else if (F->kind != PK_LIST_SPLAT_PATTERN && F->kind != PK_LIST_SPLAT) {
                F->value = ts_node_named_child(P->value, (uint32_t)idx);
                F->has_value = !ts_node_is_null(F->value);
            }
        }
        return;
    case CM_PATTERN:
        F->mode = F->kind == PK_IDENTIFIER ? CM_CAPTURE : CM_PATTERN;
        return;
    case CM_PARAMS:
        F->mode = F->kind == PK_IDENTIFIER ? CM_PARAM : CM_PARAMS;
        return;
    default:
        (void)c;
        return;
    }
}

/* Children of a def/class/lambda: name and parameters bind, body opens. */
static void derive_scope_owner(const struct py_ctx *c, const struct py_frame *P, struct py_frame *F,
                               TSFieldId fld)
{
    const struct py_fields *f = &c->L->f;
    if (fld == f->name) {
        F->mode = CM_DEF;
        F->bind = P->scope;
        F->top = P->top;
        F->own = P->kind == PK_CLASS_DEF        ? PY_OWN_CLASS
                 : P->kind == PK_LAMBDA         ? PY_OWN_NONE
                 : P->method == METHOD_INSTANCE ? PY_OWN_METHOD
                                                : PY_OWN_VALUE;
        F->owner = P->node;
        F->owner_scope = P->inner;
    } else if (fld == f->parameters) {
        F->mode = CM_PARAMS;
        F->bind = P->inner;
        F->method = P->method;
    } else if (fld == f->body) {
        F->scope = F->bind = P->inner;
    }
}

/* Children of parameter forms: names bind in the function, defaults and
 * annotations are evaluated outside it. */
static int derive_param(const struct py_ctx *c, const struct py_frame *P, struct py_frame *F,
                        TSFieldId fld)
{
    const struct py_fields *f = &c->L->f;
    if (P->mode != CM_PARAMS)
        return 0;
    if (fld == f->value || fld == f->type)
        return 1; /* LOAD in P->scope, the enclosing scope */
    F->mode = F->kind == PK_IDENTIFIER ? CM_PARAM : CM_PARAMS;
    return 1;
}

/* The frame of child n of P (field fld, named-child index idx or -1).
 * One dispatch over the parent's kind: split, the table of which child is in
 * which mode would no longer read as one table. */
// NOLINTNEXTLINE(readability-function-size)
static void derive(struct py_ctx *c, struct py_frame *P, struct py_frame *F, TSFieldId fld, int idx)
{
    const struct py_fields *f = &c->L->f;
    enum py_kind k = F->kind;
    if (P->mode == CM_SKIP) {
        F->mode = CM_SKIP;
        return;
    }
    switch (P->kind) {
    case PK_MODULE:
        F->top = k == PK_EXPRESSION_STMT || k == PK_FUNCTION_DEF || k == PK_CLASS_DEF ||
                 k == PK_DECORATED_DEF || k == PK_IMPORT || k == PK_IMPORT_FROM;
        F->top_end = ts_node_end_byte(F->node);
        return;
    case PK_EXPRESSION_STMT:
        F->top = P->top;
        return;
    case PK_DECORATED_DEF:
        F->top = fld == f->definition && P->top;
        return;
    case PK_FUNCTION_DEF:
    case PK_CLASS_DEF:
    case PK_LAMBDA:
        derive_scope_owner(c, P, F, fld);
        return;
    case PK_PARAMETERS:
    case PK_LAMBDA_PARAMETERS:
        F->mode = k == PK_IDENTIFIER ? CM_PARAM : CM_PARAMS;
        /* a method's first parameter is its own instance (or class) */
        if (ts_node_is_named(F->node) && !ts_node_is_extra(F->node) && P->nidx++ == 0)
            F->own = P->method && k == PK_IDENTIFIER ? PY_OWN_VALUE : PY_OWN_NONE;
        return;
    case PK_DEFAULT_PARAM:
    case PK_TYPED_DEFAULT_PARAM:
    case PK_TYPED_PARAM:
    case PK_DICT_SPLAT_PATTERN:
        if (derive_param(c, P, F, fld))
            return;
        break;
    case PK_LIST_COMP:
    case PK_SET_COMP:
    case PK_DICT_COMP:
    case PK_GENERATOR:
        F->scope = F->bind = P->inner;
        if (k == PK_FOR_IN_CLAUSE && !P->seen_for) {
            P->seen_for = 1;
            F->first_for = 1;
            F->outer = P->scope;
        }
        return;
    case PK_FOR_IN_CLAUSE:
        if (fld == f->left)
            F->mode = CM_STORE;
        else if (fld == f->right && P->first_for)
            F->scope = P->outer; /* the first iterable is evaluated outside */
        return;
    case PK_FOR_STATEMENT:
        F->mode = fld == f->left ? CM_STORE : CM_LOAD;
        return;
    case PK_ASSIGNMENT:
        if (fld == f->left) {
            /* `exec: object` annotates, it binds nothing: exec stays the builtin */
            F->mode =
                ts_node_is_null(ts_node_child_by_field_id(P->node, f->right)) ? CM_LOAD : CM_STORE;
            F->top = P->top;
            F->value = P->value;
            F->has_value = P->has_value;
        } else if (fld == f->right && k == PK_ASSIGNMENT) {
            F->top = P->top; /* x = y = v */
        }
        return;
    case PK_AUG_ASSIGNMENT:
        if (fld == f->left && k == PK_IDENTIFIER)
            F->mode = CM_AUG;
        return;
    case PK_NAMED_EXPR:
        if (fld == f->name) {
            F->mode = CM_STORE;
            F->bind = py_scope_non_comprehension(c, P->scope);
            F->value = ts_node_child_by_field_id(P->node, f->value);
            F->has_value = !ts_node_is_null(F->value);
        }
        return;
    case PK_AS_PATTERN:
        if (P->mode == CM_PATTERN)
            F->mode = k == PK_IDENTIFIER ? CM_CAPTURE : CM_PATTERN;
        else if (fld == f->alias)
            F->mode = CM_STORE;
        return;
    case PK_EXCEPT_CLAUSE:
        if (fld == f->alias)
            F->mode = CM_STORE;
        return;
    case PK_DELETE:
        F->mode = CM_DEL;
        return;
    case PK_GLOBAL:
        F->mode = CM_GLOBAL;
        return;
    case PK_NONLOCAL:
        F->mode = CM_NONLOCAL;
        return;
    case PK_ATTRIBUTE:
        if (fld == f->attribute)
            F->mode = CM_SKIP;
        return;
    case PK_CALL:
        F->callee = fld == f->function;
        return;
    case PK_PAREN:
        if (P->mode == CM_LOAD) {
            F->callee = P->callee;
            return;
        }
        break;
    case PK_KEYWORD_ARGUMENT:
        if (fld == f->name)
            F->mode = CM_SKIP;
        return;
    case PK_IMPORT:
    case PK_IMPORT_FROM:
    case PK_FUTURE_IMPORT:
        F->mode = CM_SKIP;
        return;
    case PK_CASE_CLAUSE:
        if (k == PK_CASE_PATTERN)
            F->mode = CM_PATTERN;
        return;
    case PK_CLASS_PATTERN:
        F->mode = k == PK_DOTTED_NAME ? CM_CHAIN : CM_PATTERN;
        return;
    case PK_KEYWORD_PATTERN:
        F->mode = k == PK_IDENTIFIER && idx == 0 ? CM_ATTRNAME : CM_PATTERN;
        return;
    case PK_DICT_PATTERN:
        if (fld == f->key)
            F->mode = k == PK_DOTTED_NAME ? CM_CHAIN : CM_LOAD;
        else
            F->mode = CM_PATTERN;
        return;
    case PK_DOTTED_NAME:
        F->mode = P->mode == CM_CAPTURE ? CM_CAPTURE : CM_SKIP;
        return;
    default:
        break;
    }
    derive_generic(c, P, F, idx);
}

static int stop_with(struct py_ctx *c, TSNode n, const char *rule, const char *msg)
{
    c->stopped = 1;
    int r = sg_violations_add_at(c->out, rule, c->src, c->len, ts_node_start_byte(n),
                                 ts_node_end_byte(n), "%s", msg);
    if (r < 0)
        py_fail(c, r);
    return r;
}

/* Decorators that keep a method's first parameter its own instance or
 * class. Any other decorator may call the function with anything. */
static int keeps_self(const char *s, size_t n)
{
    static const char *const names[] = {"property",        "classmethod",
                                        "abstractmethod",  "abc.abstractmethod",
                                        "cached_property", "functools.cached_property"};
    static const char *const suffixes[] = {".setter", ".getter", ".deleter"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
            return 1;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
        size_t sl = strlen(suffixes[i]);
        if (n > sl && memcmp(s + n - sl, suffixes[i], sl) == 0 && !memchr(s, '.', n - sl) &&
            !memchr(s, '(', n))
            return 1;
    }
    return 0;
}

/* Whether def node fn is a method whose first parameter Python binds
 * itself: METHOD_INSTANCE undecorated or decorated only by keeps_self()
 * decorators, METHOD_CLASS with @classmethod (bound even when taken from
 * the class), 0 otherwise. */
static int plain_method(const struct py_ctx *c, TSNode fn)
{
    TSNode p = ts_node_parent(fn);
    if (py_kind(c, p) != PK_DECORATED_DEF)
        return METHOD_INSTANCE;
    int kind = METHOD_INSTANCE;
    uint32_t count = ts_node_named_child_count(p);
    for (uint32_t i = 0; i < count; i++) {
        TSNode d = ts_node_named_child(p, i);
        if (ts_node_eq(d, fn) || ts_node_is_extra(d))
            continue;
        TSNode e = ts_node_named_child(d, 0);
        if (ts_node_is_null(e))
            return 0;
        uint32_t a = ts_node_start_byte(e), b = ts_node_end_byte(e);
        if (!keeps_self(c->src + a, b - a))
            return 0;
        if (b - a == 11 && memcmp(c->src + a, "classmethod", 11) == 0)
            kind = METHOD_CLASS;
    }
    return kind;
}

/* What entering node F->node records. One switch over the node kinds the
 * walk records, kept together so a kind's handling is found in one place. */
// NOLINTNEXTLINE(readability-function-size)
static void on_node(struct py_ctx *c, struct py_frame *F)
{
    TSNode n = F->node;
    if (F->mode == CM_SKIP)
        return;
    switch ((enum py_kind)F->kind) {
    case PK_IDENTIFIER:
        on_identifier(c, F, n);
        break;
    case PK_ATTRIBUTE:
        add_event(c, n, F->scope, PE_ATTR, F->callee);
        break;
    case PK_MEMBER_TYPE:
        /* The grammar reads `T.name` after a subscript in an annotation as a
         * type, not an attribute, but CPython evaluates it as an attribute
         * access: its name would escape every attribute rule. Fail closed. */
        py_report(c, n, SG_RULE_ANNOTATION_MEMBER,
                  "attribute access the parser reads as a type annotation; write the "
                  "annotation as a plain name or dotted name");
        break;
    case PK_CALL:
        add_event(c, n, F->scope, PE_CALL, F->callee);
        break;
    case PK_SUBSCRIPT:
        add_event(c, n, F->scope, PE_SUBSCRIPT, F->callee);
        break;
    case PK_IMPORT:
        add_event(c, n, F->scope, PE_IMPORT, 0);
        bind_import_stmt(c, F, n);
        break;
    case PK_IMPORT_FROM:
        add_event(c, n, F->scope, PE_IMPORT, 0);
        bind_from_stmt(c, F, n);
        break;
    case PK_FUNCTION_DEF:
        F->method = c->scopes[F->scope].kind == PS_CLASS ? (uint8_t)plain_method(c, n) : 0;
        F->inner = py_scope_new(c, F->scope, PS_FUNCTION);
        break;
    case PK_LAMBDA:
        F->inner = py_scope_new(c, F->scope, PS_FUNCTION);
        break;
    case PK_CLASS_DEF:
        F->inner = py_scope_new(c, F->scope, PS_CLASS);
        break;
    case PK_LIST_COMP:
    case PK_SET_COMP:
    case PK_DICT_COMP:
    case PK_GENERATOR:
        F->inner = py_scope_new(c, F->scope, PS_COMPREHENSION);
        break;
    case PK_ASSIGNMENT:
        F->value = ts_node_child_by_field_id(n, c->L->f.right);
        F->has_value = !ts_node_is_null(F->value);
        break;
    case PK_DOTTED_NAME:
        if (F->mode == CM_CHAIN || (F->mode == CM_PATTERN && ts_node_named_child_count(n) > 1)) {
            add_event(c, n, F->scope, PE_CHAIN, 0);
            F->mode = CM_SKIP;
        } else if (F->mode == CM_PATTERN) {
            F->mode = CM_CAPTURE;
        }
        break;
    case PK_EXEC_STMT:
    case PK_PRINT_STMT:
        /* tree-sitter-python still knows Python 2; CPython 3 does not */
        stop_with(c, n, SG_RULE_SYNTAX_ERROR,
                  F->kind == PK_EXEC_STMT ? "invalid syntax: Python 2 exec statement"
                                          : "invalid syntax: Python 2 print statement");
        break;
    default:
        if (F->mode == CM_STORE && is_container(F->kind))
            check_pairwise(c, F);
        break;
    }
}

/* Parents whose children's roles depend on their field: only for those is
 * the (not free) field lookup done. */
static int needs_field(enum py_kind k)
{
    switch (k) {
    case PK_DECORATED_DEF:
    case PK_FUNCTION_DEF:
    case PK_CLASS_DEF:
    case PK_LAMBDA:
    case PK_DEFAULT_PARAM:
    case PK_TYPED_DEFAULT_PARAM:
    case PK_TYPED_PARAM:
    case PK_DICT_SPLAT_PATTERN:
    case PK_FOR_IN_CLAUSE:
    case PK_FOR_STATEMENT:
    case PK_ASSIGNMENT:
    case PK_AUG_ASSIGNMENT:
    case PK_NAMED_EXPR:
    case PK_AS_PATTERN:
    case PK_EXCEPT_CLAUSE:
    case PK_ATTRIBUTE:
    case PK_CALL:
    case PK_KEYWORD_ARGUMENT:
    case PK_DICT_PATTERN:
        return 1;
    default:
        return 0;
    }
}

static void enter(struct py_ctx *c, struct py_frame *P, struct py_frame *F, TSTreeCursor *cur)
{
    TSNode n = ts_tree_cursor_current_node(cur);
    int idx = -1;
    /* named-child positions matter only for targets and keyword patterns */
    if ((P->mode == CM_STORE || P->kind == PK_KEYWORD_PATTERN) && ts_node_is_named(n))
        idx = P->nidx < UINT16_MAX ? P->nidx++ : UINT16_MAX;
    *F = (struct py_frame){.node = n,
                           .scope = P->scope,
                           .bind = P->scope,
                           .inner = -1,
                           .outer = P->outer,
                           .top_end = P->top_end,
                           .kind = (uint8_t)py_kind(c, n),
                           .mode = CM_LOAD};
    if (P->mode == CM_STORE || P->mode == CM_DEL || P->mode == CM_PARAMS)
        F->bind = P->bind;
    TSFieldId fld =
        P->mode != CM_SKIP && needs_field(P->kind) ? ts_tree_cursor_current_field_id(cur) : 0;
    derive(c, P, F, fld, idx);
    on_node(c, F);
}

/* Count n and check both limits; 1 when the walk must stop. */
static int over_limits(struct py_ctx *c, TSNode n, size_t depth, size_t max_depth, size_t max_nodes)
{
    char msg[128];
    c->nodes++;
    if (depth > c->max_depth)
        c->max_depth = depth;
    if (depth > max_depth) {
        snprintf(msg, sizeof(msg), "syntax tree deeper than %zu levels", max_depth);
        stop_with(c, n, SG_RULE_DEPTH, msg);
        return 1;
    }
    if (c->nodes > max_nodes) {
        snprintf(msg, sizeof(msg), "syntax tree has more than %zu nodes", max_nodes);
        stop_with(c, n, SG_RULE_NODES, msg);
        return 1;
    }
    return 0;
}

/* A string without interpolations holds no names: its pieces (start,
 * content, end) are counted, not visited, which saves a third of the
 * cursor steps on string-heavy code. */
static int is_plain_string(const struct py_ctx *c, const struct py_frame *F)
{
    if (F->kind != PK_STRING)
        return 0;
    /* the prefix, within the node: a string can end the source (`` ` ` ``) */
    uint32_t b = ts_node_start_byte(F->node), e = ts_node_end_byte(F->node);
    for (uint32_t i = b; i < e && i < b + 3 && c->src[i] != '\'' && c->src[i] != '"'; i++)
        if (c->src[i] == 'f' || c->src[i] == 'F')
            return 0;
    return 1;
}

/* tree-sitter-python still reads Python 2's `x` (repr) as a string;
 * CPython 3 rejects it. */
static int is_backtick_string(const struct py_ctx *c, const struct py_frame *F)
{
    if (F->kind != PK_STRING)
        return 0;
    uint32_t b = ts_node_start_byte(F->node), e = ts_node_end_byte(F->node);
    for (uint32_t i = b; i < e && i < b + 4 && c->src[i] != '\'' && c->src[i] != '"'; i++)
        if (c->src[i] == '`')
            return 1; /* after a prefix too: the scanner takes r`x` */
    return 0;
}

/* Count `extra` skipped nodes at `depth`; 1 when a limit is passed. */
static int over_limits_by(struct py_ctx *c, TSNode n, size_t extra, size_t depth, size_t max_depth,
                          size_t max_nodes)
{
    if (!extra)
        return 0;
    c->nodes += extra - 1;
    return over_limits(c, n, depth, max_depth, max_nodes);
}

static size_t limit_or(size_t v, size_t hard)
{
    return v && v < hard ? v : hard;
}

int py_walk(struct py_ctx *c, TSNode root)
{
    size_t max_depth = limit_or(c->lp->max_depth, PY_DEPTH_HARD_MAX);
    size_t max_nodes = limit_or(c->lp->max_nodes, PY_NODES_HARD_MAX);
    struct py_frame *fr = malloc((max_depth + 1) * sizeof(*fr));
    if (!fr || py_scope_new(c, -1, PS_MODULE) != PY_MODULE_SCOPE) {
        free(fr);
        return -ENOMEM;
    }
    fr[0] = (struct py_frame){.node = root,
                              .scope = PY_MODULE_SCOPE,
                              .bind = PY_MODULE_SCOPE,
                              .inner = -1,
                              .outer = PY_MODULE_SCOPE,
                              .kind = (uint8_t)py_kind(c, root),
                              .mode = CM_LOAD};
    TSTreeCursor cur = ts_tree_cursor_new(root);
    size_t depth = 0;
    int leaf = 0;
    if (!over_limits(c, root, 1, max_depth, max_nodes)) {
        for (;;) {
            if (!leaf && ts_tree_cursor_goto_first_child(&cur)) {
                depth++;
            } else {
                while (depth > 0 && !ts_tree_cursor_goto_next_sibling(&cur)) {
                    ts_tree_cursor_goto_parent(&cur);
                    depth--;
                }
                if (depth == 0)
                    break;
            }
            TSNode n = ts_tree_cursor_current_node(&cur);
            if (over_limits(c, n, depth + 1, max_depth, max_nodes))
                break;
            enter(c, &fr[depth - 1], &fr[depth], &cur);
            if (c->stopped || c->err)
                break;
            if (is_backtick_string(c, &fr[depth])) {
                stop_with(c, n, SG_RULE_SYNTAX_ERROR, "invalid syntax: Python 2 backtick repr");
                break;
            }
            leaf = is_plain_string(c, &fr[depth]);
            if (leaf &&
                over_limits_by(c, n, ts_node_child_count(n), depth + 2, max_depth, max_nodes))
                break;
        }
    }
    ts_tree_cursor_delete(&cur);
    free(fr);
    return c->err;
}
