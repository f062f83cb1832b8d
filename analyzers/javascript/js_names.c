/* js_names.c - resolved names for forbidden_calls (`Object.getPrototypeOf`
 * through member chains, destructuring and aliases), and names bound to a
 * constant forbidden property name (js_names.h).
 *
 * Aliases are flow-insensitive: `const O = Object` anywhere makes `O.x`
 * mean `Object.x` everywhere (a false positive at worst, never a miss), and
 * uses are checked in a second walk so a use before the declaration counts.
 */
#include "js_names.h"

#include <stdio.h>
#include <string.h>

#include "js_consts.h"
#include "js_fold.h"
#include "rules.h"

#define SHOWN "%.80s"

/* Split a member chain a.b["c"].d into its root identifier and ".b.c.d".
 * Returns -1 when the chain has a computed part or no identifier root. */
int js_chain_of(struct js_ctx *c, TSNode n, TSNode *ret_root, struct js_str *ret_suffix)
{
    TSNode links[JS_CHAIN_MAX];
    size_t count = 0;
    struct js_str part;
    while (js_is(n, c->sy->member_expression) || js_is(n, c->sy->subscript_expression)) {
        if (count == JS_CHAIN_MAX)
            return -1;
        links[count++] = n;
        n = js_head(n);
    }
    if (!js_is(n, c->sy->identifier))
        return -1;
    *ret_root = n;
    js_str_clear(ret_suffix);
    while (count-- > 0) {
        TSNode l = links[count];
        if (js_is(l, c->sy->member_expression)) {
            TSNode p = js_tail(l);
            if (!js_is(p, c->sy->property_identifier))
                return -1;
            js_node_name(c, p, &part);
        } else if (js_fold(c->sy, c->src, ts_node_child_by_field_id(l, c->sy->f_index), &part) !=
                   JS_FOLD_STRING) {
            return -1;
        }
        js_str_append(ret_suffix, ".", 1);
        js_str_append(ret_suffix, part.buf, part.len);
    }
    return 0;
}

/* Report `root + suffix` when it is a forbidden call; 1 when reported. */
static int check_resolved(struct js_ctx *c, TSNode at, const char *root,
                          const struct js_str *suffix)
{
    struct js_str full;
    js_str_clear(&full);
    js_str_append(&full, root, strlen(root));
    js_str_append(&full, suffix->buf, suffix->len);
    if (full.truncated || !sg_strset_has(&c->lp->forbidden_calls, full.buf))
        return 0;
    js_report(c, at, SG_RULE_CALL_FORBIDDEN, "use of '" SHOWN "' is forbidden", full.buf);
    return 1;
}

static int alias_matches(const struct js_alias *a, const struct js_str *name)
{
    if (a->name_truncated)
        return strncmp(a->name, name->buf, JS_ALIAS_NAME_MAX) == 0;
    return !name->truncated && strcmp(a->name, name->buf) == 0;
}

/* Check the name `root_node + suffix` against forbidden_calls: the root as
 * written in the first walk, each alias of it in the alias walk (so a use
 * is reported once, and uses before the alias's declaration are seen). */
void js_check_chain_name(struct js_ctx *c, TSNode at, TSNode root_node, const struct js_str *suffix)
{
    struct js_str root;
    js_node_name(c, root_node, &root);
    if (js_name_is(&root, "require") || js_name_is(&root, "module"))
        return; /* every use but require("m") / module.exports is reported already */
    if (!c->second_pass) {
        check_resolved(c, at, root.buf, suffix);
        return;
    }
    for (size_t i = 0; i < c->n_aliases; i++)
        if (alias_matches(&c->aliases[i], &root) &&
            check_resolved(c, at, c->aliases[i].target, suffix))
            return;
}

/* 1 when some forbidden call starts with `target.` (the set is sorted, so
 * the candidates are one contiguous run found by binary search). */
static int leads_to_forbidden_call(const struct sg_strset *calls, const char *target)
{
    char key[JS_ALIAS_NAME_MAX + 2];
    int n = snprintf(key, sizeof(key), "%s.", target);
    if (n < 0 || (size_t)n >= sizeof(key))
        return 0; /* longer than any entry */
    size_t lo = 0, hi = calls->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(calls->items[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < calls->count && strncmp(calls->items[lo], key, (size_t)n) == 0;
}

/* The identifier a member chain starts from, or a null node. */
static TSNode chain_root(const struct js_ctx *c, TSNode n)
{
    for (size_t k = 0; k <= JS_CHAIN_MAX; k++) {
        if (js_is(n, c->sy->identifier))
            return n;
        if (!js_is(n, c->sy->member_expression) && !js_is(n, c->sy->subscript_expression))
            break;
        n = js_head(n);
    }
    return (TSNode){0};
}

/* Cheap filter before a chain is resolved: its root must begin a forbidden
 * call (`Object` of `Object.getPrototypeOf`) or, in the alias walk, be an
 * alias. Most member accesses stop here. */
static int root_may_resolve(const struct js_ctx *c, TSNode root)
{
    struct js_str name;
    if (ts_node_is_null(root))
        return 0;
    js_node_name(c, root, &name);
    if (c->second_pass) {
        for (size_t i = 0; i < c->n_aliases; i++)
            if (alias_matches(&c->aliases[i], &name))
                return 1;
        return 0;
    }
    return !name.truncated && leads_to_forbidden_call(&c->lp->forbidden_calls, name.buf);
}

void js_check_chain(struct js_ctx *c, TSNode n)
{
    TSNode root;
    struct js_str suffix;
    if (c->lp->forbidden_calls.count && root_may_resolve(c, chain_root(c, n)) &&
        js_chain_of(c, n, &root, &suffix) == 0)
        js_check_chain_name(c, n, root, &suffix);
}

/* ---- aliases ------------------------------------------------------------ */

static void add_alias(struct js_ctx *c, TSNode at, const struct js_str *name, const char *target)
{
    if (!leads_to_forbidden_call(&c->lp->forbidden_calls, target))
        return;
    if (c->n_aliases == JS_ALIAS_MAX) {
        /* fail closed: an alias we cannot track could hide a forbidden call */
        js_report(c, at, SG_RULE_CALL_FORBIDDEN,
                  "too many aliases of '" SHOWN "' to check (at most %d)", target, JS_ALIAS_MAX);
        return;
    }
    struct js_alias *a = &c->aliases[c->n_aliases++];
    size_t n = name->len < JS_ALIAS_NAME_MAX ? name->len : JS_ALIAS_NAME_MAX;
    memcpy(a->name, name->buf, n);
    a->name[n] = '\0';
    a->name_truncated = name->truncated || name->len > JS_ALIAS_NAME_MAX;
    n = strnlen(target, JS_ALIAS_NAME_MAX);
    memcpy(a->target, target, n);
    a->target[n] = '\0';
}

/* 1 when root names a recorded alias (aliases of aliases are followed). */
static int alias_root(const struct js_ctx *c, TSNode root)
{
    struct js_str name;
    if (ts_node_is_null(root) || !c->n_aliases)
        return 0;
    js_node_name(c, root, &name);
    for (size_t i = 0; i < c->n_aliases; i++)
        if (alias_matches(&c->aliases[i], &name))
            return 1;
    return 0;
}

/* `const x = <value>` or `x = <value>`: remember x when value names an
 * object with forbidden members (`Object`, `process`, an alias of one). */
static void record_alias(struct js_ctx *c, TSNode name_node, TSNode value)
{
    TSNode root;
    struct js_str name, suffix, rootname, target;
    if (!js_is(name_node, c->sy->identifier) || !c->lp->forbidden_calls.count ||
        (!root_may_resolve(c, chain_root(c, value)) && !alias_root(c, chain_root(c, value))) ||
        js_chain_of(c, value, &root, &suffix) < 0)
        return;
    js_node_name(c, name_node, &name);
    js_node_name(c, root, &rootname);
    js_str_clear(&target);
    js_str_append(&target, rootname.buf, rootname.len);
    js_str_append(&target, suffix.buf, suffix.len);
    if (!target.truncated)
        add_alias(c, value, &name, target.buf);
    for (size_t i = 0, n = c->n_aliases; i < n; i++) {
        if (!alias_matches(&c->aliases[i], &rootname))
            continue;
        js_str_clear(&target);
        js_str_append(&target, c->aliases[i].target, strlen(c->aliases[i].target));
        js_str_append(&target, suffix.buf, suffix.len);
        if (!target.truncated)
            add_alias(c, value, &name, target.buf);
    }
}

/* ---- names holding a forbidden property name ---------------------------- */

/* `const k = "constructor"; f[k]`: the constant is remembered when it names
 * a forbidden property, and `x[k]` is reported in the second walk. Only
 * direct bindings of a constant are followed (not values passed around). */
static void record_taint(struct js_ctx *c, TSNode name_node, TSNode value)
{
    struct js_str v;
    if (js_fold(c->sy, c->src, value, &v) == JS_FOLD_STRING)
        js_taint_name(c, name_node, value, &v);
}

void js_taint_name(struct js_ctx *c, TSNode name_node, TSNode value, const struct js_str *vp)
{
    struct js_str name;
    if ((!js_is_forbidden_attr(c, vp) && !js_is_denied_dunder(c, vp)) ||
        js_tainted_value(c, name_node))
        return;
    js_node_name(c, name_node, &name);
    if (c->n_taints == JS_TAINT_MAX) {
        js_report(c, value, SG_RULE_ATTRIBUTE_FORBIDDEN,
                  "too many names bound to forbidden property names (at most %d)", JS_TAINT_MAX);
        return;
    }
    struct js_taint *t = &c->taints[c->n_taints++];
    size_t n = name.len < JS_ALIAS_NAME_MAX ? name.len : JS_ALIAS_NAME_MAX;
    memcpy(t->name, name.buf, n);
    t->name[n] = '\0';
    t->name_truncated = name.truncated || name.len > JS_ALIAS_NAME_MAX;
    n = strnlen(vp->buf, JS_ALIAS_NAME_MAX); /* a policy entry: at most 128 bytes */
    memcpy(t->value, vp->buf, n);
    t->value[n] = '\0';
}

const char *js_tainted_value(const struct js_ctx *c, TSNode ident)
{
    struct js_str name;
    if (!c->n_taints || !js_is(ident, c->sy->identifier))
        return NULL;
    js_node_name(c, ident, &name);
    for (size_t i = 0; i < c->n_taints; i++) {
        const struct js_taint *t = &c->taints[i];
        int match = t->name_truncated ? strncmp(t->name, name.buf, JS_ALIAS_NAME_MAX) == 0
                                      : !name.truncated && strcmp(t->name, name.buf) == 0;
        if (match)
            return t->value;
    }
    return NULL;
}

void js_record_binding(struct js_ctx *c, TSNode name_node, TSNode value)
{
    if (!js_is(name_node, c->sy->identifier) || ts_node_is_null(value))
        return;
    record_alias(c, name_node, value);
    record_taint(c, name_node, value);
    js_consts_record(c, name_node, value);
}
