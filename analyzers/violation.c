/* violation.c - violation lists, positions in code points, safe snippets. */
#include "violation.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

#include "rules.h"

/* U+FFFD REPLACEMENT CHARACTER stands in for whatever must not reach a
 * terminal or a JSON string: invalid UTF-8, control characters and the
 * invisible reordering characters the canonicaliser rejects. */
static const char replacement[] = "\xEF\xBF\xBD";

static int is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Code points in s[0..n): every byte that does not continue a sequence. */
static uint32_t count_code_points(const char *s, size_t n)
{
    uint32_t cps = 0;
    for (size_t i = 0; i < n; i++)
        cps += !is_cont((unsigned char)s[i]);
    return cps;
}

/* Advance from a known (pos, line, line_start) to `to`, counting '\n'. */
static void walk_lines(const char *src, size_t to, size_t *pos, uint32_t *line, size_t *line_start)
{
    const char *p = src + *pos, *end = src + to;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        (*line)++;
        *line_start = (size_t)(nl - src) + 1;
        p = nl + 1;
    }
    *pos = to;
}

void sg_span_from_bytes(const char *src, size_t len, size_t start_byte, size_t end_byte,
                        struct sg_span *ret_span)
{
    if (start_byte > len)
        start_byte = len;
    if (end_byte > len)
        end_byte = len;
    if (end_byte < start_byte)
        end_byte = start_byte;
    size_t pos = 0, line_start = 0;
    uint32_t line = 1;
    walk_lines(src, start_byte, &pos, &line, &line_start);
    ret_span->start_byte = start_byte;
    ret_span->line = line;
    ret_span->column = 1 + count_code_points(src + line_start, start_byte - line_start);
    walk_lines(src, end_byte, &pos, &line, &line_start);
    ret_span->end_byte = end_byte;
    ret_span->end_line = line;
    ret_span->end_column = 1 + count_code_points(src + line_start, end_byte - line_start);
}

/* Characters a snippet or message never carries verbatim: C0 controls but
 * tab, DEL, C1 controls, U+2028/U+2029 and the bidi controls. */
static int is_unsafe_cp(ucs4_t c)
{
    return (c < 0x20 && c != '\t') || (c >= 0x7F && c < 0xA0) || c == 0x2028 || c == 0x2029 ||
           (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

size_t sg_text_sanitize(const char *s, size_t n, int stop_at_eol, char *out, size_t outsz)
{
    size_t o = 0, i = 0;
    if (outsz == 0)
        return 0;
    while (i < n) {
        ucs4_t c;
        int k = u8_mbtoucr(&c, (const uint8_t *)s + i, n - i);
        if (stop_at_eol && (s[i] == '\n' || s[i] == '\r'))
            break;
        const char *piece = s + i;
        size_t plen = (size_t)k;
        if (k < 0 || is_unsafe_cp(c)) {
            piece = replacement;
            plen = sizeof(replacement) - 1;
            /* skip one byte of an invalid sequence, the whole of a valid one */
            k = k < 0 ? 1 : k;
        }
        if (o + plen + 1 > outsz)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += (size_t)k;
    }
    out[o] = '\0';
    return o;
}

static int violations_reserve(struct sg_violations *vs)
{
    if (vs->count < vs->cap)
        return 0;
    size_t ncap = vs->cap ? vs->cap * 2 : 4;
    if (ncap > SG_VIOLATIONS_MAX)
        ncap = SG_VIOLATIONS_MAX;
    struct sg_violation *p = realloc(vs->items, ncap * sizeof(*p));
    if (!p)
        return -ENOMEM;
    vs->items = p;
    vs->cap = ncap;
    return 0;
}

static int violations_vadd(struct sg_violations *vs, const char *rule, const struct sg_span *span,
                           const char *src, size_t src_len, const char *fmt, va_list ap)
    __attribute__((format(printf, 6, 0)));

static int violations_vadd(struct sg_violations *vs, const char *rule, const struct sg_span *span,
                           const char *src, size_t src_len, const char *fmt, va_list ap)
{
    char raw[SG_VIOLATION_MSG_MAX], msg[SG_VIOLATION_MSG_MAX], snip[SG_SNIPPET_MAX + 1];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    sg_text_sanitize(raw, strlen(raw), 0, msg, sizeof(msg));
    size_t s0 = span->start_byte < src_len ? span->start_byte : src_len;
    size_t s1 = span->end_byte < src_len ? span->end_byte : src_len;
    if (s1 < s0)
        s1 = s0;
    sg_text_sanitize(src ? src + s0 : "", src ? s1 - s0 : 0, 1, snip, sizeof(snip));
    int r = violations_reserve(vs);
    if (r < 0)
        return r;
    struct sg_violation *v = &vs->items[vs->count];
    v->message = strdup(msg);
    v->snippet = strdup(snip);
    if (!v->message || !v->snippet) {
        free(v->message);
        free(v->snippet);
        return -ENOMEM;
    }
    v->rule = rule;
    v->severity = SG_SEVERITY_ERROR;
    v->line = span->line;
    v->column = span->column;
    v->end_line = span->end_line;
    v->end_column = span->end_column;
    vs->count++;
    return 0;
}

int sg_violations_add(struct sg_violations *vs, const char *rule, const struct sg_span *span,
                      const char *src, size_t src_len, const char *fmt, ...)
{
    if (vs->count >= SG_VIOLATIONS_MAX) {
        vs->dropped++;
        return 0;
    }
    va_list ap;
    va_start(ap, fmt);
    int r = violations_vadd(vs, rule, span, src, src_len, fmt, ap);
    va_end(ap);
    return r;
}

int sg_violations_add_at(struct sg_violations *vs, const char *rule, const char *src,
                         size_t src_len, size_t start_byte, size_t end_byte, const char *fmt, ...)
{
    /* Past the cap nothing is stored, so the O(n) position walk is skipped:
     * a hostile file with 100k violations costs one counter increment each. */
    if (vs->count >= SG_VIOLATIONS_MAX) {
        vs->dropped++;
        return 0;
    }
    struct sg_span span;
    sg_span_from_bytes(src, src_len, start_byte, end_byte, &span);
    va_list ap;
    va_start(ap, fmt);
    int r = violations_vadd(vs, rule, &span, src, src_len, fmt, ap);
    va_end(ap);
    return r;
}

static json_t *violation_to_json(const struct sg_violation *v)
{
    return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:s}", "rule", v->rule, "severity",
                     v->severity, "message", v->message, "line", (json_int_t)v->line, "column",
                     (json_int_t)v->column, "end_line", (json_int_t)v->end_line, "end_column",
                     (json_int_t)v->end_column, "snippet", v->snippet);
}

json_t *sg_violations_to_json(const struct sg_violations *vs)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (size_t i = 0; vs && i < vs->count; i++) {
        json_t *o = violation_to_json(&vs->items[i]);
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

void sg_violations_free(struct sg_violations *vs)
{
    if (!vs)
        return;
    for (size_t i = 0; i < vs->count; i++) {
        free(vs->items[i].message);
        free(vs->items[i].snippet);
    }
    free(vs->items);
    vs->items = NULL;
    vs->count = vs->cap = vs->dropped = 0;
}
