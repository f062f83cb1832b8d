/* python_ctx.h - state shared by the Python analyzer's modules.
 *
 * Internal to python*.c. The analysis runs in two phases over one
 * tree-sitter tree:
 *   1. python_walk.c walks the tree once (iteratively, with an explicit
 *      frame stack), enforces the node/depth limits, builds the scopes and
 *      the bindings (imports, assignments, definitions, parameters), and
 *      records the events to check (name references, attribute accesses,
 *      calls, subscripts, imports).
 *   2. python_eval.c checks every event against the policy, resolving names
 *      through the bindings (python_resolve.c) and folding constant strings
 *      where they decide a dynamic name (python_fold.c).
 * Bindings are complete before any check, so a use before its import in the
 * text (a function body above the import) still resolves.
 */
#ifndef SG_PYTHON_CTX_H
#define SG_PYTHON_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "lang.h"
#include "arena.h"
#include "policy.h"
#include "violation.h"
#include "ts_node.h"

/* Bytes of one resolved dotted name ("os.path.join") or folded string. */
#define PY_NAME_MAX 512
/* Distinct values one name may resolve to; more is reported (fail closed). */
#define PY_CANDS_MAX 8
/* Nesting of the recursive resolution and folding helpers. */
#define PY_RESOLVE_DEPTH 24
/* Resolution steps for one reference, and for the whole analysis. */
#define PY_RESOLVE_STEPS 512
#define PY_RESOLVE_STEPS_TOTAL 4000000u
/* Bytes of arena per analysis: names and resolved paths. */
#define PY_ARENA_CAP (64u * 1024u * 1024u)
/* Depth and node ceilings when the policy gives none (0). */
#define PY_DEPTH_HARD_MAX 4096
/* Tree cursors kept for child iteration (each costs a malloc when new). */
#define PY_CURSORS 64
#define PY_NODES_HARD_MAX 10000000
/* The job's methods that read private names through self, remembered by
 * name; past this every method name counts as one (fail closed). */
#define PY_SENSITIVE_MAX 256
/* The job's classes python_own_infer.c places, and the base edges between
 * them; past either every class loses its exemption (fail closed). */
#define PY_CLASSES_MAX 256
#define PY_CLASS_EDGES_MAX 512
/* Nodes or statements one ownership scan visits before it answers "not own". */
#define PY_OWN_SCAN_NODES 20000
/* Events, bindings and nodes all ownership scans of one analysis visit;
 * past it every further question is answered "not own" (fail closed). */
#define PY_OWN_SCAN_TOTAL 20000000u
/* Field names whose ownership is remembered; past it, not own. */
#define PY_FIELDS_CACHED 64
/* Nesting of the ownership inference (alias -> field -> store -> ...). */
#define PY_OWN_DEPTH 8
/* Ownership assumptions open at once (aliases and functions being inferred). */
#define PY_OWN_KEYS_MAX (2 * PY_OWN_DEPTH + 4)

/* Node kinds the analyzer distinguishes (X-macro: enum + grammar names). */
/* One table, laid out by hand (the formatter is not stable on it). */
// clang-format off
#define PY_KINDS(X)                                                                        \
    X(MODULE, "module") X(IDENTIFIER, "identifier") X(ATTRIBUTE, "attribute")              \
    X(CALL, "call") X(SUBSCRIPT, "subscript") X(SLICE, "slice") X(STRING, "string")        \
    X(CONCAT_STRING, "concatenated_string") X(STRING_CONTENT, "string_content")            \
    X(STRING_START, "string_start") X(STRING_END, "string_end") X(INTERPOLATION, "interpolation")                      \
    X(ESCAPE_INTERP, "escape_interpolation") X(INTEGER, "integer")                         \
    X(BINARY_OP, "binary_operator") X(UNARY_OP, "unary_operator")                          \
    X(PAREN, "parenthesized_expression") X(LIST, "list") X(TUPLE, "tuple")                 \
    X(ARGUMENT_LIST, "argument_list") X(KEYWORD_ARGUMENT, "keyword_argument")              \
    X(IMPORT, "import_statement") X(IMPORT_FROM, "import_from_statement")                  \
    X(FUTURE_IMPORT, "future_import_statement") X(ALIASED_IMPORT, "aliased_import")        \
    X(DOTTED_NAME, "dotted_name") X(RELATIVE_IMPORT, "relative_import")                    \
    X(WILDCARD_IMPORT, "wildcard_import") X(FUNCTION_DEF, "function_definition")           \
    X(CLASS_DEF, "class_definition") X(LAMBDA, "lambda") X(PARAMETERS, "parameters")       \
    X(LAMBDA_PARAMETERS, "lambda_parameters") X(DEFAULT_PARAM, "default_parameter")        \
    X(TYPED_DEFAULT_PARAM, "typed_default_parameter") X(TYPED_PARAM, "typed_parameter")    \
    X(LIST_SPLAT_PATTERN, "list_splat_pattern")                                            \
    X(DICT_SPLAT_PATTERN, "dictionary_splat_pattern") X(ASSIGNMENT, "assignment")          \
    X(AUG_ASSIGNMENT, "augmented_assignment") X(PATTERN_LIST, "pattern_list")              \
    X(TUPLE_PATTERN, "tuple_pattern") X(LIST_PATTERN, "list_pattern")                      \
    X(EXPRESSION_LIST, "expression_list") X(LIST_SPLAT, "list_splat")                      \
    X(DICT_SPLAT, "dictionary_splat") X(FOR_STATEMENT, "for_statement")                    \
    X(FOR_IN_CLAUSE, "for_in_clause") X(LIST_COMP, "list_comprehension")                   \
    X(SET_COMP, "set_comprehension") X(DICT_COMP, "dictionary_comprehension")              \
    X(GENERATOR, "generator_expression") X(NAMED_EXPR, "named_expression")                 \
    X(AS_PATTERN, "as_pattern") X(AS_PATTERN_TARGET, "as_pattern_target")                  \
    X(GLOBAL, "global_statement") X(NONLOCAL, "nonlocal_statement")                        \
    X(DELETE, "delete_statement") X(CASE_CLAUSE, "case_clause")                            \
    X(CASE_PATTERN, "case_pattern") X(CLASS_PATTERN, "class_pattern")                      \
    X(KEYWORD_PATTERN, "keyword_pattern") X(SPLAT_PATTERN, "splat_pattern")                \
    X(DICT_PATTERN, "dict_pattern") X(UNION_PATTERN, "union_pattern")                      \
    X(CONDITIONAL, "conditional_expression") X(BOOLEAN_OP, "boolean_operator")             \
    X(EXEC_STMT, "exec_statement") X(PRINT_STMT, "print_statement")                        \
    X(DECORATED_DEF, "decorated_definition") X(EXPRESSION_STMT, "expression_statement")    \
    X(EXCEPT_CLAUSE, "except_clause") X(EXCEPT_GROUP_CLAUSE, "except_group_clause")        \
    X(WITH_ITEM, "with_item") X(MEMBER_TYPE, "member_type")
// clang-format on

enum py_kind {
    PK_NONE = 0,
#define PY_KIND_ENUM(id, name) PK_##id,
    PY_KINDS(PY_KIND_ENUM)
#undef PY_KIND_ENUM
        PK_COUNT
};

/* Grammar field ids, looked up once. */
struct py_fields {
    TSFieldId name, alias, module_name, object, attribute, function, arguments, left, right, value,
        subscript, body, parameters, return_type, type, superclasses, definition, key,
        type_parameters, operator, argument, expression, condition, consequence, alternative;
};

/* The grammar as the analyzer sees it: read-only after init, shared. */
struct py_lang {
    const TSLanguage *ts;
    uint8_t kind_of[1024]; /* symbol -> enum py_kind */
    struct py_fields f;
};

enum py_scope_kind { PS_MODULE, PS_FUNCTION, PS_CLASS, PS_COMPREHENSION };

struct py_scope {
    int32_t parent;
    uint8_t kind;
};

enum py_bind_kind {
    PB_IMPORT,  /* import_val holds the module path it names */
    PB_ALIAS,   /* value holds the expression assigned */
    PB_OPAQUE,  /* def, class, parameter, loop target, ...: a local value */
    PB_DEL,     /* `del name`: a module binding is never definite */
    PB_GLOBAL,  /* `global name` declared in this scope */
    PB_NONLOCAL /* `nonlocal name` declared in this scope */
};

struct py_binding {
    const char *name;       /* arena, NFKC-normalised */
    const char *import_val; /* PB_IMPORT: dotted module path (arena) */
    TSNode value;           /* PB_ALIAS: the assigned expression */
    uint32_t stmt_end;      /* definite module bindings: end of their statement */
    int32_t scope;          /* where the name is bound */
    int32_t eval_scope;     /* where `value` is evaluated */
    int32_t next;           /* next binding of the same (scope, name), -1 */
    uint8_t kind;
    uint8_t definite; /* module scope: an unconditional top-level statement */
    uint8_t partial;  /* PB_IMPORT from `import a.b`: binds `a`, imports a.b */
    uint8_t busy;     /* being resolved (cycle guard) */
    uint8_t own;      /* the job's own object (enum py_own) */
    int32_t inner;    /* PY_OWN_CLASS: the scope of the class body */
    TSNode def;       /* PY_OWN_CLASS: the class_definition node */
};

/* What a job-defined binding is (py_binding.own). */
enum py_own {
    PY_OWN_NONE = 0,
    PY_OWN_VALUE, /* a def name, a method's self/cls */
    PY_OWN_CLASS, /* a class name */
    PY_OWN_METHOD /* a method whose first parameter Python binds to the instance */
};

enum py_event_kind {
    PE_NAME,      /* identifier in load context */
    PE_ATTR,      /* attribute node */
    PE_CALL,      /* call node */
    PE_SUBSCRIPT, /* subscript node */
    PE_IMPORT,    /* import / from-import statement */
    PE_ATTRNAME,  /* identifier used as an attribute name (match keyword pattern) */
    PE_CHAIN      /* dotted_name read as a value (match value/class pattern) */
};

struct py_event {
    TSNode node;
    int32_t scope;
    uint8_t kind;
    uint8_t callee; /* the node is the function of a call */
};

/* What a name or expression may evaluate to. */
enum py_cand_kind {
    PC_OPAQUE,    /* unknown object; s holds the attribute path taken from it */
    PC_BUILTIN,   /* s = "builtins.<name>..." reached through an unbound name */
    PC_IMPORT,    /* s = module path (+ attributes) reached through an import */
    PC_NAMESPACE, /* s = "globals"/"locals": a dict of variables */
    PC_ATTRS      /* the __dict__ of the object s (vars(x), x.__dict__); aux = its kind */
};

struct py_cand {
    const char *s; /* arena; NUL-terminated */
    uint32_t len;
    uint8_t kind;
    uint8_t aux; /* PC_IMPORT: rooted at a partial `import a.b`; PC_ATTRS: kind of s */
};

struct py_cands {
    struct py_cand v[PY_CANDS_MAX];
    uint32_t n;
    uint8_t overflow;
};

struct py_ctx {
    const struct py_lang *L;
    const struct sg_lang_policy *lp;
    const char *src;
    size_t len;
    struct sg_violations *out;
    struct sg_imports *imports; /* the modules seen, for the pool choice (may be NULL) */
    struct sg_arena arena;
    struct py_scope *scopes;
    size_t n_scopes, cap_scopes;
    struct py_binding *binds;
    size_t n_binds, cap_binds;
    int32_t *htab; /* (scope, name) -> first binding; -1 empty */
    size_t hcap;
    struct py_event *events;
    size_t n_events, cap_events;
    TSTreeCursor cursors[PY_CURSORS];
    uint32_t cursors_made, cursors_used;
    size_t nodes, max_depth;
    size_t steps_total;
    uint32_t steps; /* of the current top-level resolution */
    int err;        /* first internal failure (-ENOMEM) */
    struct {
        const char *name; /* arena */
        uint32_t req;
    } sens[PY_SENSITIVE_MAX]; /* the job's sensitive methods (python_own.c) */
    size_t n_sens;
    uint8_t sens_ready, sens_all;
    uint8_t flow_ready, flow; /* the job's classes may be values (python_own_flow.c) */
    struct {
        TSNode node[PY_CLASSES_MAX]; /* class_definition */
        int32_t scope[PY_CLASSES_MAX];
        uint8_t tainted[PY_CLASSES_MAX];  /* a package's class may be in its MRO or below */
        uint8_t mtainted[PY_CLASSES_MAX]; /* some base's methods may answer for its own */
        uint16_t edge[PY_CLASS_EDGES_MAX][2];
        size_t n, n_edges;
        uint8_t ready, all_tainted;
        uint8_t stdlib_bases; /* some class has a SAFE_BASES base (python_own_infer.c) */
    } cls;                    /* python_own_infer.c */
    uint8_t new_state;        /* instances of the job's classes: 0 unknown, 1 own, 2 not, 3 busy */
    uint8_t fields_state;     /* field inference: 0 unknown, 1 on, 2 off (a store it cannot see) */
    struct {
        const char *name; /* arena */
        uint8_t state;    /* 1 own, 2 not, 3 being computed */
        uint8_t mode;     /* own_mode it was computed in */
    } fields[PY_FIELDS_CACHED];
    size_t n_fields;
    uint8_t own_mode; /* what python_own infers: 0 the job's own object, 1 its instance */
    /* what is being inferred (a binding, a def node's id) in which mode:
     * assumed own while it is (python_own.c, py_own_assume) */
    const void *own_keys[PY_OWN_KEYS_MAX];
    uint8_t own_key_mode[PY_OWN_KEYS_MAX];
    unsigned n_own_keys;
    unsigned own_open;  /* ownership assumptions open (fields and aliases being inferred) */
    size_t own_scanned; /* what the ownership scans visited (PY_OWN_SCAN_TOTAL) */
    uint8_t stopped;    /* a fatal violation ended the analysis */
    uint8_t complex_reported;
};

/* Kind of a node (PK_NONE for kinds the analyzer ignores). */
static inline enum py_kind py_kind(const struct py_ctx *c, TSNode n)
{
    TSSymbol s = sg_ts_symbol(n);
    return s < sizeof(c->L->kind_of) ? (enum py_kind)c->L->kind_of[s] : PK_NONE;
}

/* Record an internal failure (first one wins). */
static inline void py_fail(struct py_ctx *c, int err)
{
    if (!c->err)
        c->err = err;
}

#endif
