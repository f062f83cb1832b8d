/* policy.c - load and validate policies (schema: policies/README.md).
 *
 * The whole document is validated into a fresh struct; any error frees the
 * partial struct, so a policy never loads half-way. Error messages name the
 * origin and the key path: "default.json: python.imports.mode: ...".
 */
#include "policy.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "sha256.h"
#include "strset.h"
#include "violation.h"

#define PATH_MAX_LEN 128 /* key paths are at most "javascript.dunder_attributes.allow" */

struct loader {
    const char *origin;
    struct sg_error *err;
    int js;        /* validating the javascript section: '$' in identifiers, JS module names */
    int networked; /* building the networked variant (sg_policy.network) */
};

static int lfail(const struct loader *ld, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Error messages quote keys and values from the file and end up in logs and
 * API answers: keep them one line of valid UTF-8 (see sg_text_sanitize). */
static int set_clean_error(struct sg_error *err, int code, const char *msg)
{
    char clean[SG_ERROR_MSG_MAX];
    sg_text_sanitize(msg, strlen(msg), 0, clean, sizeof(clean));
    return sg_error_set(err, code, "%s", clean);
}

static int lfail(const struct loader *ld, const char *path, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX], full[SG_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (snprintf(full, sizeof(full), "%s: %s%s%s", ld->origin, path, *path ? ": " : "", msg) < 0)
        full[0] = '\0';
    return set_clean_error(ld->err, -EINVAL, full);
}

static void join_path(char out[PATH_MAX_LEN], const char *prefix, const char *key)
{
    /* truncation only shortens an error message; paths are short by schema */
    if (snprintf(out, PATH_MAX_LEN, "%s%s%s", prefix, *prefix ? "." : "", key) >= PATH_MAX_LEN)
        out[PATH_MAX_LEN - 1] = '\0';
}

/* Every key of obj must be in keys (NULL-terminated). */
static int check_keys(const struct loader *ld, json_t *obj, const char *path,
                      const char *const *keys)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        int known = 0;
        for (const char *const *k = keys; *k && !known; k++)
            known = strcmp(*k, key) == 0;
        if (!known) {
            char p[PATH_MAX_LEN], shown[64];
            /* the key is hostile input: quote it, bounded */
            snprintf(shown, sizeof(shown), "%s", key);
            join_path(p, path, shown);
            return lfail(ld, p, "unknown key");
        }
    }
    return 0;
}

static int get_object(const struct loader *ld, json_t *parent, const char *path, const char *key,
                      int required, json_t **ret)
{
    char p[PATH_MAX_LEN];
    join_path(p, path, key);
    *ret = json_object_get(parent, key);
    if (!*ret)
        return required ? lfail(ld, p, "required key missing") : 0;
    if (!json_is_object(*ret))
        return lfail(ld, p, "expected an object");
    return 0;
}

static int get_bool(const struct loader *ld, json_t *obj, const char *path, const char *key,
                    int dflt, int *ret)
{
    char p[PATH_MAX_LEN];
    json_t *v = json_object_get(obj, key);
    *ret = dflt;
    if (!v)
        return 0;
    join_path(p, path, key);
    if (!json_is_boolean(v))
        return lfail(ld, p, "expected true or false");
    *ret = json_is_true(v);
    return 0;
}

static int get_size(const struct loader *ld, json_t *obj, const char *path, const char *key,
                    long long lo, long long hi, long long dflt, size_t *ret)
{
    char p[PATH_MAX_LEN];
    json_t *v = json_object_get(obj, key);
    *ret = (size_t)dflt;
    if (!v)
        return 0;
    join_path(p, path, key);
    if (!json_is_integer(v))
        return lfail(ld, p, "expected an integer");
    json_int_t n = json_integer_value(v);
    if (n < lo || n > hi)
        return lfail(ld, p, "%lld is out of range [%lld, %lld]", (long long)n, lo, hi);
    *ret = (size_t)n;
    return 0;
}

enum item_kind { ITEM_IDENT, ITEM_DOTTED, ITEM_MODULE };

static int ident_start(char c, int js)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (js && c == '$');
}

static int ident_char(char c, int js)
{
    return ident_start(c, js) || (c >= '0' && c <= '9');
}

/* Identifiers are ASCII: the analyzers NFKC-normalise (Python) or unescape
 * (JavaScript) names from the source before they compare them with these. */
static int valid_dotted(const char *s, int js, int allow_dots)
{
    int at_start = 1;
    for (; *s; s++) {
        if (at_start) {
            if (!ident_start(*s, js))
                return 0;
            at_start = 0;
        } else if (*s == '.' && allow_dots) {
            at_start = 1;
        } else if (!ident_char(*s, js)) {
            return 0;
        }
    }
    return !at_start;
}

/* Node module specifiers: "fs", "fs/promises", "node:fs", "@scope/pkg", "lodash.get". */
static int valid_js_module(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || s[0] == '/' || s[0] == '.' || s[n - 1] == '/' || strstr(s, "//"))
        return 0;
    for (; *s; s++)
        if (!ident_char(*s, 0) && !strchr("@/:.-", *s))
            return 0;
    return 1;
}

static int valid_item(const struct loader *ld, enum item_kind kind, const char *s)
{
    switch (kind) {
    case ITEM_IDENT:
        return valid_dotted(s, ld->js, 0);
    case ITEM_DOTTED:
        return valid_dotted(s, ld->js, 1);
    case ITEM_MODULE:
        return ld->js ? valid_js_module(s) : valid_dotted(s, 0, 1);
    }
    return 0;
}

static const char *kind_name(const struct loader *ld, enum item_kind kind)
{
    switch (kind) {
    case ITEM_IDENT:
        return "an identifier";
    case ITEM_DOTTED:
        return "a dotted name";
    case ITEM_MODULE:
        return ld->js ? "a module specifier" : "a dotted module name";
    }
    return "?";
}

/* Copy a JSON array of strings into items (filled up to *ret_n on error). */
static int copy_items(const struct loader *ld, json_t *arr, const char *p, enum item_kind kind,
                      char **items, size_t *ret_n)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (!json_is_string(v))
            return lfail(ld, p, "entry %zu: expected a string", i);
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (len == 0 || len > SG_POLICY_ITEM_MAX || strlen(s) != len)
            return lfail(ld, p, "entry %zu: length must be 1..%d bytes", i, SG_POLICY_ITEM_MAX);
        if (!valid_item(ld, kind, s))
            return lfail(ld, p, "entry %zu (\"%s\"): expected %s", i, s, kind_name(ld, kind));
        items[i] = strdup(s);
        if (!items[i])
            return sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
        *ret_n = i + 1;
    }
    return 0;
}

static int get_strset(const struct loader *ld, json_t *obj, const char *path, const char *key,
                      int required, enum item_kind kind, struct sg_strset *ret)
{
    char p[PATH_MAX_LEN];
    json_t *arr = json_object_get(obj, key);
    join_path(p, path, key);
    if (!arr)
        return required ? lfail(ld, p, "required key missing") : 0;
    if (!json_is_array(arr))
        return lfail(ld, p, "expected an array of strings");
    size_t n = json_array_size(arr), filled = 0;
    if (n > SG_POLICY_LIST_MAX)
        return lfail(ld, p, "%zu entries, at most %d allowed", n, SG_POLICY_LIST_MAX);
    if (n == 0)
        return 0;
    char **items = calloc(n, sizeof(char *));
    if (!items)
        return sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
    int r = copy_items(ld, arr, p, kind, items, &filled);
    const char *dup = NULL;
    /* the set owns what was copied so far, so one free path covers every error */
    int a = sg_strset_adopt(ret, items, filled, &dup);
    if (r == 0 && a == -EEXIST)
        r = lfail(ld, p, "duplicate entry \"%s\"", dup);
    return r;
}

static int load_imports(const struct loader *ld, json_t *lang, const char *path,
                        struct sg_lang_policy *lp)
{
    static const char *const keys[] = {"mode", "modules", NULL};
    char p[PATH_MAX_LEN], pm[PATH_MAX_LEN];
    json_t *imp;
    int r = get_object(ld, lang, path, "imports", 1, &imp);
    if (r < 0)
        return r;
    join_path(p, path, "imports");
    if ((r = check_keys(ld, imp, p, keys)) < 0)
        return r;
    json_t *mode = json_object_get(imp, "mode");
    join_path(pm, p, "mode");
    if (!mode)
        return lfail(ld, pm, "required key missing");
    const char *m = json_is_string(mode) ? json_string_value(mode) : "";
    if (strcmp(m, "allow") == 0)
        lp->import_mode = SG_IMPORTS_ALLOW;
    else if (strcmp(m, "deny") == 0)
        lp->import_mode = SG_IMPORTS_DENY;
    else
        return lfail(ld, pm, "expected \"allow\" or \"deny\"");
    return get_strset(ld, imp, p, "modules", 1, ITEM_MODULE, &lp->modules);
}

static int load_dunders(const struct loader *ld, json_t *lang, const char *path,
                        struct sg_lang_policy *lp)
{
    static const char *const keys[] = {"deny", "allow", NULL};
    char p[PATH_MAX_LEN];
    json_t *d;
    lp->deny_dunder_attributes = 1;
    int r = get_object(ld, lang, path, "dunder_attributes", 0, &d);
    if (r < 0 || !d)
        return r;
    join_path(p, path, "dunder_attributes");
    if ((r = check_keys(ld, d, p, keys)) < 0)
        return r;
    if ((r = get_bool(ld, d, p, "deny", 1, &lp->deny_dunder_attributes)) < 0)
        return r;
    return get_strset(ld, d, p, "allow", 0, ITEM_IDENT, &lp->allowed_dunders);
}

/* "private_attributes": {"deny": bool, "allow": [...]}; absent: not denied. */
static int load_privates(const struct loader *ld, json_t *lang, const char *path,
                         struct sg_lang_policy *lp)
{
    static const char *const keys[] = {"deny", "allow", NULL};
    char p[PATH_MAX_LEN];
    json_t *d;
    lp->deny_private_attributes = 0;
    int r = get_object(ld, lang, path, "private_attributes", 0, &d);
    if (r < 0 || !d)
        return r;
    join_path(p, path, "private_attributes");
    if ((r = check_keys(ld, d, p, keys)) < 0)
        return r;
    if ((r = get_bool(ld, d, p, "deny", 1, &lp->deny_private_attributes)) < 0)
        return r;
    return get_strset(ld, d, p, "allow", 0, ITEM_IDENT, &lp->allowed_privates);
}

static int load_limits(const struct loader *ld, json_t *lang, const char *path,
                       struct sg_lang_policy *lp)
{
    static const char *const keys[] = {"max_source_bytes", "max_depth", "max_nodes", NULL};
    char p[PATH_MAX_LEN];
    json_t *l;
    lp->max_source_bytes = SG_LIMIT_SOURCE_BYTES_DEFAULT;
    lp->max_depth = SG_LIMIT_DEPTH_DEFAULT;
    lp->max_nodes = SG_LIMIT_NODES_DEFAULT;
    int r = get_object(ld, lang, path, "limits", 0, &l);
    if (r < 0 || !l)
        return r;
    join_path(p, path, "limits");
    if ((r = check_keys(ld, l, p, keys)) < 0)
        return r;
    if ((r = get_size(ld, l, p, "max_source_bytes", SG_LIMIT_SOURCE_BYTES_MIN,
                      SG_LIMIT_SOURCE_BYTES_MAX, SG_LIMIT_SOURCE_BYTES_DEFAULT,
                      &lp->max_source_bytes)) < 0)
        return r;
    if ((r = get_size(ld, l, p, "max_depth", SG_LIMIT_DEPTH_MIN, SG_LIMIT_DEPTH_MAX,
                      SG_LIMIT_DEPTH_DEFAULT, &lp->max_depth)) < 0)
        return r;
    return get_size(ld, l, p, "max_nodes", SG_LIMIT_NODES_MIN, SG_LIMIT_NODES_MAX,
                    SG_LIMIT_NODES_DEFAULT, &lp->max_nodes);
}

static int valid_abs_path(const char *s)
{
    if (s[0] != '/' || strstr(s, "/../") || strstr(s, "/./") || strstr(s, "//"))
        return 0;
    size_t n = strlen(s);
    if ((n >= 3 && strcmp(s + n - 3, "/..") == 0) || (n >= 2 && strcmp(s + n - 2, "/.") == 0))
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

/* read_paths: normalised absolute prefixes (no "..", ".", "//", controls). */
static int get_paths(const struct loader *ld, json_t *obj, const char *path, const char *key,
                     struct sg_strset *ret)
{
    char p[PATH_MAX_LEN];
    json_t *arr = json_object_get(obj, key), *v;
    join_path(p, path, key);
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return lfail(ld, p, "expected an array of strings");
    if (json_array_size(arr) > SG_POLICY_LIST_MAX)
        return lfail(ld, p, "at most %d entries allowed", SG_POLICY_LIST_MAX);
    size_t n = json_array_size(arr), i, filled = 0;
    if (n == 0)
        return 0;
    char **items = calloc(n, sizeof(char *));
    if (!items)
        return sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
    int r = 0;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_string_value(v);
        if (!s || json_string_length(v) > SG_RUNTIME_PATH_MAX ||
            strlen(s) != json_string_length(v) || !valid_abs_path(s)) {
            r = lfail(ld, p, "entry %zu: expected a normalised absolute path of at most %d bytes",
                      i, SG_RUNTIME_PATH_MAX);
            break;
        }
        if (!(items[i] = strdup(s))) {
            r = sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
            break;
        }
        filled = i + 1;
    }
    const char *dup = NULL;
    int a = sg_strset_adopt(ret, items, filled, &dup);
    if (r == 0 && a == -EEXIST)
        r = lfail(ld, p, "duplicate entry \"%s\"", dup);
    return r;
}

static int get_enum2(const struct loader *ld, json_t *obj, const char *path, const char *key,
                     const char *zero, const char *one, int *ret)
{
    char p[PATH_MAX_LEN];
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    join_path(p, path, key);
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (strcmp(s, zero) == 0 || strcmp(s, one) == 0) {
        *ret = strcmp(s, one) == 0;
        return 0;
    }
    return lfail(ld, p, "expected \"%s\" or \"%s\"", zero, one);
}

/* "runtime": absent keys keep the closed defaults set by memset. */
static int load_runtime(const struct loader *ld, json_t *lang, const char *path,
                        struct sg_lang_policy *lp)
{
    static const char *const py_keys[] = {"processes", "network",    "imports",
                                          "files",     "read_paths", "native_code",
                                          "unpickle",  "reflection", NULL};
    static const char *const js_keys[] = {"processes", "network", "imports", "process_properties",
                                          NULL};
    struct sg_runtime_policy *rt = &lp->runtime;
    char p[PATH_MAX_LEN];
    json_t *o;
    int r, files = SG_RT_FILES_SANDBOX, imports = 1;
    rt->enforce_imports = 1;
    if ((r = get_object(ld, lang, path, "runtime", 0, &o)) < 0 || !o)
        return r;
    join_path(p, path, "runtime");
    if ((r = check_keys(ld, o, p, ld->js ? js_keys : py_keys)) < 0 ||
        (r = get_bool(ld, o, p, "processes", 0, &rt->processes)) < 0 ||
        (r = get_bool(ld, o, p, "network", 0, &rt->network)) < 0 ||
        (r = get_enum2(ld, o, p, "imports", "off", "policy", &imports)) < 0)
        return r;
    rt->enforce_imports = imports;
    if (ld->js)
        return get_strset(ld, o, p, "process_properties", 0, ITEM_IDENT, &rt->process_properties);
    if ((r = get_enum2(ld, o, p, "files", "sandbox", "any", &files)) < 0 ||
        (r = get_paths(ld, o, p, "read_paths", &rt->read_paths)) < 0 ||
        (r = get_bool(ld, o, p, "native_code", 0, &rt->native_code)) < 0 ||
        (r = get_bool(ld, o, p, "unpickle", 0, &rt->unpickle)) < 0)
        return r;
    rt->files = files ? SG_RT_FILES_ANY : SG_RT_FILES_SANDBOX;
    return get_bool(ld, o, p, "reflection", 0, &rt->reflection);
}

/* "network_modules", "network_names", "network_attributes": the networked
 * variant makes the modules importable (added to an allow-list, taken off a
 * deny-list), the names no longer forbidden, the attributes no longer
 * capability attributes, and the run-time network on. */
static int load_network(const struct loader *ld, json_t *lang, const char *path,
                        struct sg_lang_policy *lp)
{
    struct sg_strset attrs = {0};
    int r = get_strset(ld, lang, path, "network_modules", 0, ITEM_MODULE, &lp->network_modules);
    if (r == 0)
        r = get_strset(ld, lang, path, "network_names", 0, ITEM_IDENT, &lp->network_names);
    if (r == 0)
        r = get_strset(ld, lang, path, "network_attributes", 0, ITEM_IDENT, &attrs);
    if (r == 0 && ld->networked) {
        lp->runtime.network = 1;
        if (sg_strset_combine(&lp->modules, &lp->network_modules,
                              lp->import_mode == SG_IMPORTS_DENY) < 0 ||
            sg_strset_combine(&lp->forbidden_names, &lp->network_names, 1) < 0 ||
            sg_strset_combine(&lp->capability_attributes, &attrs, 1) < 0)
            r = sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
        sg_strset_free(&lp->network_modules);
        sg_strset_free(&lp->network_names);
    }
    sg_strset_free(&attrs);
    return r;
}

static int load_lang(struct loader *ld, json_t *root, const char *key, struct sg_lang_policy *lp)
{
    static const char *const keys[] = {"enabled",
                                       "imports",
                                       "forbidden_names",
                                       "forbidden_calls",
                                       "forbidden_attributes",
                                       "dunder_attributes",
                                       "private_attributes",
                                       "capability_attributes",
                                       "deny_dynamic_imports",
                                       "deny_dynamic_attributes",
                                       "limits",
                                       "runtime",
                                       "network_modules",
                                       "network_names",
                                       "network_attributes",
                                       NULL};
    json_t *lang;
    int r = get_object(ld, root, "", key, 1, &lang);
    if (r < 0)
        return r;
    if ((r = check_keys(ld, lang, key, keys)) < 0)
        return r;
    if ((r = get_bool(ld, lang, key, "enabled", 1, &lp->enabled)) < 0 ||
        (r = load_imports(ld, lang, key, lp)) < 0 ||
        (r = get_strset(ld, lang, key, "forbidden_names", 0, ITEM_IDENT, &lp->forbidden_names)) <
            0 ||
        (r = get_strset(ld, lang, key, "forbidden_calls", 0, ITEM_DOTTED, &lp->forbidden_calls)) <
            0 ||
        (r = get_strset(ld, lang, key, "forbidden_attributes", 0, ITEM_IDENT,
                        &lp->forbidden_attributes)) < 0 ||
        (r = load_dunders(ld, lang, key, lp)) < 0 || (r = load_privates(ld, lang, key, lp)) < 0 ||
        (r = get_strset(ld, lang, key, "capability_attributes", 0, ITEM_IDENT,
                        &lp->capability_attributes)) < 0 ||
        (r = get_bool(ld, lang, key, "deny_dynamic_imports", 1, &lp->deny_dynamic_imports)) < 0 ||
        (r = get_bool(ld, lang, key, "deny_dynamic_attributes", 1, &lp->deny_dynamic_attributes)) <
            0)
        return r;
    if ((r = load_limits(ld, lang, key, lp)) < 0 || (r = load_runtime(ld, lang, key, lp)) < 0)
        return r;
    return load_network(ld, lang, key, lp);
}

static int valid_policy_name(const char *s, size_t len)
{
    if (len == 0 || len > SG_POLICY_NAME_MAX || strlen(s) != len)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
            return 0;
    return 1;
}

static int load_header(const struct loader *ld, json_t *root, struct sg_policy *pol)
{
    json_t *name = json_object_get(root, "name");
    if (!name)
        return lfail(ld, "name", "required key missing");
    if (!json_is_string(name) ||
        !valid_policy_name(json_string_value(name), json_string_length(name)))
        return lfail(ld, "name", "expected a string of 1..%d characters [a-z0-9_-]",
                     SG_POLICY_NAME_MAX);
    json_t *desc = json_object_get(root, "description");
    if (desc && !json_is_string(desc))
        return lfail(ld, "description", "expected a string");
    if (desc && (json_string_length(desc) > SG_POLICY_DESCRIPTION_MAX ||
                 strlen(json_string_value(desc)) != json_string_length(desc)))
        return lfail(ld, "description", "at most %d bytes, no NUL", SG_POLICY_DESCRIPTION_MAX);
    pol->name = strdup(json_string_value(name));
    pol->description = strdup(desc ? json_string_value(desc) : "");
    if (!pol->name || !pol->description)
        return sg_error_set(ld->err, -ENOMEM, "%s: out of memory", ld->origin);
    return 0;
}

static int load_root(struct loader *ld, json_t *root, struct sg_policy *pol)
{
    static const char *const keys[] = {"name",   "description", "extends",
                                       "python", "javascript",  NULL};
    if (!json_is_object(root))
        return lfail(ld, "", "expected a JSON object at the top level");
    int r = check_keys(ld, root, "", keys);
    if (r < 0 || (r = load_header(ld, root, pol)) < 0)
        return r;
    /* policy_set.c merges a child with its parent and drops the key; here it
     * means the parent was not available */
    if (json_object_get(root, "extends"))
        return lfail(ld, "extends",
                     "the parent policy is resolved in a policies directory: "
                     "put this file there (sandgate -t, sandgate-check --policies-dir)");
    ld->js = 0;
    if ((r = load_lang(ld, root, "python", &pol->python)) < 0)
        return r;
    ld->js = 1;
    return load_lang(ld, root, "javascript", &pol->javascript);
}

int sg_policy_load_buf(const char *buf, size_t len, const char *origin,
                       struct sg_policy **ret_policy, struct sg_error *err)
{
    struct loader ld = {.origin = origin ? origin : "policy", .err = err};
    *ret_policy = NULL;
    if (len > SG_POLICY_FILE_MAX)
        return sg_error_set(err, -E2BIG, "%s: %zu bytes, at most %d allowed", ld.origin, len,
                            SG_POLICY_FILE_MAX);
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        char msg[SG_ERROR_MSG_MAX];
        if (snprintf(msg, sizeof(msg), "%s: line %d column %d: %s", ld.origin, jerr.line,
                     jerr.column, jerr.text) < 0)
            msg[0] = '\0';
        return set_clean_error(err, -EINVAL, msg);
    }
    char sha[65];
    sg_sha256_hex(buf, len, sha);
    int r = sg_policy_load_doc(root, ld.origin, sha, ret_policy, err);
    json_decref(root);
    return r;
}

int sg_policy_load_doc(json_t *root, const char *origin, const char *sha256_hex,
                       struct sg_policy **ret_policy, struct sg_error *err)
{
    struct loader ld = {.origin = origin ? origin : "policy", .err = err};
    *ret_policy = NULL;
    struct sg_policy *pol = calloc(1, sizeof(*pol));
    int r = pol ? load_root(&ld, root, pol)
                : sg_error_set(err, -ENOMEM, "%s: out of memory", ld.origin);
    if (r < 0) {
        sg_policy_free(pol);
        return r;
    }
    snprintf(pol->sha256, sizeof(pol->sha256), "%s", sha256_hex);
    pol->doc = json_incref(root);
    /* the networked variant: the same document, loaded with networked set */
    ld.networked = 1;
    struct sg_policy *net = calloc(1, sizeof(*net));
    r = net ? load_root(&ld, root, net)
            : sg_error_set(err, -ENOMEM, "%s: out of memory", ld.origin);
    if (r < 0) {
        sg_policy_free(net);
        sg_policy_free(pol);
        return r;
    }
    char id[sizeof(pol->sha256) + sizeof("+network")];
    snprintf(id, sizeof(id), "%s+network", sha256_hex);
    sg_sha256_hex(id, strlen(id), net->sha256);
    pol->network = net;
    *ret_policy = pol;
    return 0;
}

int sg_policy_load_file(const char *path, struct sg_policy **ret_policy, struct sg_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    *ret_policy = NULL;
    int r = sg_read_file_capped(path, SG_POLICY_FILE_MAX, &buf, &len, err);
    if (r < 0)
        return r;
    r = sg_policy_load_buf(buf, len, path, ret_policy, err);
    free(buf);
    return r;
}

int sg_lang_policy_allows_import(const struct sg_lang_policy *lp, const char *module, char sep)
{
    if (!lp->enabled || !module || !*module)
        return 0;
    int listed = sg_strset_has_prefix(&lp->modules, module, sep);
    return lp->import_mode == SG_IMPORTS_ALLOW ? listed : !listed;
}

static void lang_policy_free(struct sg_lang_policy *lp)
{
    sg_strset_free(&lp->modules);
    sg_strset_free(&lp->network_modules);
    sg_strset_free(&lp->network_names);
    sg_strset_free(&lp->forbidden_names);
    sg_strset_free(&lp->forbidden_calls);
    sg_strset_free(&lp->forbidden_attributes);
    sg_strset_free(&lp->allowed_dunders);
    sg_strset_free(&lp->allowed_privates);
    sg_strset_free(&lp->capability_attributes);
    sg_strset_free(&lp->runtime.read_paths);
    sg_strset_free(&lp->runtime.process_properties);
}

void sg_policy_free(struct sg_policy *policy)
{
    if (!policy)
        return;
    free(policy->name);
    free(policy->description);
    lang_policy_free(&policy->python);
    lang_policy_free(&policy->javascript);
    sg_policy_free(policy->network);
    json_decref(policy->doc);
    free(policy);
}
