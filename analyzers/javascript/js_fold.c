/* js_fold.c - constant folding of JavaScript expressions (js_fold.h).
 *
 * Folding appends to one output buffer as it goes ("a" + "b" appends "a"
 * then "b"), so nested folds need no temporaries except for a join
 * separator or a char code. A result that is not a constant makes the
 * buffer's contents meaningless; callers only read it for text kinds.
 */
#include "js_fold.h"
#include "ts_node.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NUMBER_TEXT_MAX 32                   /* digits of a number literal we render */
#define SAFE_INTEGER_MAX 9007199254740991ULL /* 2^53 - 1: exact as a JS number */

struct fold {
    const struct js_syms *sy;
    const char *src;
    const struct js_fold_env *env; /* NULL: identifiers are dynamic */
    unsigned depth, nodes;
};

static enum js_fold_kind fold_into(struct fold *f, TSNode n, struct js_str *out);

int js_fold_is_text(enum js_fold_kind kind)
{
    return kind == JS_FOLD_STRING || kind == JS_FOLD_NUMBER || kind == JS_FOLD_OTHER;
}

static enum js_fold_kind not_text(enum js_fold_kind k)
{
    return k == JS_FOLD_COMPLEX ? JS_FOLD_COMPLEX : JS_FOLD_DYNAMIC;
}

static int is_extra(const struct fold *f, TSNode n)
{
    TSSymbol s = sg_ts_symbol(n);
    return s == f->sy->comment || s == f->sy->html_comment;
}

/* The named, non-comment children of a node, in order, through a cursor
 * (ts_node_named_child(n, i) is O(i), so indexing a long list would be
 * quadratic). */
struct kids {
    TSTreeCursor c;
    int state; /* 0: before the first child, 1: on a child, 2: done */
};

static void kids_open(struct kids *k, TSNode n)
{
    k->c = ts_tree_cursor_new(n);
    k->state = 0;
}

static void kids_close(struct kids *k)
{
    ts_tree_cursor_delete(&k->c);
}

/* Next child, named or not (for array holes, which are only commas). */
static int kids_next_any(const struct fold *f, struct kids *k, TSNode *ret)
{
    for (;;) {
        int moved = k->state == 0   ? ts_tree_cursor_goto_first_child(&k->c)
                    : k->state == 1 ? ts_tree_cursor_goto_next_sibling(&k->c)
                                    : 0;
        k->state = moved ? 1 : 2;
        if (!moved)
            return 0;
        *ret = ts_tree_cursor_current_node(&k->c);
        if (!is_extra(f, *ret))
            return 1;
    }
}

static int kids_next(const struct fold *f, struct kids *k, TSNode *ret)
{
    while (kids_next_any(f, k, ret))
        if (ts_node_is_named(*ret))
            return 1;
    return 0;
}

/* The single expression inside a wrapper node (parentheses, `${}`), or a
 * null node when there is not exactly one. */
static TSNode only_child(const struct fold *f, TSNode n)
{
    struct kids k;
    TSNode c, found = {0};
    int count = 0;
    kids_open(&k, n);
    while (kids_next(f, &k, &c)) {
        found = c;
        count++;
    }
    kids_close(&k);
    return count == 1 ? found : (TSNode){0};
}

/* The last expression of a comma list or parentheses: its value. */
static TSNode last_child(const struct fold *f, TSNode n)
{
    struct kids k;
    TSNode c, last = {0};
    kids_open(&k, n);
    while (kids_next(f, &k, &c))
        last = c;
    kids_close(&k);
    return last;
}

/* Decimal text of a number literal when it is an exact integer. */
static enum js_fold_kind fold_number(struct fold *f, TSNode n, struct js_str *out)
{
    char t[NUMBER_TEXT_MAX + 1];
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    size_t k = 0;
    for (uint32_t i = s; i < e; i++) {
        if (f->src[i] == '_')
            continue;
        if (k == NUMBER_TEXT_MAX)
            return JS_FOLD_NUMBER_INEXACT;
        t[k++] = f->src[i];
    }
    t[k] = '\0';
    int base = 10;
    const char *digits = t;
    if (k > 2 && t[0] == '0' && strchr("xXoObB", t[1])) {
        base = (t[1] == 'x' || t[1] == 'X') ? 16 : (t[1] == 'o' || t[1] == 'O') ? 8 : 2;
        digits = t + 2;
    } else if (k > 1 && t[0] == '0') {
        return JS_FOLD_NUMBER_INEXACT; /* legacy octal 010 or 0.5 */
    }
    char *end;
    unsigned long long v = strtoull(digits, &end, base);
    if (*end != '\0' || !*digits || v > SAFE_INTEGER_MAX || strchr(digits, '-'))
        return JS_FOLD_NUMBER_INEXACT;
    char dec[NUMBER_TEXT_MAX];
    int dn = snprintf(dec, sizeof(dec), "%llu", v);
    js_str_append(out, dec, (size_t)dn);
    return JS_FOLD_NUMBER;
}

/* Append template text src[s..e): cooked, or raw for String.raw (where only
 * CRLF is normalised to LF). */
static void template_text(const struct fold *f, uint32_t s, uint32_t e, int raw, struct js_str *out)
{
    if (!raw) {
        js_str_append_cooked(out, f->src + s, e - s, 1);
        return;
    }
    for (uint32_t i = s; i < e; i++)
        if (!(f->src[i] == '\r' && i + 1 < e && f->src[i + 1] == '\n'))
            js_str_append(out, f->src + i, 1);
}

static enum js_fold_kind fold_template(struct fold *f, TSNode n, int raw, struct js_str *out)
{
    uint32_t pos = ts_node_start_byte(n) + 1, end = ts_node_end_byte(n) - 1;
    uint32_t nc = ts_node_child_count(n);
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_child(n, i);
        if (sg_ts_symbol(c) != f->sy->template_substitution)
            continue;
        template_text(f, pos, ts_node_start_byte(c), raw, out);
        TSNode e = only_child(f, c);
        if (ts_node_is_null(e))
            return JS_FOLD_DYNAMIC;
        enum js_fold_kind k = fold_into(f, e, out);
        if (!js_fold_is_text(k))
            return not_text(k);
        pos = ts_node_end_byte(c);
    }
    template_text(f, pos, end, raw, out);
    return JS_FOLD_STRING;
}

static enum js_fold_kind fold_plus(struct fold *f, TSNode n, struct js_str *out)
{
    TSNode l = ts_node_child_by_field_id(n, f->sy->f_left);
    TSNode r = ts_node_child_by_field_id(n, f->sy->f_right);
    enum js_fold_kind kl = fold_into(f, l, out);
    if (!js_fold_is_text(kl))
        return not_text(kl);
    enum js_fold_kind kr = fold_into(f, r, out);
    if (!js_fold_is_text(kr))
        return not_text(kr);
    /* number + number is arithmetic, not concatenation: not folded */
    return (kl == JS_FOLD_STRING || kr == JS_FOLD_STRING) ? JS_FOLD_STRING : JS_FOLD_DYNAMIC;
}

/* An exact integer argument (for String.fromCharCode). */
static enum js_fold_kind fold_uint(struct fold *f, TSNode n, unsigned long long *ret)
{
    struct js_str t;
    js_str_clear(&t);
    enum js_fold_kind k = fold_into(f, n, &t);
    if (k != JS_FOLD_NUMBER)
        return not_text(k);
    *ret = strtoull(t.buf, NULL, 10);
    return JS_FOLD_NUMBER;
}

/* Calls the folder understands, by callee: see fold_call. */
struct callee {
    TSNode object;      /* null for a plain function name */
    struct js_str name; /* property name, or the function's name */
};

static int callee_parts(struct fold *f, TSNode fn, struct callee *ret)
{
    TSSymbol s = sg_ts_symbol(fn);
    ret->object = (TSNode){0};
    if (s == f->sy->identifier) {
        js_decode_identifier(f->src + ts_node_start_byte(fn),
                             ts_node_end_byte(fn) - ts_node_start_byte(fn), &ret->name);
        return 0;
    }
    if (s == f->sy->member_expression) {
        TSNode p = js_tail(fn);
        if (sg_ts_symbol(p) != f->sy->property_identifier)
            return -1;
        js_decode_identifier(f->src + ts_node_start_byte(p),
                             ts_node_end_byte(p) - ts_node_start_byte(p), &ret->name);
        ret->object = js_head(fn);
        return 0;
    }
    if (s == f->sy->subscript_expression) {
        js_str_clear(&ret->name);
        TSNode idx = ts_node_child_by_field_id(fn, f->sy->f_index);
        if (fold_into(f, idx, &ret->name) != JS_FOLD_STRING)
            return -1;
        ret->object = js_head(fn);
        return 0;
    }
    return -1;
}

static int is_name(const struct js_str *s, const char *name)
{
    return !s->truncated && strcmp(s->buf, name) == 0;
}

static int object_is(struct fold *f, TSNode obj, const char *name)
{
    struct js_str t;
    if (ts_node_is_null(obj) || sg_ts_symbol(obj) != f->sy->identifier)
        return 0;
    js_decode_identifier(f->src + ts_node_start_byte(obj),
                         ts_node_end_byte(obj) - ts_node_start_byte(obj), &t);
    return is_name(&t, name);
}

/* String.fromCharCode(n, ...) / String.fromCodePoint(n, ...). */
static enum js_fold_kind fold_char_codes(struct fold *f, TSNode args, int code_point,
                                         struct js_str *out)
{
    struct kids k;
    TSNode c;
    enum js_fold_kind r = JS_FOLD_STRING;
    kids_open(&k, args);
    while (r == JS_FOLD_STRING && kids_next(f, &k, &c)) {
        unsigned long long v = 0;
        enum js_fold_kind kv = fold_uint(f, c, &v);
        if (kv != JS_FOLD_NUMBER)
            r = not_text(kv);
        else if (code_point && v > 0x10FFFF)
            r = JS_FOLD_DYNAMIC; /* RangeError at run time */
        else
            js_str_append_cp(out, code_point ? (uint32_t)v : (uint32_t)(v & 0xFFFF));
    }
    kids_close(&k);
    js_str_flush(out);
    return r;
}

/* Append every argument (s.concat(a, b)); each must be a constant. */
static enum js_fold_kind fold_args_text(struct fold *f, TSNode args, struct js_str *out)
{
    struct kids k;
    TSNode c;
    enum js_fold_kind r = JS_FOLD_STRING;
    kids_open(&k, args);
    while (r == JS_FOLD_STRING && kids_next(f, &k, &c)) {
        enum js_fold_kind kc = fold_into(f, c, out);
        if (!js_fold_is_text(kc))
            r = not_text(kc);
    }
    kids_close(&k);
    return r;
}

/* Count the expressions in an argument list (0, 1 or "more"). */
static unsigned count_args(const struct fold *f, TSNode args, TSNode *ret_first)
{
    struct kids k;
    TSNode c;
    unsigned n = 0;
    kids_open(&k, args);
    while (n < 2 && kids_next(f, &k, &c))
        if (n++ == 0)
            *ret_first = c;
    kids_close(&k);
    return n;
}

/* One element of a joined array: null and undefined join as "". */
static enum js_fold_kind join_element(struct fold *f, TSNode c, struct js_str *out)
{
    TSSymbol s = sg_ts_symbol(c);
    if (s == f->sy->null_ || s == f->sy->undefined)
        return JS_FOLD_STRING;
    enum js_fold_kind k = fold_into(f, c, out);
    return js_fold_is_text(k) ? JS_FOLD_STRING : not_text(k);
}

/* [a, b, , c].join(sep): sep defaults to ",", holes join as "". */
static enum js_fold_kind fold_join(struct fold *f, TSNode array, TSNode args, struct js_str *out)
{
    struct js_str sep;
    TSNode first = {0}, c;
    js_str_clear(&sep);
    unsigned nargs = count_args(f, args, &first);
    if (nargs == 0 || sg_ts_symbol(first) == f->sy->undefined) {
        js_str_append(&sep, ",", 1);
    } else {
        enum js_fold_kind ks = fold_into(f, first, &sep);
        if (!js_fold_is_text(ks))
            return not_text(ks);
    }
    /* Slots end at commas; a slot with no element is a hole. A trailing
     * comma does not open a slot: [a,] has one, [a,,] two. */
    struct kids k;
    enum js_fold_kind r = JS_FOLD_STRING;
    size_t slot = 0;
    int filled = 0;
    kids_open(&k, array);
    while (r == JS_FOLD_STRING && kids_next_any(f, &k, &c)) {
        int is_comma = sg_ts_symbol(c) == f->sy->comma;
        if (!ts_node_is_named(c) && !is_comma)
            continue; /* [ and ] */
        if (!filled && slot > 0)
            js_str_append(out, sep.buf, sep.len);
        if (!is_comma) {
            r = join_element(f, c, out);
            filled = 1;
        } else {
            slot++;
            filled = 0;
        }
    }
    kids_close(&k);
    return r;
}

/* s.toLowerCase() / s.toUpperCase(); a locale argument could change the
 * mapping ("I".toLocaleLowerCase("tr")), so toLocale* folds only without. */
static enum js_fold_kind fold_case(struct fold *f, TSNode obj, TSNode args, int upper, int locale,
                                   struct js_str *out)
{
    TSNode first;
    if (locale && count_args(f, args, &first) > 0)
        return JS_FOLD_DYNAMIC;
    size_t from = out->len;
    enum js_fold_kind k = fold_into(f, obj, out);
    if (k != JS_FOLD_STRING)
        return not_text(k);
    return js_str_casemap(out, from, upper) == 0 ? JS_FOLD_STRING : JS_FOLD_DYNAMIC;
}

/* The first two arguments of a call (null nodes when absent). */
static unsigned two_args(const struct fold *f, TSNode args, TSNode *ret_a, TSNode *ret_b)
{
    struct kids k;
    TSNode c;
    unsigned n = 0;
    *ret_a = *ret_b = (TSNode){0};
    kids_open(&k, args);
    while (n < 3 && kids_next(f, &k, &c)) {
        if (n == 0)
            *ret_a = c;
        else if (n == 1)
            *ret_b = c;
        n++;
    }
    kids_close(&k);
    return n;
}

/* 1 when out[from..len) is ASCII, so byte offsets are UTF-16 offsets. */
static int ascii_tail(const struct js_str *out, size_t from)
{
    if (out->truncated)
        return 0;
    for (size_t i = from; i < out->len; i++)
        if ((unsigned char)out->buf[i] >= 0x80)
            return 0;
    return 1;
}

/* Keep out[from + s .. from + e) of the folded receiver. */
static void keep_range(struct js_str *out, size_t from, size_t s, size_t e)
{
    memmove(out->buf + from, out->buf + from + s, e - s);
    out->len = from + (e - s);
    out->buf[out->len] = '\0';
}

/* s.slice(a, b) / s.substring(a, b) / s.substr(a, n) with non-negative
 * integer arguments on an ASCII string (JavaScript indexes UTF-16 units). */
static enum js_fold_kind fold_substring(struct fold *f, TSNode obj, TSNode args, int which,
                                        struct js_str *out)
{
    TSNode a, b;
    unsigned long long va = 0, vb = ULLONG_MAX;
    if (two_args(f, args, &a, &b) > 2 || ts_node_is_null(a) ||
        fold_uint(f, a, &va) != JS_FOLD_NUMBER ||
        (!ts_node_is_null(b) && fold_uint(f, b, &vb) != JS_FOLD_NUMBER))
        return JS_FOLD_DYNAMIC;
    size_t from = out->len;
    enum js_fold_kind k = fold_into(f, obj, out);
    if (k != JS_FOLD_STRING)
        return not_text(k);
    if (!ascii_tail(out, from))
        return JS_FOLD_DYNAMIC;
    unsigned long long n = out->len - from;
    unsigned long long s = va < n ? va : n, e;
    if (which == 2) /* substr(start, length) */
        e = vb >= n - s ? n : s + vb;
    else
        e = vb < n ? vb : n;
    if (e < s) {
        unsigned long long t = s; /* substring swaps; slice yields "" */
        s = which == 1 ? e : s;
        e = which == 1 ? t : s;
    }
    keep_range(out, from, (size_t)s, (size_t)e);
    return JS_FOLD_STRING;
}

/* s.replace(p, r) / s.replaceAll(p, r) with string p and r (r without '$'
 * patterns). */
static enum js_fold_kind fold_replace(struct fold *f, TSNode obj, TSNode args, int all,
                                      struct js_str *out)
{
    TSNode a, b;
    struct js_str pat, rep, tmp;
    js_str_clear(&pat);
    js_str_clear(&rep);
    js_str_clear(&tmp);
    if (two_args(f, args, &a, &b) != 2 || fold_into(f, a, &pat) != JS_FOLD_STRING ||
        fold_into(f, b, &rep) != JS_FOLD_STRING || pat.truncated || rep.truncated ||
        memchr(rep.buf, '$', rep.len) || (all && pat.len == 0))
        return JS_FOLD_DYNAMIC;
    if (fold_into(f, obj, &tmp) != JS_FOLD_STRING || tmp.truncated)
        return JS_FOLD_DYNAMIC;
    size_t i = 0;
    int done = 0;
    while (i <= tmp.len) {
        const char *hit = done      ? NULL
                          : pat.len ? memmem(tmp.buf + i, tmp.len - i, pat.buf, pat.len)
                                    : tmp.buf + i;
        size_t at = hit ? (size_t)(hit - tmp.buf) : tmp.len;
        js_str_append(out, tmp.buf + i, at - i);
        if (!hit)
            break;
        js_str_append(out, rep.buf, rep.len);
        i = at + pat.len;
        done = !all;
    }
    return JS_FOLD_STRING;
}

/* obj.method(args) where obj folds to a string (or is an array literal). */
static enum js_fold_kind fold_method(struct fold *f, const struct callee *c, TSNode args,
                                     struct js_str *out)
{
    static const char *const cases[] = {"toLowerCase", "toUpperCase", "toLocaleLowerCase",
                                        "toLocaleUpperCase"};
    TSNode first;
    if (object_is(f, c->object, "String") && is_name(&c->name, "fromCharCode"))
        return fold_char_codes(f, args, 0, out);
    if (object_is(f, c->object, "String") && is_name(&c->name, "fromCodePoint"))
        return fold_char_codes(f, args, 1, out);
    TSNode arr = c->object;
    if (f->env && sg_ts_symbol(arr) == f->sy->identifier)
        arr = f->env->lookup(f->env->arg, arr); /* const parts = [...]; parts.join("") */
    if (is_name(&c->name, "join") && !ts_node_is_null(arr) && sg_ts_symbol(arr) == f->sy->array)
        return fold_join(f, arr, args, out);
    if (is_name(&c->name, "concat")) {
        enum js_fold_kind k = fold_into(f, c->object, out);
        return k == JS_FOLD_STRING ? fold_args_text(f, args, out) : not_text(k);
    }
    for (int i = 0; i < 4; i++)
        if (is_name(&c->name, cases[i]))
            return fold_case(f, c->object, args, i & 1, i >= 2, out);
    static const char *const subs[] = {"slice", "substring", "substr"};
    for (int i = 0; i < 3; i++)
        if (is_name(&c->name, subs[i]))
            return fold_substring(f, c->object, args, i, out);
    if (is_name(&c->name, "replace") || is_name(&c->name, "replaceAll"))
        return fold_replace(f, c->object, args, is_name(&c->name, "replaceAll"), out);
    if ((is_name(&c->name, "toString") || is_name(&c->name, "valueOf")) &&
        count_args(f, args, &first) == 0) {
        enum js_fold_kind k = fold_into(f, c->object, out);
        return k == JS_FOLD_STRING ? k : not_text(k);
    }
    return JS_FOLD_DYNAMIC;
}

static enum js_fold_kind fold_call(struct fold *f, TSNode n, struct js_str *out)
{
    struct callee c;
    TSNode first;
    TSNode fn = js_head(n), args = js_tail(n);
    if (ts_node_is_null(fn) || ts_node_is_null(args) || callee_parts(f, fn, &c) < 0)
        return JS_FOLD_DYNAMIC;
    if (sg_ts_symbol(args) == f->sy->template_string) {
        /* a tagged template: only String.raw`...` has a known value */
        if (object_is(f, c.object, "String") && is_name(&c.name, "raw"))
            return fold_template(f, args, 1, out);
        return JS_FOLD_DYNAMIC;
    }
    if (ts_node_is_null(c.object)) {
        if (!is_name(&c.name, "String") || count_args(f, args, &first) != 1)
            return JS_FOLD_DYNAMIC;
        enum js_fold_kind k = fold_into(f, first, out);
        return js_fold_is_text(k) ? JS_FOLD_STRING : not_text(k);
    }
    return fold_method(f, &c, args, out);
}

/* a || b, a && b, a ?? b with a constant left side: the side that is the
 * value. */
static enum js_fold_kind fold_logical(struct fold *f, TSNode n, struct js_str *out)
{
    TSNode op = ts_node_child_by_field_id(n, f->sy->f_operator);
    uint32_t os = ts_node_start_byte(op);
    if (ts_node_end_byte(op) - os != 2)
        return JS_FOLD_DYNAMIC;
    const char *t = f->src + os;
    int kind = !memcmp(t, "||", 2) ? 0 : !memcmp(t, "&&", 2) ? 1 : !memcmp(t, "??", 2) ? 2 : -1;
    if (kind < 0)
        return JS_FOLD_DYNAMIC;
    struct js_str l;
    js_str_clear(&l);
    enum js_fold_kind kl = fold_into(f, ts_node_child_by_field_id(n, f->sy->f_left), &l);
    if (!js_fold_is_text(kl) && kl != JS_FOLD_NUMBER_INEXACT)
        return not_text(kl);
    int nullish = kl == JS_FOLD_OTHER && (!strcmp(l.buf, "null") || !strcmp(l.buf, "undefined"));
    int falsy = nullish || (kl == JS_FOLD_OTHER && !strcmp(l.buf, "false")) ||
                (kl == JS_FOLD_STRING && l.len == 0) ||
                (kl == JS_FOLD_NUMBER && !strcmp(l.buf, "0"));
    if (kl == JS_FOLD_NUMBER_INEXACT && kind != 2)
        return JS_FOLD_DYNAMIC; /* 0.0 or -0 may be falsy */
    int take_left = kind == 0 ? !falsy : kind == 1 ? falsy : !nullish;
    if (!take_left)
        return fold_into(f, ts_node_child_by_field_id(n, f->sy->f_right), out);
    if (kl == JS_FOLD_NUMBER_INEXACT)
        return kl;
    js_str_append(out, l.buf, l.len);
    return kl;
}

static enum js_fold_kind fold_dispatch(struct fold *f, TSNode n, struct js_str *out)
{
    const struct js_syms *sy = f->sy;
    TSSymbol s = sg_ts_symbol(n);
    uint32_t start = ts_node_start_byte(n), end = ts_node_end_byte(n);
    if (s == sy->string) {
        js_str_append_cooked(out, f->src + start + 1, end - start - 2, 0);
        return JS_FOLD_STRING;
    }
    if (s == sy->template_string)
        return fold_template(f, n, 0, out);
    if (s == sy->number)
        return fold_number(f, n, out);
    if (s == sy->true_ || s == sy->false_ || s == sy->null_ || s == sy->undefined) {
        js_str_append(out, f->src + start, end - start);
        return JS_FOLD_OTHER;
    }
    if (s == sy->parenthesized_expression || s == sy->sequence_expression) {
        TSNode last = last_child(f, n);
        return ts_node_is_null(last) ? JS_FOLD_DYNAMIC : fold_into(f, last, out);
    }
    if (s == sy->binary_expression &&
        sg_ts_symbol(ts_node_child_by_field_id(n, sy->f_operator)) == sy->plus)
        return fold_plus(f, n, out);
    if (s == sy->binary_expression)
        return fold_logical(f, n, out);
    if (s == sy->unary_expression &&
        sg_ts_symbol(ts_node_child_by_field_id(n, sy->f_operator)) == sy->minus &&
        sg_ts_symbol(ts_node_child_by_field_id(n, sy->f_argument)) == sy->number)
        return JS_FOLD_NUMBER_INEXACT;
    if (s == sy->call_expression)
        return fold_call(f, n, out);
    if (s == sy->identifier && f->env) {
        TSNode v = f->env->lookup(f->env->arg, n);
        return ts_node_is_null(v) ? JS_FOLD_DYNAMIC : fold_into(f, v, out);
    }
    return JS_FOLD_DYNAMIC;
}

static enum js_fold_kind fold_into(struct fold *f, TSNode n, struct js_str *out)
{
    if (ts_node_is_null(n))
        return JS_FOLD_DYNAMIC;
    if (++f->nodes > JS_FOLD_NODES_MAX || f->depth >= JS_FOLD_DEPTH_MAX)
        return JS_FOLD_COMPLEX;
    f->depth++;
    enum js_fold_kind k = fold_dispatch(f, n, out);
    f->depth--;
    return k;
}

enum js_fold_kind js_fold(const struct js_syms *sy, const char *src, TSNode node,
                          struct js_str *ret_value)
{
    return js_fold_env(sy, src, NULL, node, ret_value);
}

enum js_fold_kind js_fold_env(const struct js_syms *sy, const char *src,
                              const struct js_fold_env *env, TSNode node, struct js_str *ret_value)
{
    struct fold f = {.sy = sy, .src = src, .env = env};
    js_str_clear(ret_value);
    enum js_fold_kind k = fold_into(&f, node, ret_value);
    js_str_flush(ret_value);
    return k;
}
