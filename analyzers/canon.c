/* canon.c - reject bytes a parser and the runtime could read differently.
 *
 * Nothing is rewritten: the gateway forwards exactly the bytes it checked.
 * Each rule is reported once, at its first occurrence; the violations are
 * appended in source order.
 */
#include "canon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>
#include <uninorm.h>

#include "rules.h"

enum canon_rule { C_UTF8, C_NUL, C_CR, C_COOKIE, C_LSEP, C_BIDI, C_MIXED, C_COUNT };

#define NOT_FOUND ((size_t)-1)

struct finding {
    size_t at, end;
};

/* First CR not followed by LF, or NOT_FOUND. */
static size_t find_lone_cr(const char *src, size_t len)
{
    const char *p = src, *end = src + len;
    while (p < end && (p = memchr(p, '\r', (size_t)(end - p)))) {
        if (p + 1 == end || p[1] != '\n')
            return (size_t)(p - src);
        p += 2;
    }
    return NOT_FOUND;
}

/* U+2028/U+2029 are E2 80 A8/A9; the bidi controls U+202A..U+202E are
 * E2 80 AA..AE and U+2066..U+2069 are E2 81 A6..A9. Byte patterns suffice:
 * in valid UTF-8 an E2 lead byte always starts a character. */
static void find_e2_chars(const char *src, size_t len, struct finding *lsep, struct finding *bidi)
{
    const unsigned char *s = (const unsigned char *)src, *p = s, *end = s + len;
    while (p + 2 < end && (p = memchr(p, 0xE2, (size_t)(end - p - 2)))) {
        unsigned char b1 = p[1], b2 = p[2];
        size_t at = (size_t)(p - s);
        if (b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9) && lsep->at == NOT_FOUND)
            *lsep = (struct finding){at, at + 3};
        if (((b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) ||
             (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) &&
            bidi->at == NOT_FOUND)
            *bidi = (struct finding){at, at + 3};
        if (lsep->at != NOT_FOUND && bidi->at != NOT_FOUND)
            return;
        p++;
    }
}

static int lower_ascii(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The encodings CPython decodes as UTF-8: "utf-8", "utf8", "utf-8-sig",
 * case-insensitive, '_' standing for '-'. */
static int is_utf8_name(const char *s, size_t n)
{
    static const char *const ok[] = {"utf-8", "utf8", "utf-8-sig"};
    char norm[16];
    if (n >= sizeof(norm))
        return 0;
    for (size_t i = 0; i < n; i++)
        norm[i] = s[i] == '_' ? '-' : (char)lower_ascii((unsigned char)s[i]);
    norm[n] = '\0';
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(norm, ok[i]) == 0)
            return 1;
    return 0;
}

static int cookie_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

/* CPython's get_coding_spec on one line s[0..n): the line must be a
 * comment; the first "coding" followed by ':' or '=', blanks, and at least
 * one name character gives the encoding. Returns 1 and the name's range when
 * the line declares an encoding other than UTF-8. */
static int bad_cookie_in_line(const char *s, size_t n, struct finding *ret)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\f'))
        i++;
    if (i >= n || s[i] != '#')
        return 0;
    for (; i + 6 < n; i++) {
        if (memcmp(s + i, "coding", 6) != 0 || (s[i + 6] != ':' && s[i + 6] != '='))
            continue;
        size_t b = i + 7;
        while (b < n && (s[b] == ' ' || s[b] == '\t'))
            b++;
        size_t e = b;
        while (e < n && cookie_char(s[e]))
            e++;
        if (e == b)
            continue;
        if (is_utf8_name(s + b, e - b))
            return 0;
        *ret = (struct finding){b, e};
        return 1;
    }
    return 0;
}

/* PEP 263: a cookie counts on line 1 or 2. CPython reads line 2's only when
 * line 1 is blank or a comment; checking line 2 always is stricter and
 * never lets a real cookie through. */
static void find_bad_cookie(const char *src, size_t len, struct finding *ret)
{
    size_t start = len >= 3 && memcmp(src, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    for (int line = 0; line < 2 && start < len; line++) {
        const char *nl = memchr(src + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - src) : len;
        struct finding f;
        if (bad_cookie_in_line(src + start, end - start, &f)) {
            *ret = (struct finding){start + f.at, start + f.end};
            return;
        }
        if (!nl)
            return;
        start = end + 1;
    }
}

/* The first tab that follows a space in the leading blanks of a line that
 * holds code (not blank, not only a comment: both parsers ignore the
 * indentation of those; a form feed starts the indentation afresh, as in
 * CPython). tree-sitter-python advances a tab to a fixed width while CPython
 * advances to the next multiple of 8 and raises TabError only for some of
 * the ambiguous cases, so the two can put such a line in different blocks.
 * Continuation and string lines are checked too: bytes cannot tell them
 * apart, and rejecting more is safe. */
static void find_mixed_indent(const char *src, size_t len, struct finding *ret)
{
    for (size_t i = 0; i < len;) {
        size_t tab = NOT_FOUND;
        int space = 0;
        for (; i < len && (src[i] == ' ' || src[i] == '\t' || src[i] == '\f'); i++) {
            if (src[i] == '\f')
                space = 0;
            else if (src[i] == ' ')
                space = 1;
            else if (space && tab == NOT_FOUND)
                tab = i;
        }
        if (tab != NOT_FOUND && i < len && src[i] != '\n' && src[i] != '\r' && src[i] != '#') {
            *ret = (struct finding){tab, tab + 1};
            return;
        }
        const char *nl = i < len ? memchr(src + i, '\n', len - i) : NULL;
        if (!nl)
            return;
        i = (size_t)(nl - src) + 1;
    }
}

static void find_all(enum sg_lang lang, const char *src, size_t len, struct finding f[C_COUNT])
{
    for (int i = 0; i < C_COUNT; i++)
        f[i] = (struct finding){NOT_FOUND, NOT_FOUND};
    const uint8_t *bad = u8_check((const uint8_t *)src, len);
    if (bad) {
        size_t at = (size_t)((const char *)bad - src);
        f[C_UTF8] = (struct finding){at, at + 1};
    }
    const char *nul = memchr(src, '\0', len);
    if (nul)
        f[C_NUL] = (struct finding){(size_t)(nul - src), (size_t)(nul - src) + 1};
    size_t cr = find_lone_cr(src, len);
    if (cr != NOT_FOUND)
        f[C_CR] = (struct finding){cr, cr + 1};
    if (lang == SG_LANG_PYTHON) {
        find_bad_cookie(src, len, &f[C_COOKIE]);
        find_mixed_indent(src, len, &f[C_MIXED]);
    }
    find_e2_chars(src, len, &f[C_LSEP], &f[C_BIDI]);
}

static const char *const rule_ids[C_COUNT] = {
    [C_UTF8] = SG_RULE_INVALID_UTF8,
    [C_NUL] = SG_RULE_NUL_BYTE,
    [C_CR] = SG_RULE_LONE_CR,
    [C_COOKIE] = SG_RULE_CODING_COOKIE,
    [C_LSEP] = SG_RULE_LINE_SEPARATOR,
    [C_BIDI] = SG_RULE_BIDI_CONTROL,
    [C_MIXED] = SG_RULE_MIXED_INDENTATION,
};

static const char *const messages[C_COUNT] = {
    [C_UTF8] = "source is not valid UTF-8",
    [C_NUL] = "source contains a NUL byte",
    [C_CR] = "carriage return not followed by a line feed (parsers disagree on lone CR)",
    [C_COOKIE] = NULL, /* formatted with the name */
    [C_LSEP] = "U+2028/U+2029 line or paragraph separator in source",
    [C_BIDI] = "bidirectional control character in source (Trojan Source)",
    /* NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one message in two literals */
    [C_MIXED] = "tab after a space in indentation (the parser and Python can read different "
                "blocks; indent with spaces only, or tabs only)",
};

int sg_canon_check(enum sg_lang lang, const char *src, size_t len, struct sg_violations *out)
{
    struct finding f[C_COUNT];
    if (!src)
        len = 0;
    find_all(lang, src ? src : "", len, f);
    int done[C_COUNT] = {0};
    for (;;) { /* report in source order */
        int next = -1;
        for (int i = 0; i < C_COUNT; i++)
            if (!done[i] && f[i].at != NOT_FOUND && (next < 0 || f[i].at < f[next].at))
                next = i;
        if (next < 0)
            return 0;
        done[next] = 1;
        int r;
        if (next == C_COOKIE) /* name the declared encoding: it is ASCII by construction */
            r = sg_violations_add_at(out, rule_ids[next], src, len, f[next].at, f[next].end,
                                     "coding declaration \"%.*s\": only utf-8 is accepted",
                                     (int)(f[next].end - f[next].at), src + f[next].at);
        else
            r = sg_violations_add_at(out, rule_ids[next], src, len, f[next].at, f[next].end, "%s",
                                     messages[next]);
        if (r < 0)
            return r;
    }
}

int sg_nfkc(const char *s, size_t n, char **ret)
{
    *ret = NULL;
    if (u8_check((const uint8_t *)s, n))
        return -EINVAL;
    size_t i = 0;
    while (i < n && !((unsigned char)s[i] & 0x80))
        i++;
    if (i == n) { /* ASCII is its own NFKC form: skip libunistring */
        *ret = strndup(s, n);
        return *ret ? 0 : -ENOMEM;
    }
    size_t outlen = 0;
    uint8_t *norm = u8_normalize(UNINORM_NFKC, (const uint8_t *)s, n, NULL, &outlen);
    if (!norm)
        return errno == ENOMEM ? -ENOMEM : -EINVAL;
    char *z = realloc(norm, outlen + 1);
    if (!z) {
        free(norm);
        return -ENOMEM;
    }
    z[outlen] = '\0';
    *ret = z;
    return 0;
}
