/* js_lex.c - decoding JavaScript identifiers and literal bodies (js_lex.h). */
#include "js_lex.h"

#include <stdlib.h>
#include <string.h>
#include <unicase.h>

#define CP_MAX 0x10FFFFu

void js_str_clear(struct js_str *s)
{
    s->len = 0;
    s->truncated = 0;
    s->pending_hi = 0;
    s->buf[0] = '\0';
}

static void put_bytes(struct js_str *s, const char *p, size_t n)
{
    size_t room = JS_STR_MAX - 1 - s->len;
    if (n > room) {
        n = room;
        s->truncated = 1;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

/* Encode without surrogate pairing (WTF-8 for lone surrogates). */
static void put_cp(struct js_str *s, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    put_bytes(s, b, n);
}

static void flush_pending(struct js_str *s)
{
    if (s->pending_hi) {
        uint32_t hi = s->pending_hi;
        s->pending_hi = 0;
        put_cp(s, hi);
    }
}

/* "\uD83D\uDE00" is one code point in a JS string: pair surrogates that
 * arrive as separate escapes. */
void js_str_append_cp(struct js_str *s, uint32_t cp)
{
    if (cp >= 0xDC00 && cp <= 0xDFFF && s->pending_hi) {
        uint32_t full = 0x10000 + ((s->pending_hi - 0xD800) << 10) + (cp - 0xDC00);
        s->pending_hi = 0;
        put_cp(s, full);
        return;
    }
    flush_pending(s);
    if (cp >= 0xD800 && cp <= 0xDBFF)
        s->pending_hi = cp;
    else
        put_cp(s, cp);
}

void js_str_append(struct js_str *s, const char *p, size_t n)
{
    if (n == 0)
        return; /* a surrogate pair may still be completing */
    flush_pending(s);
    put_bytes(s, p, n);
}

void js_str_flush(struct js_str *s)
{
    flush_pending(s);
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parse `count` hex digits at p (bounded by end). Returns the value or -1. */
static long parse_hex_fixed(const char *p, const char *end, int count)
{
    long v = 0;
    if (end - p < count)
        return -1;
    for (int i = 0; i < count; i++) {
        int h = hex_val(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* After "\u" at *pp: HHHH or {H+}. Advances *pp; returns the code point or
 * -1 (the caller then takes the text literally, which V8 would reject). */
static long parse_unicode_escape(const char **pp, const char *end)
{
    const char *p = *pp;
    if (p < end && *p == '{') {
        long v = 0;
        const char *q = p + 1;
        for (; q < end && *q != '}'; q++) {
            int h = hex_val(*q);
            if (h < 0)
                return -1;
            v = v * 16 + h;
            if (v > (long)CP_MAX)
                return -1;
        }
        if (q >= end || q == p + 1)
            return -1;
        *pp = q + 1;
        return v;
    }
    long v = parse_hex_fixed(p, end, 4);
    if (v >= 0)
        *pp = p + 4;
    return v;
}

/* Legacy octal escape: \0-\377 (up to three digits when the first is 0-3,
 * else two). *pp points at the first digit. */
static uint32_t parse_octal(const char **pp, const char *end)
{
    const char *p = *pp;
    int max = (*p <= '3') ? 3 : 2;
    uint32_t v = 0;
    for (int i = 0; i < max && p < end && *p >= '0' && *p <= '7'; i++, p++)
        v = v * 8 + (uint32_t)(*p - '0');
    *pp = p;
    return v;
}

static int simple_escape(char c, char *ret)
{
    static const char from[] = "btnvfr", to[] = "\b\t\n\v\f\r";
    const char *f = memchr(from, c, sizeof(from) - 1);
    if (!f || c == '\0')
        return 0;
    *ret = to[f - from];
    return 1;
}

/* One escape sequence; *pp points after the backslash. */
static void decode_escape(struct js_str *s, const char **pp, const char *end)
{
    const char *p = *pp;
    char c = *p, simple;
    long v;
    if (c == '\n') {
        *pp = p + 1;
    } else if (c == '\r') {
        *pp = p + 1 + (p + 1 < end && p[1] == '\n');
    } else if (end - p >= 3 && memcmp(p, "\xE2\x80\xA8", 3) == 0) {
        *pp = p + 3; /* U+2028 line continuation */
    } else if (end - p >= 3 && memcmp(p, "\xE2\x80\xA9", 3) == 0) {
        *pp = p + 3; /* U+2029 line continuation */
    } else if (simple_escape(c, &simple)) {
        js_str_append(s, &simple, 1);
        *pp = p + 1;
    } else if (c >= '0' && c <= '7') {
        js_str_append_cp(s, parse_octal(&p, end));
        *pp = p;
    } else if (c == 'x' && (v = parse_hex_fixed(p + 1, end, 2)) >= 0) {
        js_str_append_cp(s, (uint32_t)v);
        *pp = p + 3;
    } else if (c == 'u' && (p++, v = parse_unicode_escape(&p, end)) >= 0) {
        js_str_append_cp(s, (uint32_t)v);
        *pp = p;
    } else {
        /* Any other character stands for itself (a whole UTF-8 sequence). */
        size_t n = 1;
        p = *pp;
        while (p + n < end && ((unsigned char)p[n] & 0xC0) == 0x80)
            n++;
        js_str_append(s, *pp, n);
        *pp += n;
    }
}

void js_str_append_cooked(struct js_str *s, const char *src, size_t n, int template)
{
    const char *p = src, *end = src + n;
    while (p < end) {
        const char *q = p;
        while (q < end && *q != '\\' && !(template && *q == '\r'))
            q++;
        if (q > p)
            js_str_append(s, p, (size_t)(q - p));
        if (q >= end)
            break;
        if (*q == '\r') {
            js_str_append(s, "\n", 1);
            p = q + 1 + (q + 1 < end && q[1] == '\n');
            continue;
        }
        p = q + 1;
        if (p >= end) {
            js_str_append(s, "\\", 1);
            break;
        }
        decode_escape(s, &p, end);
    }
    flush_pending(s);
}

void js_decode_identifier(const char *src, size_t n, struct js_str *s)
{
    const char *p = src, *end = src + n;
    js_str_clear(s);
    while (p < end) {
        const char *q = memchr(p, '\\', (size_t)(end - p));
        if (!q) {
            js_str_append(s, p, (size_t)(end - p));
            break;
        }
        js_str_append(s, p, (size_t)(q - p));
        p = q + 1;
        long v = -1;
        if (p < end && *p == 'u') {
            p++;
            v = parse_unicode_escape(&p, end);
        }
        if (v < 0) {
            /* Not an escape V8 accepts in a name: keep the text, it cannot
             * match an ASCII policy name and V8 rejects the program. */
            js_str_append(s, q, (size_t)(p - q));
            continue;
        }
        js_str_append_cp(s, (uint32_t)v);
    }
    flush_pending(s);
}

int js_str_casemap(struct js_str *s, size_t from, int upper)
{
    uint8_t out[JS_STR_MAX];
    size_t outlen = sizeof(out);
    if (from > s->len)
        return -1;
    const uint8_t *in = (const uint8_t *)s->buf + from;
    uint8_t *r = upper ? u8_toupper(in, s->len - from, NULL, NULL, out, &outlen)
                       : u8_tolower(in, s->len - from, NULL, NULL, out, &outlen);
    if (!r)
        return -1;
    s->len = from;
    s->buf[from] = '\0';
    js_str_append(s, (const char *)r, outlen);
    if (r != out)
        free(r);
    return 0;
}

int js_is_dunder(const char *s, size_t n)
{
    return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';
}
