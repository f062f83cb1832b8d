/* policy_set.c - every policy of a directory, loaded all or nothing. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy.h"
#include "readfile.h"
#include "sha256.h"

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

/* One file of the directory while the set loads. */
struct pfile {
    char path[SET_PATH_MAX];
    char *buf;
    size_t len;
    json_t *doc;           /* NULL when it does not parse (the loader says why) */
    struct sg_policy *pol; /* owned until moved into the set */
    int state;             /* 0 not loaded, 1 loading (its parents), 2 loaded */
    unsigned level;        /* parents above it */
};

/* src into dst: objects merge key by key, arrays gain the entries they lack,
 * anything else is replaced (the loader then validates the result). */
static int merge_into(json_t *dst, json_t *src, unsigned depth)
{
    const char *k;
    json_t *v;
    if (depth > 8)
        return -ELOOP;
    json_object_foreach(src, k, v)
    {
        json_t *cur = json_object_get(dst, k);
        if (json_is_object(cur) && json_is_object(v)) {
            if (merge_into(cur, v, depth + 1) < 0)
                return -ELOOP;
            continue;
        }
        if (json_is_array(cur) && json_is_array(v)) {
            size_t i, j;
            json_t *a, *b;
            json_array_foreach(v, i, a)
            {
                int seen = 0;
                json_array_foreach(cur, j, b) seen = seen || json_equal(a, b);
                if (!seen && json_array_append(cur, a) < 0)
                    return -ENOMEM;
            }
            continue;
        }
        if (json_object_set(dst, k, v) < 0)
            return -ENOMEM;
    }
    return 0;
}

static const char *import_mode(json_t *doc, const char *lang)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(doc, lang), "imports"), "mode"));
}

/* The child's document over its parent's; the child's identity covers the
 * parent's, so a changed parent changes every policy that extends it. */
static int load_child(struct pfile *f, const struct sg_policy *parent, struct sg_error *err)
{
    json_t *merged = json_deep_copy(parent->doc);
    if (!merged || merge_into(merged, f->doc, 0) < 0) {
        json_decref(merged);
        return sg_error_set(err, -ENOMEM, "%s: cannot merge with \"%s\"", f->path, parent->name);
    }
    json_object_del(merged, "extends");
    if (!json_object_get(f->doc, "description"))
        json_object_set_new(merged, "description", json_string(""));
    int r = 0;
    for (int l = 0; r == 0 && l < 2; l++) {
        const char *lang = l ? "javascript" : "python";
        const char *was = import_mode(parent->doc, lang), *now = import_mode(merged, lang);
        if (was && now && strcmp(was, now) != 0)
            r = sg_error_set(err, -EINVAL,
                             "%s: %s.imports.mode: cannot change \"%s\" of "
                             "policy \"%s\" in a policy that extends it",
                             f->path, lang, was, parent->name);
    }
    char sha[65], *id = NULL;
    if (r == 0 && asprintf(&id, "%.*s\nextends %s\n", (int)f->len, f->buf, parent->sha256) < 0)
        r = sg_error_set(err, -ENOMEM, "%s: out of memory", f->path);
    if (r == 0) {
        sg_sha256_hex(id, strlen(id), sha);
        r = sg_policy_load_doc(merged, f->path, sha, &f->pol, err);
    }
    free(id);
    json_decref(merged);
    return r;
}

static long find_named(struct pfile *fs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (fs[i].doc && json_is_string(json_object_get(fs[i].doc, "name")) &&
            strcmp(json_string_value(json_object_get(fs[i].doc, "name")), name) == 0)
            return (long)i;
    return -1;
}

/* Load fs[i] after the chain of policies it extends. */
static int load_rec(struct pfile *fs, size_t n, size_t i, const char *dir, struct sg_error *err)
{
    struct pfile *f = &fs[i];
    if (f->state == 2)
        return 0;
    if (f->state == 1)
        return sg_error_set(err, -ELOOP, "%s: extends: a cycle leads back to this policy", f->path);
    json_t *ext = f->doc ? json_object_get(f->doc, "extends") : NULL;
    if (!ext) {
        f->state = 2;
        return sg_policy_load_buf(f->buf, f->len, f->path, &f->pol, err);
    }
    if (!json_is_string(ext))
        return sg_error_set(err, -EINVAL, "%s: extends: expected the name of a policy", f->path);
    long j = find_named(fs, n, json_string_value(ext));
    if (j < 0)
        return sg_error_set(err, -ENOENT, "%s: extends: no policy named \"%.64s\" in %s", f->path,
                            json_string_value(ext), dir);
    f->state = 1;
    int r = load_rec(fs, n, (size_t)j, dir, err);
    f->state = 2;
    f->level = fs[j].level + 1;
    if (r == 0 && f->level > SG_POLICY_EXTENDS_MAX)
        return sg_error_set(err, -ELOOP, "%s: extends: more than %d levels of parents", f->path,
                            SG_POLICY_EXTENDS_MAX);
    return r < 0 ? r : load_child(f, fs[j].pol, err);
}

static int read_all(const char *dir, char **names, size_t n, struct pfile *fs, struct sg_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (snprintf(fs[i].path, sizeof(fs[i].path), "%s/%s", dir, names[i]) >=
            (int)sizeof(fs[i].path))
            return sg_error_set(err, -ENAMETOOLONG, "%s/%s: path too long", dir, names[i]);
        int r = sg_read_file_capped(fs[i].path, SG_POLICY_FILE_MAX, &fs[i].buf, &fs[i].len, err);
        if (r < 0)
            return r;
        fs[i].doc = json_loadb(fs[i].buf, fs[i].len, JSON_REJECT_DUPLICATES, NULL);
        if (fs[i].doc && !json_is_object(fs[i].doc)) {
            json_decref(fs[i].doc);
            fs[i].doc = NULL;
        }
    }
    return 0;
}

static int load_all(const char *dir, char **names, size_t n, struct sg_policy_set *set,
                    struct sg_error *err)
{
    struct pfile *fs = calloc(n, sizeof(*fs));
    int r = fs ? read_all(dir, names, n, fs, err) : sg_error_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; r == 0 && i < n; i++)
        r = load_rec(fs, n, i, dir, err);
    for (size_t i = 0; fs && i < n; i++) {
        if (r == 0) {
            set->items[set->count++] = fs[i].pol;
            for (size_t j = 0; j + 1 < set->count; j++)
                if (r == 0 && strcmp(set->items[j]->name, fs[i].pol->name) == 0)
                    r = sg_error_set(err, -EEXIST,
                                     "%s: policy name \"%s\" is already used "
                                     "in %s",
                                     fs[i].path, fs[i].pol->name, dir);
        } else {
            sg_policy_free(fs[i].pol);
        }
        free(fs[i].buf);
        json_decref(fs[i].doc);
    }
    free(fs);
    return r;
}

int sg_policy_load_file_with(const char *path, const struct sg_policy_set *set,
                             struct sg_policy **ret_policy, struct sg_error *err)
{
    struct pfile f = {0};
    *ret_policy = NULL;
    snprintf(f.path, sizeof(f.path), "%s", path);
    int r = sg_read_file_capped(path, SG_POLICY_FILE_MAX, &f.buf, &f.len, err);
    if (r < 0)
        return r;
    f.doc = json_loadb(f.buf, f.len, JSON_REJECT_DUPLICATES, NULL);
    json_t *ext = json_is_object(f.doc) ? json_object_get(f.doc, "extends") : NULL;
    const struct sg_policy *parent =
        json_is_string(ext) ? sg_policy_set_find(set, json_string_value(ext)) : NULL;
    if (json_is_string(ext) && set && !parent)
        r = sg_error_set(err, -ENOENT,
                         "%s: extends: no policy named \"%.64s\" in the "
                         "policies directory",
                         path, json_string_value(ext));
    else
        r = parent ? load_child(&f, parent, err)
                   : sg_policy_load_buf(f.buf, f.len, path, &f.pol, err);
    *ret_policy = f.pol;
    free(f.buf);
    json_decref(f.doc);
    return r;
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
        /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized by its element */
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
