/* js_ctx.c - reporting, node helpers and the policy's name sets shared by
 * the JavaScript analyzer's modules (js_ctx.h). */
#include "js_ctx.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "ts_util.h"

void js_report(struct js_ctx *ctx, TSNode n, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = sg_ts_vreport(ctx->out, ctx->src, ctx->len, n, rule, fmt, ap);
    va_end(ap);
    if (r < 0 && !ctx->err)
        ctx->err = r;
}

void js_node_name(const struct js_ctx *c, TSNode n, struct js_str *ret)
{
    uint32_t s = ts_node_start_byte(n);
    js_decode_identifier(c->src + s, ts_node_end_byte(n) - s, ret);
}

TSNode js_first_arg(const struct js_ctx *c, TSNode args)
{
    return js_nth_arg(c, args, 0);
}

TSNode js_nth_arg(const struct js_ctx *c, TSNode args, uint32_t nth)
{
    /* ts_node_named_child() is O(index): bound the scan so a call with
     * thousands of comments cannot make this quadratic; past the bound the
     * argument counts as absent (a require() then reads as dynamic). */
    uint32_t nc = ts_node_named_child_count(args), seen = 0;
    for (uint32_t i = 0; i < nc && i < JS_ARGS_SCAN_MAX; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (js_is(a, c->sy->comment) || js_is(a, c->sy->html_comment))
            continue;
        if (seen++ == nth)
            return a;
    }
    return (TSNode){0};
}

/* ---- name sets ---------------------------------------------------------- */

static void filter_build(struct js_name_filter *f, const struct sg_strset *set)
{
    memset(f, 0, sizeof(*f));
    f->min_len = SIZE_MAX;
    for (size_t i = 0; i < set->count; i++) {
        unsigned char b = (unsigned char)set->items[i][0];
        size_t n = strlen(set->items[i]);
        f->first[b >> 6] |= 1ULL << (b & 63);
        f->min_len = n < f->min_len ? n : f->min_len;
        f->max_len = n > f->max_len ? n : f->max_len;
    }
}

void js_ctx_init_filters(struct js_ctx *c)
{
    filter_build(&c->names_filter, &c->lp->forbidden_names);
    filter_build(&c->attrs_filter, &c->lp->forbidden_attributes);
}

static int in_set(const struct js_name_filter *f, const struct sg_strset *set,
                  const struct js_str *name)
{
    unsigned char b = (unsigned char)name->buf[0];
    if (name->truncated || name->len < f->min_len || name->len > f->max_len ||
        !(f->first[b >> 6] & (1ULL << (b & 63))))
        return 0;
    return sg_strset_has(set, name->buf);
}

int js_is_forbidden_name(const struct js_ctx *c, const struct js_str *name)
{
    return in_set(&c->names_filter, &c->lp->forbidden_names, name);
}

int js_is_forbidden_attr(const struct js_ctx *c, const struct js_str *name)
{
    return in_set(&c->attrs_filter, &c->lp->forbidden_attributes, name);
}

int js_is_denied_dunder(const struct js_ctx *c, const struct js_str *name)
{
    return c->lp->deny_dunder_attributes && js_is_dunder(name->buf, name->len) &&
           !sg_strset_has(&c->lp->allowed_dunders, name->buf);
}
