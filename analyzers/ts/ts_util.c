/* ts_util.c - per-thread parsers, first error node, symbol maps. */
#include "ts_util.h"

#include "rules.h"
#include "sg_time.h"
#include "ts_alloc.h"
#include "ts_bound.h"
#include "ts_node.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Languages a thread may hold a parser for (Python, JavaScript). */
#define TS_PARSER_SLOTS 4

struct ts_parser_cache {
    const TSLanguage *lang[TS_PARSER_SLOTS];
    TSParser *parser[TS_PARSER_SLOTS];
};

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;

static void cache_free(void *p)
{
    struct ts_parser_cache *c = p;
    for (size_t i = 0; c && i < TS_PARSER_SLOTS; i++)
        if (c->parser[i])
            ts_parser_delete(c->parser[i]);
    free(c);
}

static void cache_key_init(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_free) == 0;
}

/* This thread's parser for lang, or NULL when out of memory. Without a
 * thread key (never seen in practice) a parser is made per call by the
 * caller instead. */
static TSParser *parser_for(const TSLanguage *lang, int *ret_owned)
{
    *ret_owned = 0;
    pthread_once(&cache_once, cache_key_init);
    struct ts_parser_cache *c = cache_key_ok ? pthread_getspecific(cache_key) : NULL;
    if (cache_key_ok && !c) {
        c = calloc(1, sizeof(*c));
        if (c && pthread_setspecific(cache_key, c) != 0) {
            free(c);
            c = NULL;
        }
    }
    for (size_t i = 0; c && i < TS_PARSER_SLOTS; i++) {
        if (c->lang[i] == lang)
            return c->parser[i];
        if (!c->lang[i]) {
            TSParser *p = ts_parser_new();
            if (!p || !ts_parser_set_language(p, lang)) {
                if (p)
                    ts_parser_delete(p);
                return NULL;
            }
            ts_parser_set_timeout_micros(p, SG_TS_PARSE_TIMEOUT_US);
            c->lang[i] = lang;
            c->parser[i] = p;
            return p;
        }
    }
    TSParser *p = ts_parser_new();
    if (p && !ts_parser_set_language(p, lang)) {
        ts_parser_delete(p);
        return NULL;
    }
    if (p)
        ts_parser_set_timeout_micros(p, SG_TS_PARSE_TIMEOUT_US);
    *ret_owned = 1;
    return p;
}

/* The stack guard (see SG_TS_STACK_MAX): the parse log says when a token
 * is pushed ("shift", "shift_extra") and how many subtrees a reduction
 * pops ("reduce sym:X, child_count:N"); "process version:V,
 * version_count:C, ..., row:R, col:K" says whether one stack version is
 * live and where it is.
 *
 * Formatting the log makes a parse 2-3 times slower, so the logger is
 * switched off for good at the first point X (one version live) where the
 * rest cannot build a node with more than SG_TS_CHILDREN_MAX children:
 * every later stack entry holds one of the <= depth entries live at X or
 * one of the <= 2 * rest later leaves (ts_bound.h), so later nodes have at
 * most depth + 2 * rest children, and the root at most that plus the
 * children of one entry made before X (<= the largest depth seen). */
struct stack_guard {
    TSParser *parser;
    const uint64_t *suffix; /* token bound from each line block to the end */
    size_t blocks;
    unsigned long depth, max_depth;
    unsigned versions;
    size_t cancel; /* the parser's cancellation flag */
    int tripped;
};

static unsigned long log_number(const char *msg, const char *key)
{
    const char *at = strstr(msg, key);
    return at ? strtoul(at + strlen(key), NULL, 10) : 0;
}

/* With one version live at line row, can the rest of the parse still
 * build a node past SG_TS_CHILDREN_MAX children? If not, stop logging. */
static void stack_guard_checkpoint(struct stack_guard *g, unsigned long row)
{
    size_t b = row / SG_TS_BOUND_BLOCK_LINES;
    uint64_t rest = g->suffix[b < g->blocks ? b : g->blocks - 1];
    if (g->depth + g->max_depth + 2 * rest + SG_TS_BOUND_SLACK <= SG_TS_CHILDREN_MAX)
        ts_parser_set_logger(g->parser, (TSLogger){0});
}

static void stack_guard_log(void *payload, TSLogType type, const char *msg)
{
    struct stack_guard *g = payload;
    if (type != TSLogTypeParse)
        return;
    if (strncmp(msg, "process version:", 16) == 0) {
        g->versions = (unsigned)log_number(msg, "version_count:");
        if (g->versions == 1)
            stack_guard_checkpoint(g, log_number(msg, "row:"));
    } else if (strncmp(msg, "shift", 5) == 0) {
        if (++g->depth > g->max_depth)
            g->max_depth = g->depth;
        if (g->depth > SG_TS_STACK_MAX) {
            g->tripped = 1;
            g->cancel = 1;
        }
    } else if (g->versions == 1 && strncmp(msg, "reduce sym:", 11) == 0) {
        /* pops N, pushes 1; with several versions live the pops may belong
         * to another version, so only pushes count (an overestimate) */
        unsigned long n = log_number(msg, "child_count:");
        g->depth = n == 0 ? g->depth + 1 : g->depth - (n - 1 < g->depth ? n - 1 : g->depth);
        g->max_depth = g->depth > g->max_depth ? g->depth : g->max_depth;
    }
}

/* One parse, run under sg_ts_alloc_run(): it may be abandoned at any
 * allocation, so everything it needs that is not tree-sitter's (the guard,
 * its suffix bounds) is made before and freed after. */
struct parse_job {
    TSParser *parser;
    const char *src;
    uint32_t len;
    struct stack_guard *guard; /* NULL: plain parse */
    TSTree *tree;
};

static void parse_job_run(void *arg)
{
    struct parse_job *j = arg;
    if (j->guard) {
        ts_parser_set_logger(j->parser, (TSLogger){.payload = j->guard, .log = stack_guard_log});
        ts_parser_set_cancellation_flag(j->parser, &j->guard->cancel);
    }
    j->tree = ts_parser_parse_string(j->parser, NULL, j->src, j->len);
    if (j->guard) {
        ts_parser_set_cancellation_flag(j->parser, NULL);
        ts_parser_set_logger(j->parser, (TSLogger){0});
    }
}

/* After an abandoned parse every tree-sitter object of this thread is gone
 * (ts_alloc.h): forget the cached parsers, never delete them. */
static void cache_forget(void)
{
    struct ts_parser_cache *c = cache_key_ok ? pthread_getspecific(cache_key) : NULL;
    if (c)
        memset(c, 0, sizeof(*c));
}

void sg_ts_parsers_release(void)
{
    pthread_once(&cache_once, cache_key_init);
    struct ts_parser_cache *c = cache_key_ok ? pthread_getspecific(cache_key) : NULL;
    for (size_t i = 0; c && i < TS_PARSER_SLOTS; i++)
        if (c->parser[i])
            ts_parser_delete(c->parser[i]);
    if (c)
        memset(c, 0, sizeof(*c));
}

/* Returns 0 (then *ret_tree may still be NULL: tree-sitter's timeout or
 * the guard's cancellation), -ENOMEM before any parse, or the code of
 * sg_ts_alloc_run() with *ret_abandoned set. */
static int parse_budgeted(TSParser *p, const char *src, uint32_t len, int *ret_tripped,
                          int *ret_abandoned, TSTree **ret_tree)
{
    struct stack_guard g = {.parser = p, .versions = 1};
    uint64_t *suffix = NULL;
    struct parse_job job = {.parser = p, .src = src, .len = len};
    if (sg_ts_bound_needs_guard(src, len)) {
        if (sg_ts_bound_suffixes(src, len, &suffix, &g.blocks) < 0)
            return -ENOMEM;
        g.suffix = suffix;
        job.guard = &g;
    }
    int r = sg_ts_alloc_run(SG_TS_MEMORY_BASE + (size_t)len * SG_TS_MEMORY_PER_BYTE,
                            sg_time_mono_us() + SG_TS_PARSE_TIMEOUT_US, parse_job_run, &job);
    free(suffix);
    *ret_tripped = g.tripped;
    *ret_abandoned = r < 0;
    *ret_tree = r == 0 ? job.tree : NULL;
    return r;
}

int sg_ts_parse(const TSLanguage *lang, const char *src, size_t len, TSTree **ret_tree)
{
    *ret_tree = NULL;
    if (len > UINT32_MAX)
        return -E2BIG;
    int owned = 0, tripped = 0;
    TSParser *p = parser_for(lang, &owned);
    if (!p)
        return -ENOMEM;
    TSTree *t = NULL;
    int abandoned = 0;
    int r = parse_budgeted(p, src, (uint32_t)len, &tripped, &abandoned, &t);
    if (abandoned) { /* p, its tree and every other parser of this thread are gone */
        cache_forget();
        return r;
    }
    if (r == 0 && !t)
        ts_parser_reset(p); /* timed out or cancelled: the next parse must start afresh */
    if (owned)
        ts_parser_delete(p);
    if (r < 0)
        return r;
    if (!t)
        return tripped ? -ELOOP : -ETIMEDOUT;
    *ret_tree = t;
    return 0;
}

/* tree-sitter's ERROR symbol (ts_builtin_sym_error, not in api.h). */
#define TS_SYM_ERROR ((TSSymbol)-1)

TSNode sg_ts_first_error(TSNode root)
{
    TSTreeCursor c = ts_tree_cursor_new(root);
    TSNode n = root;
    for (;;) {
        if (sg_ts_symbol(n) == TS_SYM_ERROR || ts_node_is_missing(n))
            break;
        if (!ts_tree_cursor_goto_first_child(&c))
            break; /* has_error without an erroneous child: n itself */
        for (;;) {
            TSNode k = ts_tree_cursor_current_node(&c);
            if (ts_node_has_error(k)) {
                n = k;
                break;
            }
            if (!ts_tree_cursor_goto_next_sibling(&c)) {
                ts_tree_cursor_delete(&c);
                return n;
            }
        }
    }
    ts_tree_cursor_delete(&c);
    return n;
}

int sg_ts_kind_map(const TSLanguage *lang, const char *const *names, size_t n_names, uint8_t *map,
                   size_t map_len)
{
    uint32_t count = ts_language_symbol_count(lang);
    if (count > map_len || n_names > UINT8_MAX - 1)
        return -E2BIG;
    memset(map, 0, map_len);
    for (uint32_t s = 0; s < count; s++) {
        if (ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular)
            continue;
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        for (size_t k = 0; name && k < n_names; k++) {
            if (strcmp(name, names[k]) == 0) {
                map[s] = (uint8_t)(k + 1);
                break;
            }
        }
    }
    return 0;
}

int sg_ts_vreport(struct sg_violations *vs, const char *src, size_t len, TSNode n, const char *rule,
                  const char *fmt, va_list ap)
{
    char msg[SG_VIOLATION_MSG_MAX];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    return sg_violations_add_at(vs, rule, src, len, ts_node_start_byte(n), ts_node_end_byte(n),
                                "%s", msg);
}

int sg_ts_report(struct sg_violations *vs, const char *src, size_t len, TSNode n, const char *rule,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = sg_ts_vreport(vs, src, len, n, rule, fmt, ap);
    va_end(ap);
    return r;
}

void sg_ts_sort_violations(struct sg_violations *vs, size_t from)
{
    for (size_t i = from + 1; i < vs->count; i++) {
        struct sg_violation v = vs->items[i];
        size_t j = i;
        while (j > from &&
               (vs->items[j - 1].line > v.line ||
                (vs->items[j - 1].line == v.line && vs->items[j - 1].column > v.column))) {
            vs->items[j] = vs->items[j - 1];
            j--;
        }
        vs->items[j] = v;
    }
}

int sg_ts_parse_checked(const TSLanguage *lang, const char *src, size_t len,
                        struct sg_violations *vs, uint64_t *ret_parse_us, TSTree **ret_tree)
{
    uint64_t t0 = sg_time_mono_us();
    int r = sg_ts_parse(lang, src, len, ret_tree);
    *ret_parse_us = sg_time_mono_us() - t0;
    if (r == -ETIMEDOUT) {
        r = sg_violations_add_at(vs, SG_RULE_SYNTAX_ERROR, src, len, 0, 0,
                                 "source could not be parsed within %u ms",
                                 SG_TS_PARSE_TIMEOUT_US / 1000);
        return r < 0 ? r : 1;
    }
    if (r == -ENOSPC) {
        r = sg_violations_add_at(vs, SG_RULE_SYNTAX_ERROR, src, len, 0, 0,
                                 "source could not be parsed within %zu MiB of memory",
                                 (SG_TS_MEMORY_BASE + len * SG_TS_MEMORY_PER_BYTE) >> 20);
        return r < 0 ? r : 1;
    }
    if (r == -ELOOP) {
        r = sg_violations_add_at(vs, SG_RULE_DEPTH, src, len, 0, 0,
                                 "source nests too deeply to be parsed safely (more than %u "
                                 "open constructs)",
                                 SG_TS_STACK_MAX);
        return r < 0 ? r : 1;
    }
    if (r < 0)
        return r;
    TSNode root = ts_tree_root_node(*ret_tree);
    if (!ts_node_has_error(root))
        return 0;
    TSNode e = sg_ts_first_error(root);
    if (ts_node_is_missing(e))
        r = sg_ts_report(vs, src, len, e, SG_RULE_SYNTAX_ERROR, "invalid syntax: missing '%s'",
                         sg_ts_type(e));
    else
        r = sg_ts_report(vs, src, len, e, SG_RULE_SYNTAX_ERROR, "invalid syntax");
    ts_tree_delete(*ret_tree);
    *ret_tree = NULL;
    return r < 0 ? r : 1;
}
