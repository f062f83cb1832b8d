/* test_text.h - building large test sources (header-only, for unit tests). */
#ifndef SG_TEST_TEXT_H
#define SG_TEST_TEXT_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* prefix followed by n copies of unit, NUL-terminated; *ret_len (may be
 * NULL) gets its length. Caller frees with free(). */
static inline char *test_repeat(const char *prefix, const char *unit, size_t n, size_t *ret_len)
{
    size_t pl = strlen(prefix), ul = strlen(unit);
    char *s = malloc(pl + ul * n + 1);
    cr_assert(s);
    memcpy(s, prefix, pl);
    for (size_t i = 0; i < n; i++)
        memcpy(s + pl + i * ul, unit, ul);
    s[pl + ul * n] = '\0';
    if (ret_len)
        *ret_len = pl + ul * n;
    return s;
}

#endif
