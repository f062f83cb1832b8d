/* python_fold.c - constant strings and integers, format-field scanning. */
#include "python_fold.h"

#include <stdio.h>
#include <string.h>

#include "python_resolve.h"
#include "python_scope.h"
#include "ts_node.h"

/* The ASCII characters str.isspace() accepts (str.strip() strips them). */
#define PY_ASCII_SPACE " \t\n\r\f\v\x1c\x1d\x1e\x1f"

/* Largest integer folded; larger constants are not names. */
#define FOLD_INT_MAX 2147483647LL

static int tx_put(struct py_text *b, const char *s, size_t n)
{
    if (n >= b->cap - b->n)
        return 0;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return 1;
}

static int tx_putc(struct py_text *b, char ch)
{
    return tx_put(b, &ch, 1);
}

/* A py_sbuf written through the py_text functions: py_sbuf_view(), write,
 * then sb_sync(). */
static struct py_text sb_view(struct py_sbuf *b)
{
    return (struct py_text){.s = b->s, .n = b->n, .cap = sizeof(b->s)};
}

static void sb_sync(struct py_sbuf *b, const struct py_text *t)
{
    b->n = t->n;
    b->s[b->n] = '\0';
}

static int sb_put(struct py_sbuf *b, const char *s, size_t n)
{
    struct py_text t = sb_view(b);
    int ok = tx_put(&t, s, n);
    sb_sync(b, &t);
    return ok;
}

static int sb_putc(struct py_sbuf *b, char ch)
{
    return sb_put(b, &ch, 1);
}

static int tx_put_cp(struct py_text *b, unsigned long cp)
{
    char u[4];
    if (cp < 0x80) {
        u[0] = (char)cp;
        return tx_put(b, u, 1);
    }
    if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        return tx_put(b, u, 2);
    }
    if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        return tx_put(b, u, 3);
    }
    if (cp > 0x10FFFF)
        return 0;
    u[0] = (char)(0xF0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    return tx_put(b, u, 4);
}

static int sb_put_cp(struct py_sbuf *b, unsigned long cp)
{
    struct py_text t = sb_view(b);
    int ok = tx_put_cp(&t, cp);
    sb_sync(b, &t);
    return ok;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Read up to max digits of base (8 or 16) at s[*i]; exact: need all max. */
static int read_digits(const char *s, size_t n, size_t *i, int base, int max, int exact,
                       unsigned long *ret)
{
    unsigned long v = 0;
    int k = 0;
    while (k < max && *i < n) {
        int d = hexval(s[*i]);
        if (d < 0 || d >= base)
            break;
        v = v * (unsigned long)base + (unsigned long)d;
        (*i)++;
        k++;
    }
    *ret = v;
    return k > 0 && (!exact || k == max);
}

/* One escape after a backslash at s[*i] (pointing past the backslash). */
static int decode_escape(const char *s, size_t n, size_t *i, int bytes, struct py_text *out)
{
    static const char simple_in[] = "\\'\"abfnrtv", simple_out[] = "\\'\"\a\b\f\n\r\t\v";
    char ch = s[(*i)++];
    const char *p = strchr(simple_in, ch);
    unsigned long cp;
    if (ch == '\n')
        return 1; /* backslash-newline: nothing */
    if (ch == '\r') {
        if (*i < n && s[*i] == '\n')
            (*i)++;
        return 1;
    }
    if (ch && p)
        return tx_putc(out, simple_out[p - simple_in]);
    if (ch >= '0' && ch <= '7') {
        (*i)--;
        return read_digits(s, n, i, 8, 3, 0, &cp) && tx_put_cp(out, cp);
    }
    if (ch == 'x')
        return read_digits(s, n, i, 16, 2, 1, &cp) && tx_put_cp(out, cp);
    if (!bytes && (ch == 'u' || ch == 'U'))
        return read_digits(s, n, i, 16, ch == 'u' ? 4 : 8, 1, &cp) && tx_put_cp(out, cp);
    if (!bytes && ch == 'N')
        return 0; /* \N{NAME}: would need the Unicode name table */
    return tx_putc(out, '\\') && tx_putc(out, ch);
}

/* Decode the text of a string_content (escapes unless raw; {{ }} in f-strings). */
static int decode_text(const char *s, size_t n, int raw, int fstr, int bytes, struct py_text *out)
{
    size_t i = 0;
    while (i < n) {
        char ch = s[i];
        if (fstr && (ch == '{' || ch == '}') && i + 1 < n && s[i + 1] == ch) {
            if (!tx_putc(out, ch))
                return 0;
            i += 2;
        } else if (ch == '\\' && !raw && i + 1 < n) {
            i++;
            if (!decode_escape(s, n, &i, bytes, out))
                return 0;
        } else {
            if (!tx_putc(out, ch))
                return 0;
            i++;
        }
    }
    return 1;
}

static int fold_interpolation(struct py_ctx *c, TSNode n, int32_t scope, int depth,
                              struct py_sbuf *out)
{
    /* only "{expr}": a conversion, a format spec or "=" do not fold */
    if (ts_node_child_count(n) != 3)
        return 0;
    TSNode e = ts_node_child_by_field_id(n, c->L->f.expression);
    struct py_sbuf part = {0};
    long long v;
    if (py_fold_str(c, e, scope, depth + 1, &part))
        return sb_put(out, part.s, part.n);
    if (py_fold_int(c, e, scope, depth + 1, &v)) {
        char num[32];
        int k = snprintf(num, sizeof(num), "%lld", v);
        return k > 0 && sb_put(out, num, (size_t)k);
    }
    return 0;
}

static int fold_string(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_sbuf *out)
{
    int raw = 0, fstr = 0, bytes = 0, ok = 1;
    TSTreeCursor *cur = py_cursor(c, n);
    if (!cur)
        return 0;
    for (int more = ts_tree_cursor_goto_first_child(cur); more && ok;
         more = ts_tree_cursor_goto_next_sibling(cur)) {
        TSNode k = ts_tree_cursor_current_node(cur);
        const char *t = c->src + ts_node_start_byte(k);
        size_t tl = ts_node_end_byte(k) - ts_node_start_byte(k);
        switch (py_kind(c, k)) {
        case PK_STRING_START:
            for (size_t i = 0; i < tl && t[i] != '\'' && t[i] != '"'; i++) {
                raw |= t[i] == 'r' || t[i] == 'R';
                fstr |= t[i] == 'f' || t[i] == 'F';
                bytes |= t[i] == 'b' || t[i] == 'B';
            }
            break;
        case PK_STRING_CONTENT: {
            struct py_text v = sb_view(out);
            ok = decode_text(t, tl, raw, fstr, bytes, &v);
            sb_sync(out, &v);
            break;
        }
        case PK_INTERPOLATION:
            ok = fstr && fold_interpolation(c, k, scope, depth, out);
            break;
        default:
            ok = ts_node_is_extra(k) || py_kind(c, k) == PK_STRING_END;
            break;
        }
    }
    py_cursor_done(c, cur);
    return ok;
}

static int fold_int_literal(const char *t, size_t n, long long *ret)
{
    long long v = 0;
    int base = 10;
    size_t i = 0;
    if (n > 2 && t[0] == '0' && strchr("xXoObB", t[1])) {
        base = (t[1] == 'x' || t[1] == 'X') ? 16 : (t[1] == 'o' || t[1] == 'O') ? 8 : 2;
        i = 2;
    }
    if (i >= n)
        return 0;
    for (; i < n; i++) {
        if (t[i] == '_')
            continue;
        int d = hexval(t[i]);
        if (d < 0 || d >= base)
            return 0; /* 1j, 10L and the like */
        v = v * base + d;
        if (v > FOLD_INT_MAX)
            return 0;
    }
    *ret = v;
    return 1;
}

/* The operator token of a binary/unary operator node as a short string. */
static int op_is(const struct py_ctx *c, TSNode n, const char *op)
{
    TSNode o = ts_node_child_by_field_id(n, c->L->f.operator);
    return !ts_node_is_null(o) && strcmp(sg_ts_type(o), op) == 0;
}

int py_fold_int(struct py_ctx *c, TSNode n, int32_t scope, int depth, long long *ret)
{
    const struct py_fields *f = &c->L->f;
    long long a, b;
    if (ts_node_is_null(n) || depth > PY_RESOLVE_DEPTH || !py_step(c))
        return 0;
    switch (py_kind(c, n)) {
    case PK_INTEGER:
        return fold_int_literal(c->src + ts_node_start_byte(n),
                                ts_node_end_byte(n) - ts_node_start_byte(n), ret);
    case PK_PAREN:
        return py_fold_int(c, py_first_expr(c, n), scope, depth + 1, ret);
    case PK_UNARY_OP:
        if (!py_fold_int(c, ts_node_child_by_field_id(n, f->argument), scope, depth + 1, &a))
            return 0;
        *ret = op_is(c, n, "-") ? -a : op_is(c, n, "+") ? a : ~a;
        return 1;
    case PK_BINARY_OP:
        if (!py_fold_int(c, ts_node_child_by_field_id(n, f->left), scope, depth + 1, &a) ||
            !py_fold_int(c, ts_node_child_by_field_id(n, f->right), scope, depth + 1, &b))
            return 0;
        if (op_is(c, n, "+"))
            *ret = a + b;
        else if (op_is(c, n, "-"))
            *ret = a - b;
        else if (op_is(c, n, "*"))
            *ret = a * b; /* |a|,|b| < 2^31: no overflow in 64 bits */
        else
            return 0;
        return *ret <= FOLD_INT_MAX && *ret >= -FOLD_INT_MAX;
    case PK_IDENTIFIER: {
        const char *name = py_name(c, n);
        const struct py_binding *bd =
            name ? py_lookup_single(c, name, scope, ts_node_start_byte(n)) : NULL;
        if (!bd || bd->busy)
            return 0;
        c->binds[bd - c->binds].busy = 1;
        int ok = py_fold_int(c, bd->value, bd->eval_scope, depth + 1, ret);
        c->binds[bd - c->binds].busy = 0;
        return ok;
    }
    default:
        return 0;
    }
}

/* '%s' % x and '%s%s' % (a, b): only %s, %d and %%. */
static int fold_percent(struct py_ctx *c, const struct py_sbuf *fmt, TSNode arg, int32_t scope,
                        int depth, struct py_sbuf *out)
{
    TSNode args[8];
    uint32_t nargs = 0, used = 0;
    TSNode a = arg;
    while (py_kind(c, a) == PK_PAREN && !ts_node_is_null(py_first_expr(c, a)))
        a = py_first_expr(c, a);
    if (py_kind(c, a) == PK_TUPLE) {
        uint32_t count = ts_node_named_child_count(a);
        for (uint32_t i = 0; i < count; i++) {
            TSNode k = ts_node_named_child(a, i);
            if (ts_node_is_extra(k))
                continue;
            if (nargs == 8)
                return 0;
            args[nargs++] = k;
        }
    } else {
        args[nargs++] = a;
    }
    for (size_t i = 0; i < fmt->n; i++) {
        if (fmt->s[i] != '%') {
            if (!sb_putc(out, fmt->s[i]))
                return 0;
            continue;
        }
        char spec = i + 1 < fmt->n ? fmt->s[++i] : 0;
        struct py_sbuf part = {0};
        long long v;
        if (spec == '%') {
            if (!sb_putc(out, '%'))
                return 0;
        } else if (spec == 's' && used < nargs &&
                   py_fold_str(c, args[used], scope, depth + 1, &part)) {
            used++;
            if (!sb_put(out, part.s, part.n))
                return 0;
        } else if ((spec == 's' || spec == 'd') && used < nargs &&
                   py_fold_int(c, args[used], scope, depth + 1, &v)) {
            used++;
            int k = snprintf(part.s, sizeof(part.s), "%lld", v);
            if (k <= 0 || !sb_put(out, part.s, (size_t)k))
                return 0;
        } else {
            return 0;
        }
    }
    return used == nargs;
}

static int fold_binary(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_sbuf *out)
{
    const struct py_fields *f = &c->L->f;
    TSNode l = ts_node_child_by_field_id(n, f->left), r = ts_node_child_by_field_id(n, f->right);
    struct py_sbuf a = {0}, b = {0};
    long long k;
    if (op_is(c, n, "+"))
        return py_fold_str(c, l, scope, depth + 1, &a) && py_fold_str(c, r, scope, depth + 1, &b) &&
               sb_put(out, a.s, a.n) && sb_put(out, b.s, b.n);
    if (op_is(c, n, "%"))
        return py_fold_str(c, l, scope, depth + 1, &a) && fold_percent(c, &a, r, scope, depth, out);
    if (!op_is(c, n, "*"))
        return 0;
    if (py_fold_str(c, l, scope, depth + 1, &a)) {
        if (!py_fold_int(c, r, scope, depth + 1, &k))
            return 0;
    } else if (!py_fold_int(c, l, scope, depth + 1, &k) ||
               !py_fold_str(c, r, scope, depth + 1, &a)) {
        return 0;
    }
    if (k > 0 && a.n > 0 && (unsigned long long)k > sizeof(out->s) / a.n)
        return 0;
    for (long long i = 0; i < k; i++)
        if (!sb_put(out, a.s, a.n))
            return 0;
    return 1;
}

static int is_ascii(const struct py_sbuf *b)
{
    for (size_t i = 0; i < b->n; i++)
        if ((unsigned char)b->s[i] & 0x80)
            return 0;
    return 1;
}

/* Python's slice indices for a sequence of len n. */
static long long clamp_index(long long v, long long n, long long step, int is_stop)
{
    if (v < 0)
        v += n;
    if (step > 0)
        return v < 0 ? 0 : v > n ? n : v;
    (void)is_stop;
    return v < -1 ? -1 : v > n - 1 ? n - 1 : v;
}

/* s[i] or s[a:b:k] of an ASCII constant. */
static int fold_index(struct py_ctx *c, const struct py_sbuf *s, TSNode key, int32_t scope,
                      int depth, struct py_sbuf *out)
{
    long long n = (long long)s->n, v[3] = {0, 0, 1};
    int given[3] = {0, 0, 0}, part = 0;
    if (!is_ascii(s))
        return 0;
    if (py_kind(c, key) != PK_SLICE) {
        if (!py_fold_int(c, key, scope, depth + 1, &v[0]))
            return 0;
        if (v[0] < 0)
            v[0] += n;
        return v[0] >= 0 && v[0] < n && sb_putc(out, s->s[v[0]]);
    }
    uint32_t count = ts_node_child_count(key);
    for (uint32_t i = 0; i < count; i++) {
        TSNode k = ts_node_child(key, i);
        if (!ts_node_is_named(k)) {
            part++; /* ':' */
            continue;
        }
        if (ts_node_is_extra(k))
            continue;
        if (part > 2 || !py_fold_int(c, k, scope, depth + 1, &v[part]))
            return 0;
        given[part] = 1;
    }
    long long step = given[2] ? v[2] : 1;
    if (step == 0)
        return 0;
    long long start = given[0] ? clamp_index(v[0], n, step, 0) : step > 0 ? 0 : n - 1;
    long long stop = given[1] ? clamp_index(v[1], n, step, 1) : step > 0 ? n : -1;
    for (long long i = start; step > 0 ? i < stop : i > stop; i += step)
        if (!sb_putc(out, s->s[i]))
            return 0;
    return 1;
}

/* The single builtin/import a callee names ("builtins.chr"), else NULL. */
static const char *callee_name(struct py_ctx *c, TSNode fn, int32_t scope, int depth)
{
    struct py_cands k = {0};
    py_resolve(c, fn, scope, depth + 1, &k);
    if (k.overflow || k.n != 1 || k.v[0].kind == PC_OPAQUE)
        return NULL;
    return k.v[0].s;
}

/* The elements of sep.join(...)'s argument: a literal list/tuple of
 * constants, map(chr, [ints]) or reversed(constant). */
static int fold_join_arg(struct py_ctx *c, const struct py_sbuf *sep, TSNode arg, int32_t scope,
                         int depth, struct py_sbuf *out)
{
    enum py_kind k = py_kind(c, arg);
    int unknown, by_chr = 0;
    if (k == PK_CALL) {
        const char *fn =
            callee_name(c, ts_node_child_by_field_id(arg, c->L->f.function), scope, depth);
        TSNode a0 = py_call_arg(c, arg, 0, NULL, &unknown);
        struct py_sbuf s = {0};
        if (fn && !strcmp(fn, "builtins.reversed") && py_fold_str(c, a0, scope, depth + 1, &s) &&
            is_ascii(&s)) {
            for (size_t i = s.n; i > 0; i--)
                if ((i < s.n && !sb_put(out, sep->s, sep->n)) || !sb_putc(out, s.s[i - 1]))
                    return 0;
            return 1;
        }
        if (!fn || strcmp(fn, "builtins.map") || !(fn = callee_name(c, a0, scope, depth)) ||
            strcmp(fn, "builtins.chr"))
            return 0;
        by_chr = 1;
        arg = py_call_arg(c, arg, 1, NULL, &unknown);
        k = py_kind(c, arg);
    }
    if (k != PK_LIST && k != PK_TUPLE)
        return 0;
    uint32_t count = ts_node_named_child_count(arg), done = 0;
    for (uint32_t i = 0; i < count; i++) {
        TSNode e = ts_node_named_child(arg, i);
        struct py_sbuf part = {0};
        long long v;
        if (ts_node_is_extra(e))
            continue;
        if ((done++ && !sb_put(out, sep->s, sep->n)) ||
            !(by_chr ? py_fold_int(c, e, scope, depth + 1, &v) && v >= 0 &&
                           sb_put_cp(out, (unsigned long)v)
                     : py_fold_str(c, e, scope, depth + 1, &part) && sb_put(out, part.s, part.n)))
            return 0;
    }
    return 1;
}

/* s.lower(), s.upper(), s.strip() (how = 'l', 'u', 's') as Python computes
 * them, or not at all: ASCII only (Python also maps and strips non-ASCII
 * characters: '\u017f'.upper() is 'S', U+00A0 is stripped) and without
 * arguments (strip('x') strips other characters). */
static int fold_case(struct py_ctx *c, TSNode call, char how, const struct py_sbuf *s,
                     struct py_sbuf *out)
{
    TSNode args = ts_node_child_by_field_id(call, c->L->f.arguments);
    if (!is_ascii(s) || ts_node_is_null(args) || ts_node_named_child_count(args) != 0)
        return 0;
    size_t lo = 0, hi = s->n;
    while (how == 's' && lo < hi && s->s[lo] && strchr(PY_ASCII_SPACE, s->s[lo]))
        lo++;
    while (how == 's' && hi > lo && s->s[hi - 1] && strchr(PY_ASCII_SPACE, s->s[hi - 1]))
        hi--;
    for (size_t i = lo; i < hi; i++) {
        char ch = s->s[i];
        if (how == 'l' && ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (how == 'u' && ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        if (!sb_putc(out, ch))
            return 0;
    }
    return 1;
}

/* Methods of a constant string: join, lower, upper, strip, replace, decode. */
static int fold_method(struct py_ctx *c, TSNode call, TSNode fn, int32_t scope, int depth,
                       struct py_sbuf *out)
{
    const struct py_fields *f = &c->L->f;
    const char *m = py_name(c, ts_node_child_by_field_id(fn, f->attribute));
    TSNode obj = ts_node_child_by_field_id(fn, f->object);
    struct py_sbuf s = {0}, a = {0}, b = {0};
    int unknown;
    TSNode a0 = py_call_arg(c, call, 0, NULL, &unknown),
           a1 = py_call_arg(c, call, 1, NULL, &unknown);
    if (!m)
        return 0;
    if (!strcmp(m, "fromhex")) {
        const char *t = callee_name(c, obj, scope, depth);
        if (!t || (strcmp(t, "builtins.bytes") && strcmp(t, "builtins.bytearray")) ||
            !py_fold_str(c, a0, scope, depth + 1, &s))
            return 0;
        for (size_t i = 0; i < s.n; i++) {
            if (s.s[i] == ' ')
                continue;
            if (i + 1 >= s.n || hexval(s.s[i]) < 0 || hexval(s.s[i + 1]) < 0 ||
                !sb_putc(out, (char)(hexval(s.s[i]) * 16 + hexval(s.s[i + 1]))))
                return 0;
            i++;
        }
        return 1;
    }
    if (!py_fold_str(c, obj, scope, depth + 1, &s))
        return 0;
    if (!strcmp(m, "join"))
        return fold_join_arg(c, &s, a0, scope, depth, out);
    if (!strcmp(m, "decode") || !strcmp(m, "encode"))
        return sb_put(out, s.s, s.n);
    if (!strcmp(m, "lower") || !strcmp(m, "upper") || !strcmp(m, "strip"))
        return fold_case(c, call, m[0], &s, out);
    if (!strcmp(m, "replace") && py_fold_str(c, a0, scope, depth + 1, &a) && a.n > 0 &&
        py_fold_str(c, a1, scope, depth + 1, &b)) {
        for (size_t i = 0; i < s.n;) {
            int hit = i + a.n <= s.n && !memcmp(s.s + i, a.s, a.n);
            if (!(hit ? sb_put(out, b.s, b.n) : sb_putc(out, s.s[i])))
                return 0;
            i += hit ? a.n : 1;
        }
        return 1;
    }
    return 0;
}

static int fold_call(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_sbuf *out)
{
    TSNode fn = ts_node_child_by_field_id(n, c->L->f.function);
    int unknown;
    TSNode a0 = py_call_arg(c, n, 0, NULL, &unknown);
    long long v;
    if (py_kind(c, fn) == PK_ATTRIBUTE)
        return fold_method(c, n, fn, scope, depth, out);
    const char *name = callee_name(c, fn, scope, depth);
    if (!name)
        return 0;
    if (!strcmp(name, "builtins.chr"))
        return py_fold_int(c, a0, scope, depth + 1, &v) && v >= 0 &&
               sb_put_cp(out, (unsigned long)v);
    if (!strcmp(name, "builtins.str"))
        return py_fold_str(c, a0, scope, depth + 1, out);
    return 0;
}

typedef int (*fold_fn)(struct py_ctx *c, TSNode n, int32_t scope, int depth, void *out);

/* fn over each part of an implicit concatenation ("a" "b"), appending. */
static int fold_parts(struct py_ctx *c, TSNode n, int32_t scope, int depth, fold_fn fn, void *out)
{
    uint32_t count = ts_node_named_child_count(n);
    int ok = 1;
    for (uint32_t i = 0; i < count && ok; i++) {
        TSNode k = ts_node_named_child(n, i);
        ok = ts_node_is_extra(k) || fn(c, k, scope, depth + 1, out);
    }
    return ok;
}

/* fn over the value of identifier n when it is assigned exactly once (and
 * that value is not being folded already: `a = a + "x"`). */
static int fold_binding(struct py_ctx *c, TSNode n, int32_t scope, int depth, fold_fn fn, void *out)
{
    const char *name = py_name(c, n);
    const struct py_binding *bd =
        name ? py_lookup_single(c, name, scope, ts_node_start_byte(n)) : NULL;
    if (!bd || bd->busy)
        return 0;
    c->binds[bd - c->binds].busy = 1;
    int ok = fn(c, bd->value, bd->eval_scope, depth + 1, out);
    c->binds[bd - c->binds].busy = 0;
    return ok;
}

static int fold_str_fn(struct py_ctx *c, TSNode n, int32_t scope, int depth, void *out)
{
    return py_fold_str(c, n, scope, depth, out);
}

int py_fold_str(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_sbuf *out)
{
    const struct py_fields *f = &c->L->f;
    int ok = 0;
    if (ts_node_is_null(n) || depth > PY_RESOLVE_DEPTH || !py_step(c))
        return 0;
    size_t mark = out->n;
    switch (py_kind(c, n)) {
    case PK_STRING:
        ok = fold_string(c, n, scope, depth, out);
        break;
    case PK_CONCAT_STRING:
        ok = fold_parts(c, n, scope, depth, fold_str_fn, out);
        break;
    case PK_PAREN:
        ok = py_fold_str(c, py_first_expr(c, n), scope, depth + 1, out);
        break;
    case PK_BINARY_OP:
        ok = fold_binary(c, n, scope, depth, out);
        break;
    case PK_CALL:
        ok = fold_call(c, n, scope, depth, out);
        break;
    case PK_SUBSCRIPT: {
        struct py_sbuf s = {0};
        ok = py_fold_str(c, ts_node_child_by_field_id(n, f->value), scope, depth + 1, &s) &&
             fold_index(c, &s, ts_node_child_by_field_id(n, f->subscript), scope, depth, out);
        break;
    }
    case PK_IDENTIFIER:
        ok = fold_binding(c, n, scope, depth, fold_str_fn, out);
        break;
    default:
        break;
    }
    if (!ok) {
        out->n = mark;
        out->s[mark] = '\0';
    }
    return ok;
}

/* A string literal's text, decoded; an f-string only when it folds. */
static int text_string(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_text *out)
{
    struct py_sbuf small = {0};
    int raw = 0, ok = 1;
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count && ok; i++) {
        TSNode k = ts_node_child(n, i);
        const char *t = c->src + ts_node_start_byte(k);
        size_t tl = ts_node_end_byte(k) - ts_node_start_byte(k);
        switch (py_kind(c, k)) {
        case PK_STRING_START:
            for (size_t j = 0; j < tl && t[j] != '\'' && t[j] != '"'; j++) {
                if (t[j] == 'f' || t[j] == 'F' || t[j] == 'b' || t[j] == 'B')
                    return py_fold_str(c, n, scope, depth, &small) && tx_put(out, small.s, small.n);
                raw |= t[j] == 'r' || t[j] == 'R';
            }
            break;
        case PK_STRING_CONTENT:
            ok = decode_text(t, tl, raw, 0, 0, out);
            break;
        default:
            ok = ts_node_is_extra(k) || py_kind(c, k) == PK_STRING_END;
            break;
        }
    }
    return ok;
}

/* textwrap.dedent(T), T.strip(), T.lstrip(), T.rstrip(): T. */
static int text_call(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_text *out)
{
    TSNode fn = ts_node_child_by_field_id(n, c->L->f.function);
    TSNode args = ts_node_child_by_field_id(n, c->L->f.arguments);
    uint32_t nargs = ts_node_is_null(args) ? 0 : ts_node_named_child_count(args);
    const char *m = py_kind(c, fn) == PK_ATTRIBUTE
                        ? py_name(c, ts_node_child_by_field_id(fn, c->L->f.attribute))
                        : NULL;
    if (m && nargs == 0 && (!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip")))
        return py_template_text(c, ts_node_child_by_field_id(fn, c->L->f.object), scope, depth + 1,
                                out);
    const char *name = callee_name(c, fn, scope, depth);
    TSNode a0 = nargs == 1 ? ts_node_named_child(args, 0) : (TSNode){0};
    if (!name || strcmp(name, "textwrap.dedent") || ts_node_is_null(a0) ||
        py_kind(c, a0) == PK_KEYWORD_ARGUMENT || py_kind(c, a0) == PK_LIST_SPLAT ||
        py_kind(c, a0) == PK_DICT_SPLAT)
        return 0;
    return py_template_text(c, a0, scope, depth + 1, out);
}

static int text_string_fn(struct py_ctx *c, TSNode n, int32_t scope, int depth, void *out)
{
    return text_string(c, n, scope, depth, out);
}

static int template_fn(struct py_ctx *c, TSNode n, int32_t scope, int depth, void *out)
{
    return py_template_text(c, n, scope, depth, out);
}

int py_template_text(struct py_ctx *c, TSNode n, int32_t scope, int depth, struct py_text *out)
{
    struct py_sbuf small = {0};
    int ok = 0;
    if (ts_node_is_null(n) || depth > PY_RESOLVE_DEPTH || !py_step(c))
        return 0;
    size_t mark = out->n;
    switch (py_kind(c, n)) {
    case PK_STRING:
        ok = text_string(c, n, scope, depth, out);
        break;
    case PK_CONCAT_STRING:
        ok = fold_parts(c, n, scope, depth, text_string_fn, out);
        break;
    case PK_PAREN:
        ok = py_template_text(c, py_first_expr(c, n), scope, depth + 1, out);
        break;
    case PK_CALL:
        ok = text_call(c, n, scope, depth, out) ||
             (py_fold_str(c, n, scope, depth, &small) && tx_put(out, small.s, small.n));
        break;
    case PK_IDENTIFIER:
        ok = fold_binding(c, n, scope, depth, template_fn, out);
        break;
    default:
        ok = py_fold_str(c, n, scope, depth, &small) && tx_put(out, small.s, small.n);
        break;
    }
    if (!ok) {
        out->n = mark;
        out->s[mark] = '\0';
    }
    return ok;
}

static int is_word_start(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || (ch & 0x80);
}

static int is_word_char(char ch)
{
    return is_word_start(ch) || (ch >= '0' && ch <= '9');
}

void py_format_fields(struct py_ctx *c, const char *s, size_t n, py_text_fn fn, void *ud)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '{')
            continue;
        if (i + 1 < n && s[i + 1] == '{') {
            i++;
            continue;
        }
        /* field_name: arg_name ("." attribute | "[" key "]")* */
        size_t j = i + 1;
        while (j < n && !strchr(".[!:{}", s[j]))
            j++;
        while (j < n && (s[j] == '.' || s[j] == '[')) {
            char end = s[j] == '.' ? 0 : ']';
            size_t a = ++j;
            while (j < n && (end ? s[j] != ']' : !strchr(".[!:{}", s[j])))
                j++;
            fn(c, s + a, j - a, ud);
            if (end && j < n)
                j++;
        }
        i = j - 1; /* nested fields in a format spec are scanned too */
    }
}

void py_words(struct py_ctx *c, const char *s, size_t n, py_text_fn fn, void *ud)
{
    for (size_t i = 0; i < n;) {
        if (!is_word_start(s[i]) || (i > 0 && is_word_char(s[i - 1]))) {
            i++;
            continue;
        }
        size_t a = i;
        while (i < n && is_word_char(s[i]))
            i++;
        fn(c, s + a, i - a, ud);
    }
}
