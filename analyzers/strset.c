/* strset.c - sorted string sets searched with bsearch. */
#include "strset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_key(const void *key, const void *item)
{
    return strcmp((const char *)key, *(char *const *)item);
}

int sg_strset_has(const struct sg_strset *set, const char *s)
{
    if (!set || !s || set->count == 0)
        return 0;
    return bsearch(s, set->items, set->count, sizeof(char *), cmp_key) != NULL;
}

/* Look up s[0..n) without copying into a heap string. */
static int has_n(const struct sg_strset *set, const char *s, size_t n)
{
    size_t lo = 0, hi = set->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *it = set->items[mid];
        int c = strncmp(s, it, n);
        if (c == 0)
            c = it[n] == '\0' ? 0 : -1; /* s[0..n) is a proper prefix of it: smaller */
        if (c == 0)
            return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

int sg_strset_has_prefix(const struct sg_strset *set, const char *s, char sep)
{
    if (!set || !s || set->count == 0)
        return 0;
    for (const char *p = s; *p; p++)
        if (*p == sep && p > s && has_n(set, s, (size_t)(p - s)))
            return 1;
    return sg_strset_has(set, s);
}

int sg_strset_adopt(struct sg_strset *set, char **items, size_t count, const char **ret_dup)
{
    set->items = items;
    set->count = count;
    if (count > 1)
        qsort(items, count, sizeof(char *), cmp_ptr);
    for (size_t i = 1; i < count; i++) {
        if (strcmp(items[i - 1], items[i]) == 0) {
            if (ret_dup)
                *ret_dup = items[i];
            return -EEXIST;
        }
    }
    return 0;
}

int sg_strset_combine(struct sg_strset *set, const struct sg_strset *other, int remove)
{
    size_t cap = set->count + (remove ? 0 : other->count), n = 0;
    char **items = calloc(cap ? cap : 1, sizeof(char *));
    if (!items)
        return -ENOMEM;
    for (size_t i = 0; i < set->count; i++)
        if (!remove || !sg_strset_has(other, set->items[i]))
            items[n++] = set->items[i];
    for (size_t i = 0; !remove && i < other->count; i++) {
        if (sg_strset_has(set, other->items[i]))
            continue;
        if (!(items[n] = strdup(other->items[i]))) {
            for (size_t k = set->count; k < n; k++)
                free(items[k]);
            free(items);
            return -ENOMEM;
        }
        n++;
    }
    for (size_t i = 0; remove && i < set->count; i++)
        if (sg_strset_has(other, set->items[i]))
            free(set->items[i]);
    free(set->items);
    set->items = NULL;
    set->count = 0;
    return sg_strset_adopt(set, items, n, NULL);
}

void sg_strset_free(struct sg_strset *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        free(set->items[i]);
    free(set->items);
    set->items = NULL;
    set->count = 0;
}
