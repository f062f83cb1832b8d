#include "pkgset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "runtime_info.h"
#include "sg_lang.h"

#define PKGSET_MODULES_MAX 64u /* modules one package lists */

/* A printable string of 1..max bytes. */
static bool text_ok(json_t *v, size_t max)
{
    const char *s = json_string_value(v);
    size_t n = s ? json_string_length(v) : 0;
    if (n == 0 || n > max || strlen(s) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static bool module_ok(const char *m)
{
    size_t n = strlen(m);
    return n > 0 && n <= FLAVOUR_MODULE_MAX &&
           strspn(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@/-") == n;
}

/* Whether the language image's listing offers module m already. */
static bool in_base(json_t *base, const char *m)
{
    size_t i, j;
    json_t *v, *pkg;
    json_array_foreach(json_object_get(base, "stdlib_modules"), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), m) == 0)
            return true;
    }
    json_array_foreach(json_object_get(base, "packages"), i, pkg)
    {
        json_array_foreach(json_object_get(pkg, "modules"), j, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), m) == 0)
                return true;
        }
    }
    return false;
}

/* name and pre-imported modules through the flavour spec parser. */
static int parse_head(json_t *doc, struct flavour *ret, struct sg_error *err)
{
    json_t *name = json_object_get(doc, "set"), *pre = json_object_get(doc, "preimport");
    if (!text_ok(name, FLAVOUR_NAME_MAX) ||
        strspn(json_string_value(name), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-") != json_string_length(name))
        return sg_error_set(err, -EPROTO, "set: a name of 1..%u bytes of [A-Za-z0-9_-]",
                            FLAVOUR_NAME_MAX);
    if (!json_is_array(pre) || json_array_size(pre) > FLAVOUR_MODULES_MAX)
        return sg_error_set(err, -EPROTO, "preimport: an array of at most %u modules",
                            FLAVOUR_MODULES_MAX);
    char spec[FLAVOUR_SPEC_MAX + 1];
    size_t used = (size_t)snprintf(spec, sizeof(spec), "%s=", json_string_value(name));
    size_t i;
    json_t *v;
    json_array_foreach(pre, i, v)
    {
        if (!json_is_string(v) || !module_ok(json_string_value(v)))
            return sg_error_set(err, -EPROTO, "preimport[%zu]: not a module name", i);
        used += (size_t)snprintf(spec + used, sizeof(spec) - used, "%s%s", i ? "," : "",
                                 json_string_value(v));
    }
    return flavour_parse(spec, ret, err) < 0 ? -EPROTO : 0;
}

static int parse_pool(json_t *pool, struct flavour *f, struct sg_error *err)
{
    if (!pool)
        return 0;
    json_t *size = json_object_get(pool, "size"), *mem = json_object_get(pool, "memory_mb");
    size_t known = (size ? 1u : 0u) + (mem ? 1u : 0u);
    if (!json_is_object(pool) || json_object_size(pool) != known)
        return sg_error_set(err, -EPROTO, "pool: an object with size and/or memory_mb");
    if (size && (!json_is_integer(size) || json_integer_value(size) < 0 ||
                 json_integer_value(size) > FLAVOUR_SIZE_MAX))
        return sg_error_set(err, -EPROTO, "pool.size: 0..%u", FLAVOUR_SIZE_MAX);
    if (mem && (!json_is_integer(mem) || json_integer_value(mem) < 0 ||
                json_integer_value(mem) > PKGSET_MEMORY_MB_MAX))
        return sg_error_set(err, -EPROTO, "pool.memory_mb: 0..%u", PKGSET_MEMORY_MB_MAX);
    if (size) {
        f->size = (unsigned)json_integer_value(size);
        f->size_set = true;
    }
    f->mem_mb = mem ? (unsigned)json_integer_value(mem) : 0;
    return 0;
}

static int parse_package(json_t *pkg, size_t i, json_t *base, struct flavour *f,
                         struct sg_error *err)
{
    static const char *const keys[] = {"name", "version", "kind", "source"};
    json_t *mods = json_object_get(pkg, "modules");
    if (!json_is_object(pkg) || json_object_size(pkg) != 5 || !json_is_array(mods) ||
        json_array_size(mods) > PKGSET_MODULES_MAX)
        return sg_error_set(err, -EPROTO,
                            "packages[%zu]: an object of name, version, kind, source and at "
                            "most %u modules",
                            i, PKGSET_MODULES_MAX);
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (!text_ok(json_object_get(pkg, keys[k]), PKGSET_TEXT_MAX))
            return sg_error_set(err, -EPROTO, "packages[%zu].%s: 1..%u printable bytes", i, keys[k],
                                PKGSET_TEXT_MAX);
    size_t j;
    json_t *m;
    json_array_foreach(mods, j, m)
    {
        const char *s = json_string_value(m);
        if (!s || !module_ok(s))
            return sg_error_set(err, -EPROTO, "packages[%zu].modules[%zu]: not a module name", i,
                                j);
        if (!in_base(base, s) && flavour_add_provides(f, s, err) < 0)
            return -EPROTO;
    }
    return 0;
}

static int parse_doc(json_t *doc, const char *language, json_t *base, struct flavour *ret,
                     struct sg_error *err)
{
    static const char *const known[] = {"set",  "language", "description",    "preimport",
                                        "pool", "packages", "declared_sha256"};
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        size_t k = 0;
        while (k < sizeof(known) / sizeof(known[0]) && strcmp(known[k], key) != 0)
            k++;
        if (k == sizeof(known) / sizeof(known[0]))
            return sg_error_set(err, -EPROTO, "unknown key '%.64s'", key);
        if ((k == 2 || k == 6) && !text_ok(v, 1024))
            return sg_error_set(err, -EPROTO, "%s: 1..1024 printable bytes", key);
    }
    const char *lang = json_string_value(json_object_get(doc, "language"));
    if (!lang || strcmp(lang, language) != 0)
        return sg_error_set(err, -EPROTO, "the set is for '%.32s', this executor runs %s",
                            lang ? lang : "?", language);
    int r = parse_head(doc, ret, err);
    if (r == 0)
        r = parse_pool(json_object_get(doc, "pool"), ret, err);
    json_t *pkgs = json_object_get(doc, "packages");
    if (r == 0 && (!json_is_array(pkgs) || json_array_size(pkgs) > PKGSET_PACKAGES_MAX))
        r = sg_error_set(err, -EPROTO, "packages: an array of at most %u", PKGSET_PACKAGES_MAX);
    size_t i;
    json_array_foreach(pkgs, i, v)
    {
        if (r == 0)
            r = parse_package(v, i, base, ret, err);
    }
    return r;
}

int pkgset_parse(const char *json, size_t len, const char *language, const char *image,
                 const char *base_listing, struct flavour *ret, json_t **ret_doc,
                 struct sg_error *err)
{
    struct sg_error e = {0};
    json_error_t jerr;
    *ret_doc = NULL;
    memset(ret, 0, sizeof(*ret));
    if (len > PKGSET_MAX)
        return sg_error_set(err, -EPROTO, "set manifest of %s: larger than %u bytes", image,
                            PKGSET_MAX);
    if (strlen(image) == 0 || strlen(image) > FLAVOUR_IMAGE_MAX)
        return sg_error_set(err, -EPROTO, "set image name: 1..%u bytes", FLAVOUR_IMAGE_MAX);
    json_t *doc = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    json_t *base = base_listing ? json_loads(base_listing, 0, NULL) : NULL;
    int r = json_is_object(doc) ? parse_doc(doc, language, base, ret, &e)
                                : sg_error_set(&e, -EPROTO, "not a JSON object (%s)", jerr.text);
    json_decref(base);
    if (r < 0) {
        json_decref(doc);
        memset(ret, 0, sizeof(*ret));
        return sg_error_set(err, -EPROTO, "set manifest %s of %s: %s", PKGSET_PATH, image, e.msg);
    }
    snprintf(ret->image, sizeof(ret->image), "%s", image);
    json_object_set_new(doc, "image", json_string(image));
    *ret_doc = doc;
    return 0;
}

/* A set named as a flavour given by --flavour (or a built-in one) takes
 * its place: the declared set wins. Otherwise it is one more flavour. */
static int place(struct flavour_set *fs, const struct flavour *f, struct sg_error *err)
{
    unsigned i = 0;
    while (i < fs->n && strcmp(fs->f[i].name, f->name) != 0)
        i++;
    if (i < fs->n && fs->f[i].image[0])
        return sg_error_set(err, -EINVAL, "set '%s' is declared by two images: %s and %s", f->name,
                            fs->f[i].image, f->image);
    if (i == fs->n && fs->n >= FLAVOUR_MAX)
        return sg_error_set(err, -E2BIG, "more than %u flavours and sets", FLAVOUR_MAX);
    if (i < fs->n)
        sg_log(SG_LOG_INFO, "set_replaces_flavour", "flavour=%s image=%s", f->name, f->image);
    fs->f[i] = *f;
    fs->n += i == fs->n;
    return 0;
}

static int load_one(struct docker_client *dc, struct exec_config *cfg, const char *image,
                    const char *listing, json_t *sets, struct sg_error *err)
{
    char *data = NULL;
    size_t n = 0;
    json_t *doc = NULL;
    struct flavour *f = malloc(sizeof(*f));
    if (!f)
        return sg_error_set(err, -ENOMEM, "out of memory");
    int r = runtime_info_copy(dc, cfg, image, PKGSET_PATH, PKGSET_MAX, &data, &n, err);
    if (r == -ENOENT)
        r = sg_error_set(err, r,
                         "image %s is not a package set (no %s): build the sets with "
                         "'make images' (docs/images.md)",
                         image, PKGSET_PATH);
    if (r == 0)
        r = pkgset_parse(data, n, sg_lang_name(cfg->language), image, listing, f, &doc, err);
    free(data);
    if (r == 0)
        r = place(&cfg->flavours, f, err);
    free(f);
    if (r < 0) {
        json_decref(doc);
        return r;
    }
    json_array_append_new(sets, doc);
    return 0;
}

int pkgset_load_all(struct docker_client *dc, struct exec_config *cfg, char **listing,
                    struct sg_error *err)
{
    if (cfg->n_sets == 0)
        return 0;
    json_t *sets = json_array();
    int r = sets ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < cfg->n_sets && r == 0; i++)
        r = load_one(dc, cfg, cfg->sets[i], *listing, sets, err);
    if (r == 0)
        r = flavour_set_finish(&cfg->flavours, cfg->pool_size, err);
    json_t *doc = r == 0 && *listing ? json_loads(*listing, 0, NULL) : NULL;
    if (doc && json_object_set(doc, "sets", sets) == 0) {
        char *out = json_dumps(doc, JSON_COMPACT);
        if (out) {
            free(*listing);
            *listing = out;
        }
    }
    json_decref(doc);
    json_decref(sets);
    return r;
}
