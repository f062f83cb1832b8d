/* python.c - the Python analyzer: parse, fail closed on syntax errors, walk
 * (python_walk.c), check (python_eval.c). See python_ctx.h for the design
 * and policies/README.md ("Python details") for what each rule covers. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "python.h"
#include "python_ctx.h"
#include "python_eval.h"
#include "python_scope.h"
#include "python_walk.h"
#include "rules.h"
#include "sg_time.h"
#include "ts_util.h"

const TSLanguage *tree_sitter_python(void);

static struct py_lang py_lang;
static pthread_once_t py_lang_once = PTHREAD_ONCE_INIT;
static int py_lang_ok;

static const char *const py_kind_names[] = {
#define PY_KIND_NAME(id, name) name,
    PY_KINDS(PY_KIND_NAME)
#undef PY_KIND_NAME
};

static TSFieldId field(const char *name, int *ok)
{
    TSFieldId id = ts_language_field_id_for_name(py_lang.ts, name, (uint32_t)strlen(name));
    *ok &= id != 0;
    return id;
}

static void py_lang_init(void)
{
    int ok = 1;
    py_lang.ts = tree_sitter_python();
    if (sg_ts_kind_map(py_lang.ts, py_kind_names, sizeof(py_kind_names) / sizeof(*py_kind_names),
                       py_lang.kind_of, sizeof(py_lang.kind_of)) < 0)
        return;
    struct py_fields *f = &py_lang.f;
    f->name = field("name", &ok);
    f->alias = field("alias", &ok);
    f->module_name = field("module_name", &ok);
    f->object = field("object", &ok);
    f->attribute = field("attribute", &ok);
    f->function = field("function", &ok);
    f->arguments = field("arguments", &ok);
    f->left = field("left", &ok);
    f->right = field("right", &ok);
    f->value = field("value", &ok);
    f->subscript = field("subscript", &ok);
    f->body = field("body", &ok);
    f->parameters = field("parameters", &ok);
    f->return_type = field("return_type", &ok);
    f->type = field("type", &ok);
    f->superclasses = field("superclasses", &ok);
    f->condition = field("condition", &ok);
    f->consequence = field("consequence", &ok);
    f->alternative = field("alternative", &ok);
    f->definition = field("definition", &ok);
    f->key = field("key", &ok);
    f->type_parameters = field("type_parameters", &ok);
    f->operator= field("operator", &ok);
    f->argument = field("argument", &ok);
    f->expression = field("expression", &ok);
    py_lang_ok = ok;
}

static void ctx_free(struct py_ctx *c)
{
    free(c->events);
    py_scope_free(c);
    sg_arena_free(&c->arena);
}

/* Walk and check a parsed, error-free tree. */
static int analyze_tree(const struct sg_lang_policy *lp, const char *src, size_t len, TSNode root,
                        struct sg_violations *out, struct sg_analysis_stats *stats)
{
    struct py_ctx c = {.L = &py_lang,
                       .lp = lp,
                       .src = src,
                       .len = len,
                       .out = out,
                       .imports = stats ? &stats->imports : NULL};
    size_t first = out->count;
    sg_arena_init(&c.arena, PY_ARENA_CAP);
    int r = py_walk(&c, root);
    if (r == 0 && !c.stopped)
        r = py_eval(&c);
    if (r < 0 && c.arena.full) {
        /* hostile input that needs more bookkeeping than any real program */
        r = sg_violations_add_at(out, SG_RULE_NODES, src, len, 0, 0,
                                 "analysis needs more than %u MiB of names", PY_ARENA_CAP >> 20);
    }
    sg_ts_sort_violations(out, first);
    if (stats) {
        stats->nodes = c.nodes;
        stats->max_depth = c.max_depth;
    }
    ctx_free(&c);
    return r;
}

int sg_python_check(const struct sg_lang_policy *lp, const char *src, size_t len,
                    struct sg_violations *out, struct sg_analysis_stats *stats,
                    struct sg_error *err)
{
    pthread_once(&py_lang_once, py_lang_init);
    if (!py_lang_ok)
        return sg_error_set(err, -ENOSYS, "python grammar: unexpected node or field names");
    TSTree *tree = NULL;
    uint64_t t0 = sg_time_mono_us(), parse_us = 0;
    /* fail closed: with a syntax error nothing else is evaluated */
    int r = sg_ts_parse_checked(py_lang.ts, src, len, out, &parse_us, &tree);
    if (stats)
        stats->parse_us = parse_us;
    if (r == 0) {
        r = analyze_tree(lp, src, len, ts_tree_root_node(tree), out, stats);
        ts_tree_delete(tree);
    }
    if (stats)
        stats->eval_us = sg_time_mono_us() - t0 - parse_us;
    return r < 0 ? sg_error_set(err, r, "python analysis: %s",
                                r == -E2BIG ? "source too large" : "out of memory")
                 : 0;
}
