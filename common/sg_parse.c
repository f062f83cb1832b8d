/* sg_parse.c - configuration value grammars (sg_parse.h). */
#include "sg_parse.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#define QUOTE_MAX 64 /* bytes of the offending text quoted in a message */

/* The text without surrounding spaces and tabs: [*ret_b, *ret_e). */
static void trim(const char *s, const char **ret_b, const char **ret_e)
{
    while (*s == ' ' || *s == '\t')
        s++;
    const char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *ret_b = s;
    *ret_e = e;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Digits at *p (before end), advancing *p. -EINVAL without a digit. */
static int digits(const char **p, const char *end, uint64_t *ret)
{
    const char *s = *p;
    uint64_t v = 0;
    if (s == end || *s < '0' || *s > '9')
        return -EINVAL;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *p = s;
    *ret = v;
    return 0;
}

static int mul(uint64_t a, uint64_t b, uint64_t *ret)
{
    if (b && a > UINT64_MAX / b)
        return -ERANGE;
    *ret = a * b;
    return 0;
}

static int fail(struct sg_error *err, int code, const char *s, const char *what)
{
    if (code == -ERANGE)
        return sg_error_set(err, code, "'%.*s' is too large", QUOTE_MAX, s);
    return sg_error_set(err, code, "'%.*s' is not %s", QUOTE_MAX, s, what);
}

int sg_parse_u64(const char *s, uint64_t *ret, struct sg_error *err)
{
    const char *p, *end;
    uint64_t v;
    trim(s, &p, &end);
    int r = digits(&p, end, &v);
    if (r == 0 && p != end)
        r = -EINVAL;
    if (r < 0)
        return fail(err, r, s, "an unsigned integer");
    *ret = v;
    return 0;
}

/* One duration unit at *p: its rank (larger units rank lower) and size. */
static int duration_unit(const char **p, const char *end, int *ret_rank, uint64_t *ret_ms)
{
    static const struct {
        const char *name;
        uint64_t ms;
    } units[] = {{"h", 3600000}, {"ms", 1}, {"m", 60000}, {"s", 1000}};
    static const int rank[] = {0, 3, 1, 2}; /* h < m < s < ms: largest first */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = units[i].name[1] ? 2 : 1;
        if ((size_t)(end - *p) < n || lower((*p)[0]) != units[i].name[0] ||
            (n == 2 && lower((*p)[1]) != units[i].name[1]))
            continue;
        *p += n;
        *ret_rank = rank[i];
        *ret_ms = units[i].ms;
        return 0;
    }
    return -EINVAL;
}

static int duration(const char *p, const char *end, uint64_t bare_unit_ms, uint64_t *ret_ms)
{
    uint64_t total = 0, v, part;
    int last_rank = -1, r;
    if ((r = digits(&p, end, &v)) < 0)
        return r;
    if (p == end)
        return mul(v, bare_unit_ms, ret_ms);
    for (;;) {
        int rank;
        uint64_t unit;
        if (duration_unit(&p, end, &rank, &unit) < 0 || rank <= last_rank)
            return -EINVAL; /* unknown unit, or units out of order or repeated */
        last_rank = rank;
        if ((r = mul(v, unit, &part)) < 0 || part > UINT64_MAX - total)
            return -ERANGE;
        total += part;
        if (p == end)
            break;
        if ((r = digits(&p, end, &v)) < 0)
            return r;
        if (p == end)
            return -EINVAL; /* "1m30": a trailing number needs its unit */
    }
    *ret_ms = total;
    return 0;
}

int sg_parse_duration_ms(const char *s, uint64_t bare_unit_ms, uint64_t *ret_ms,
                         struct sg_error *err)
{
    const char *p, *end;
    uint64_t v;
    trim(s, &p, &end);
    int r = duration(p, end, bare_unit_ms, &v);
    if (r < 0)
        return fail(err, r, s, "a duration (10s, 1m30s, 1500ms, 1h, or a bare number)");
    *ret_ms = v;
    return 0;
}

/* The size unit at [p, end): b, k, m, g, then optionally "b" or "ib". */
static int size_unit(const char *p, const char *end, uint64_t *ret)
{
    static const char names[] = "bkmg";
    size_t n = (size_t)(end - p);
    if (n == 0 || n > 3)
        return -EINVAL;
    uint64_t mult = 1;
    size_t i = 0;
    for (; names[i] && names[i] != lower(p[0]); i++)
        mult *= 1024;
    if (!names[i])
        return -EINVAL;
    const char *rest = p + 1;
    size_t rn = n - 1;
    if (rn && (i == 0 || !((rn == 1 && lower(rest[0]) == 'b') ||
                           (rn == 2 && strncasecmp(rest, "ib", 2) == 0))))
        return -EINVAL; /* "bb", "kx", "mbb" */
    *ret = mult;
    return 0;
}

int sg_parse_size_bytes(const char *s, uint64_t bare_unit, uint64_t *ret_bytes,
                        struct sg_error *err)
{
    const char *p, *end;
    uint64_t v = 0, mult = bare_unit, bytes = 0;
    trim(s, &p, &end);
    int r = digits(&p, end, &v);
    if (r == 0 && p != end)
        r = size_unit(p, end, &mult);
    if (r == 0)
        r = mul(v, mult, &bytes);
    if (r < 0)
        return fail(err, r, s, "a size (256m, 1g, 512k, or a bare number)");
    *ret_bytes = bytes;
    return 0;
}

int sg_parse_size_mib(const char *s, uint64_t bare_unit, uint64_t *ret_mib, struct sg_error *err)
{
    uint64_t bytes;
    int r = sg_parse_size_bytes(s, bare_unit, &bytes, err);
    if (r < 0)
        return r;
    *ret_mib = bytes / SG_MIB + (bytes % SG_MIB ? 1 : 0);
    return 0;
}

int sg_parse_bool(const char *s, bool *ret, struct sg_error *err)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    const char *p, *end;
    trim(s, &p, &end);
    size_t n = (size_t)(end - p);
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strlen(yes[i]) == n && strncasecmp(p, yes[i], n) == 0)
            return *ret = true, 0;
        if (strlen(no[i]) == n && strncasecmp(p, no[i], n) == 0)
            return *ret = false, 0;
    }
    return fail(err, -EINVAL, s, "a boolean (true/false, 1/0, yes/no, on/off)");
}
