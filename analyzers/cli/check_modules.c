#include "check_modules.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

static const char *const lang_keys[2] = {"python", "javascript"};

static const struct sg_lang_policy *lang_of(const struct sg_policy *p, int l)
{
    return l == 0 ? &p->python : &p->javascript;
}

static json_t *policy_modules(const struct sg_lang_policy *lp)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < lp->modules.count; i++)
        json_array_append_new(arr, json_string(lp->modules.items[i]));
    return json_pack("{s:b,s:s,s:o}", "enabled", lp->enabled, "mode",
                     lp->import_mode == SG_IMPORTS_ALLOW ? "allow" : "deny", "modules", arr);
}

/* {"file", "interpreter", "importable": [...], "not_importable": [{module, package, version}]} */
static json_t *against_listing(const struct sg_lang_policy *lp, char sep, json_t *doc,
                               const char *file)
{
    json_t *ok = json_array(), *no = json_array();
    size_t i, j;
    json_t *v, *pkg;
    json_array_foreach(json_object_get(doc, "stdlib_modules"), i, v)
    {
        if (sg_lang_policy_allows_import(lp, json_string_value(v), sep))
            json_array_append(ok, v);
    }
    json_array_foreach(json_object_get(doc, "packages"), i, pkg)
    {
        json_array_foreach(json_object_get(pkg, "modules"), j, v)
        {
            if (sg_lang_policy_allows_import(lp, json_string_value(v), sep))
                json_array_append(ok, v);
            else
                json_array_append_new(no, json_pack("{s:O,s:O,s:O}", "module", v, "package",
                                                    json_object_get(pkg, "name"), "version",
                                                    json_object_get(pkg, "version")));
        }
    }
    json_t *out =
        json_pack("{s:s,s:O?,s:o,s:o}", "file", file, "interpreter",
                  json_object_get(doc, "interpreter"), "importable", ok, "not_importable", no);
    json_t *set = json_object_get(doc, "set");
    if (out && json_is_string(set))
        json_object_set(out, "set", set);
    return out;
}

/* against_listing, and for a listing as GET /v1/runtime serves it (with
 * the executor's package sets), each set's packages under "sets". */
static json_t *against_all(const struct sg_lang_policy *lp, char sep, json_t *doc, const char *file)
{
    json_t *out = against_listing(lp, sep, doc, file), *sets = json_object_get(doc, "sets");
    if (!out || !json_is_array(sets))
        return out;
    json_t *arr = json_array();
    size_t i;
    json_t *set;
    json_array_foreach(sets, i, set)
    {
        if (json_is_object(set))
            json_array_append_new(arr, against_listing(lp, sep, set, file));
    }
    json_object_set_new(out, "sets", arr);
    return out;
}

/* A listing file: its language index, or -1 after printing why. */
static int read_listing(const char *file, json_t **ret)
{
    char *buf = NULL;
    size_t len = 0;
    struct sg_error err = {0};
    *ret = NULL;
    if (sg_read_file_capped(file, CHECK_LISTING_MAX, &buf, &len, &err) < 0) {
        fprintf(stderr, "sandgate-check: %s\n", err.msg);
        return -1;
    }
    json_t *doc = json_loadb(buf, len, 0, NULL);
    free(buf);
    const char *lang = json_string_value(json_object_get(doc, "language"));
    int l = !lang ? -1 : !strcmp(lang, "python") ? 0 : !strcmp(lang, "nodejs") ? 1 : -1;
    if (l < 0 || !json_is_array(json_object_get(doc, "packages"))) {
        fprintf(stderr,
                "sandgate-check: %s: not a runtime listing (the image's "
                "/opt/sandgate/runtime.json) or a package set's manifest "
                "(/opt/sandgate/set.json)\n",
                file);
        json_decref(doc);
        return -1;
    }
    *ret = doc;
    return l;
}

static json_t *build(const struct sg_policy *p, char *const *listings, int n)
{
    json_t *langs = json_object();
    for (int l = 0; l < 2; l++)
        json_object_set_new(langs, lang_keys[l], policy_modules(lang_of(p, l)));
    for (int i = 0; i < n; i++) {
        json_t *doc;
        int l = read_listing(listings[i], &doc);
        if (l < 0) {
            json_decref(langs);
            return NULL;
        }
        json_t *entry = json_object_get(langs, lang_keys[l]);
        json_t *runs = json_object_get(entry, "runtimes");
        if (!runs)
            json_object_set_new(entry, "runtimes", runs = json_array());
        json_array_append_new(runs, against_all(lang_of(p, l), l ? '/' : '.', doc, listings[i]));
        json_decref(doc);
    }
    return json_pack("{s:{s:s,s:s},s:o}", "policy", "name", p->name, "sha256", p->sha256,
                     "languages", langs);
}

static void print_names(FILE *out, const char *label, json_t *arr, const char *key)
{
    size_t i;
    json_t *v;
    fprintf(out, "  %s (%zu):", label, json_array_size(arr));
    json_array_foreach(arr, i, v)
    {
        json_t *s = key ? json_object_get(v, key) : v;
        fprintf(out, " %s", json_string_value(s));
        if (key)
            fprintf(out, " [%s %s]", json_string_value(json_object_get(v, "package")),
                    json_string_value(json_object_get(v, "version")));
    }
    fputc('\n', out);
}

/* One image listing or package set of the JSON form as text. */
static void write_runtime(FILE *out, json_t *r)
{
    json_t *in = json_object_get(r, "interpreter");
    const char *set = json_string_value(json_object_get(r, "set"));
    if (set)
        fprintf(out, "  package set %s (%s):\n", set,
                json_string_value(json_object_get(r, "file")));
    else
        fprintf(out, "  image listing %s (%s %s):\n", json_string_value(json_object_get(r, "file")),
                json_string_value(json_object_get(in, "name")),
                json_string_value(json_object_get(in, "version")));
    print_names(out, "  importable", json_object_get(r, "importable"), NULL);
    print_names(out, "  installed but not importable", json_object_get(r, "not_importable"),
                "module");
}

static void write_text(FILE *out, json_t *doc)
{
    json_t *langs = json_object_get(doc, "languages");
    fprintf(out, "policy %s (sha256 %s)\n",
            json_string_value(json_object_get(json_object_get(doc, "policy"), "name")),
            json_string_value(json_object_get(json_object_get(doc, "policy"), "sha256")));
    for (int l = 0; l < 2; l++) {
        json_t *e = json_object_get(langs, lang_keys[l]);
        const char *mode = json_string_value(json_object_get(e, "mode"));
        fprintf(out, "%s: %s\n", lang_keys[l],
                !json_is_true(json_object_get(e, "enabled")) ? "disabled"
                : strcmp(mode, "allow") == 0
                    ? "only these modules (and their submodules) may be imported"
                    : "every module but these (and their submodules) may be imported");
        print_names(out, mode && !strcmp(mode, "allow") ? "allowed" : "denied",
                    json_object_get(e, "modules"), NULL);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(e, "runtimes"), i, r)
        {
            write_runtime(out, r);
            size_t k;
            json_t *set;
            json_array_foreach(json_object_get(r, "sets"), k, set) write_runtime(out, set);
        }
    }
}

int check_list_modules(FILE *out, enum check_format format, const struct sg_policy *policy,
                       char *const *listings, int n)
{
    json_t *doc = build(policy, listings, n);
    if (!doc)
        return -EINVAL;
    int r = 0;
    if (format == CHECK_FORMAT_JSON)
        r = json_dumpf(doc, out, JSON_INDENT(2)) < 0 || fputc('\n', out) == EOF ? -EIO : 0;
    else
        write_text(out, doc);
    json_decref(doc);
    return r;
}
