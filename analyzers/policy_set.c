/* policy_set.c - every policy of a directory, loaded all or nothing. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define SET_PATH_MAX 4096

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_policy_file(const char *name)
{
    size_t n = strlen(name);
    /* dot files are editor or tool leftovers, never policies */
    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The sorted *.json entry names of dir (at most SG_POLICY_SET_MAX). */
static int list_policy_files(const char *dir, char ***ret_names, size_t *ret_n,
                             struct sg_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return sg_error_set(err, -errno, "%s: %s", dir, strerror(errno));
    char **names = calloc(SG_POLICY_SET_MAX, sizeof(char *));
    size_t n = 0;
    int r = names ? 0 : sg_error_set(err, -ENOMEM, "%s: out of memory", dir);
    struct dirent *de;
    while (r == 0 && (de = readdir(d))) {
        if (!is_policy_file(de->d_name))
            continue;
        if (n == SG_POLICY_SET_MAX) {
            r = sg_error_set(err, -E2BIG, "%s: more than %d policy files", dir, SG_POLICY_SET_MAX);
            break;
        }
        if (!(names[n] = strdup(de->d_name)))
            r = sg_error_set(err, -ENOMEM, "%s: out of memory", dir);
        else
            n++;
    }
    closedir(d);
    if (r == 0 && n == 0)
        r = sg_error_set(err, -ENOENT, "%s: no *.json policy files", dir);
    if (r < 0) {
        free_names(names, n);
        return r;
    }
    qsort(names, n, sizeof(char *), cmp_str);
    *ret_names = names;
    *ret_n = n;
    return 0;
}

static int load_all(const char *dir, char **names, size_t n, struct sg_policy_set *set,
                    struct sg_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char path[SET_PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path))
            return sg_error_set(err, -ENAMETOOLONG, "%s/%s: path too long", dir, names[i]);
        struct sg_policy *p;
        int r = sg_policy_load_file(path, &p, err);
        if (r < 0)
            return r;
        set->items[set->count++] = p;
        for (size_t j = 0; j + 1 < set->count; j++)
            if (strcmp(set->items[j]->name, p->name) == 0)
                return sg_error_set(err, -EEXIST, "%s: policy name \"%s\" is already used in %s",
                                    path, p->name, dir);
    }
    return 0;
}

int sg_policy_set_load_dir(const char *dir, struct sg_policy_set **ret_set, struct sg_error *err)
{
    char **names = NULL;
    size_t n = 0;
    *ret_set = NULL;
    int r = list_policy_files(dir, &names, &n, err);
    if (r < 0)
        return r;
    struct sg_policy_set *set = calloc(1, sizeof(*set));
    if (set)
        set->items = calloc(n, sizeof(*set->items));
    if (!set || !set->items)
        r = sg_error_set(err, -ENOMEM, "%s: out of memory", dir);
    else
        r = load_all(dir, names, n, set, err);
    free_names(names, n);
    if (r < 0) {
        sg_policy_set_free(set);
        return r;
    }
    *ret_set = set;
    return 0;
}

const struct sg_policy *sg_policy_set_find(const struct sg_policy_set *set, const char *name)
{
    for (size_t i = 0; set && name && i < set->count; i++)
        if (strcmp(set->items[i]->name, name) == 0)
            return set->items[i];
    return NULL;
}

void sg_policy_set_free(struct sg_policy_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->count; i++)
        sg_policy_free(set->items[i]);
    free(set->items);
    free(set);
}
