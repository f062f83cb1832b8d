/* ts_bound.h - a linear pre-scan that bounds how many leaves (tokens and
 * MISSING nodes) one tree-sitter parse of a source can create.
 *
 * Why: tree-sitter 0.20.7 stores a node's child count in 16 bits
 * (SubtreeHeapData.child_count is a uint16_t there; the allocation uses the
 * full count), so a node built with 65536 or more children gets a truncated
 * count, a children pointer inside its block, and free() of that pointer
 * later corrupts the heap (`[` * 65533 after `x = ` does it). A node's
 * children are disjoint, non-empty subtrees of one parse-stack version, so
 * no node can have more children than that version has leaves. A parse
 * whose leaf bound is below 65536 is safe without any run-time guard; only
 * the others need ts_util.c's logging stack guard.
 *
 * The bound (every step over-approximates; see ts_bound.c for each case):
 *   tokens <= start positions + blank-started tokens + zero-width tokens
 *   leaves <= 2 * tokens + SG_TS_BOUND_SLACK
 * (tree-sitter inserts at most one MISSING leaf before each token it
 * shifts; the slack covers the end-of-file leaf and empty ERROR nodes).
 */
#ifndef SG_TS_BOUND_H
#define SG_TS_BOUND_H

#include <stddef.h>
#include <stdint.h>

/* Children a 0.20.7 node can hold without its count wrapping. */
#define SG_TS_CHILDREN_MAX 65535u
/* End-of-file leaf, empty ERROR nodes: a constant number per parse. */
#define SG_TS_BOUND_SLACK 64u
/* Lines per entry of the per-block suffix bounds. */
#define SG_TS_BOUND_BLOCK_LINES 64u

/* Upper bound on the tokens (leaves other than MISSING ones) any one parse
 * of src[0..len) by the Python or JavaScript grammar can push. */
uint64_t sg_ts_token_bound(const char *src, size_t len);

/* 1 when a parse of src could build a node with more than
 * SG_TS_CHILDREN_MAX children (2 * bound + slack exceeds it), else 0. */
int sg_ts_bound_needs_guard(const char *src, size_t len);

/* The token bound of every suffix that starts at a line block: on success
 * (*ret_suffix)[b] bounds the tokens from line b * SG_TS_BOUND_BLOCK_LINES
 * (0-based, lines end at '\n') to the end, for b < *ret_blocks. Caller
 * frees *ret_suffix with free(). Returns 0 or -ENOMEM. */
int sg_ts_bound_suffixes(const char *src, size_t len, uint64_t **ret_suffix, size_t *ret_blocks);

#endif
