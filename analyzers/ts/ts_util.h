/* ts_util.h - tree-sitter helpers shared by the language analyzers.
 *
 * Shared by python*.c and (if it wants them) javascript.c: a per-thread
 * parser cache so no analysis pays for ts_parser_new(), the search for the
 * first ERROR/MISSING node (fail closed), and a symbol -> small-integer map
 * so walkers switch on their own enum instead of comparing strings.
 * Note for the JavaScript analyzer: extend this module rather than copying
 * it; keep it language-neutral.
 */
#ifndef SG_TS_UTIL_H
#define SG_TS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "violation.h"

/* Wall-clock bound on one parse; tree-sitter's error recovery is the only
 * super-linear part of an analysis. */
#define SG_TS_PARSE_TIMEOUT_US 2000000u

/* tree-sitter 0.20.7 keeps a node's child count in 16 bits, so a node
 * built from 65536 or more stack entries corrupts the heap when it is freed
 * (64 KiB of `[` or `x:` do it; see ts_bound.h). A source whose token bound
 * (ts_bound.h) rules that out is parsed as is. Any other source is parsed
 * with a logger that keeps an upper bound of the stack depth (exact while
 * one stack version is live, counting only pushes while several are) and
 * cancels the parse past SG_TS_STACK_MAX; the logger is dropped as soon as
 * the rest of the source can no longer build a node that large (ts_util.c).
 * Under half of 65535: the root takes the stack's entries plus the children
 * of its last one, each at most the limit. The bound drifts up by 20-30 per
 * KiB of ordinary code, so only sources of about a MiB (or nesting no policy
 * allows) reach it. */
#define SG_TS_STACK_MAX 32000u

/* Parse src[0..len) with lang on this thread's cached parser (one per
 * language and thread, created on first use and deleted at thread exit),
 * under the memory and time budget of ts_alloc.h. Returns 0 and *ret_tree
 * (caller frees with ts_tree_delete()), -ENOMEM, -ETIMEDOUT when the parse
 * ran past SG_TS_PARSE_TIMEOUT_US, -ENOSPC when it needed more memory than
 * its budget, or -ELOOP when the parse stack grew past SG_TS_STACK_MAX.
 * After -ENOSPC or -ETIMEDOUT every tree-sitter object of the calling
 * thread is gone (ts_alloc.h): call it with no tree of this thread alive. */
int sg_ts_parse(const TSLanguage *lang, const char *src, size_t len, TSTree **ret_tree);

/* Delete the calling thread's cached parsers (and with them the subtree
 * and stack-node pools tree-sitter keeps between parses); the next
 * sg_ts_parse() on this thread makes new ones. For a caller that needs an
 * analysis to leave the heap as it found it: the fuzz targets, whose leak
 * check counts mallocs against frees per input. Call it with no tree of
 * this thread alive. */
void sg_ts_parsers_release(void);

/* sg_ts_parse() plus the fail-closed rule: a parse that times out or a
 * tree with ERROR/MISSING nodes adds one SG_RULE_SYNTAX_ERROR violation (at
 * the first error node; a parse over its memory budget one at 1:1), a
 * parse stopped by the stack guard one
 * SG_RULE_DEPTH violation, and returns 1 with no tree. Returns 0 and an
 * error-free *ret_tree (caller frees with ts_tree_delete()), or a negative
 * code (-ENOMEM, -E2BIG). *ret_parse_us gets the parse time. */
int sg_ts_parse_checked(const TSLanguage *lang, const char *src, size_t len,
                        struct sg_violations *vs, uint64_t *ret_parse_us, TSTree **ret_tree);

/* The first ERROR or MISSING node in document order under root (which
 * must have ts_node_has_error()). Iterative: safe on any depth. */
TSNode sg_ts_first_error(TSNode root);

/* Fill map[0..map_len) so that map[symbol] = k + 1 for every named symbol
 * whose name is names[k] (aliases and duplicates included), 0 for the rest.
 * Returns 0, or -E2BIG when the language has more than map_len symbols. */
int sg_ts_kind_map(const TSLanguage *lang, const char *const *names, size_t n_names, uint8_t *map,
                   size_t map_len);

/* Add a violation spanning node n of src (printf-style message).
 * Returns 0 or -ENOMEM. */
int sg_ts_report(struct sg_violations *vs, const char *src, size_t len, TSNode n, const char *rule,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The same with a va_list, for analyzers' own report wrappers. */
int sg_ts_vreport(struct sg_violations *vs, const char *src, size_t len, TSNode n, const char *rule,
                  const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* Put vs->items[from..count) in source order (line, then column; stable).
 * A walk meets `a.b.c` at its outermost node first; readers expect the
 * leftmost problem first. */
void sg_ts_sort_violations(struct sg_violations *vs, size_t from);

#endif
