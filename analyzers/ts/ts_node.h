/* ts_node.h - a node's symbol and type, for the null node too.
 *
 * libtree-sitter's ts_node_symbol() and ts_node_type() read through the
 * node's subtree pointer, which the null node does not have: a crash, in the
 * gateway, for any node that a field lookup, ts_node_parent() past the root
 * or a child index did not find. Trees with ERROR nodes make such lookups
 * common (the differential fuzzer found one: a parent walk past the root in
 * python_own_infer.c). The analyzers call these two instead, never the raw
 * ones (`make lint` checks): the null node has symbol 0 (tree-sitter's end
 * symbol, which no node of a tree carries) and type "".
 */
#ifndef SG_TS_NODE_H
#define SG_TS_NODE_H

#include <tree_sitter/api.h>

static inline TSSymbol sg_ts_symbol(TSNode n)
{
    return ts_node_is_null(n) ? 0 : ts_node_symbol(n);
}

static inline const char *sg_ts_type(TSNode n)
{
    return ts_node_is_null(n) ? "" : ts_node_type(n);
}

#endif
