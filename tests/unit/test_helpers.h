/* test_helpers.h - small helpers shared by unit tests (header-only). */
#ifndef SG_TEST_HELPERS_H
#define SG_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

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

/* The shipped policy policies/<name>.json (tests run from the repository
 * root). Caller frees with sg_policy_free(). */
static inline struct sg_policy *test_load_policy(const char *name)
{
    char path[64];
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    snprintf(path, sizeof(path), "policies/%s.json", name);
    cr_assert_eq(sg_policy_load_file(path, &p, &err), 0, "%s", err.msg);
    return p;
}

#endif
