/* js_modules.c - module loading rules of the JavaScript analyzer:
 * require("m"), import("m"), `import ... from "m"`, `export ... from "m"`,
 * and timers given a string of code (js_modules.h).
 *
 * A module specifier is matched after folding (`"child" + "_process"`),
 * unescaping ("\x63hild_process") and dropping the `node:` scheme
 * (`node:child_process` is `child_process`); an entry covers its subpaths
 * (`fs` covers `fs/promises`). File paths and URLs (`./x`, `/x`,
 * `data:...`, `file:...`) load code the policy cannot see and are never
 * allowed, whatever the mode.
 */
#include "js_modules.h"

#include <string.h>

#include "js_consts.h"
#include "js_fold.h"
#include "rules.h"

#define SHOWN "%.80s"
#define NODE_SCHEME "node:"

/* Specifiers that are (or may resolve to) paths, URLs or escapes from a
 * package directory: "./x", "/x", "data:...", "crypto/../x" (resolved in
 * node_modules), "a//b", "%2e" (percent-decoded by the ESM resolver). */
static int is_path_like(const char *m)
{
    if (!*m || *m == '.' || *m == '/' || strpbrk(m, ":\\%"))
        return 1;
    for (const char *seg = m; seg; seg = strchr(seg, '/')) {
        seg += *seg == '/';
        size_t n = strcspn(seg, "/");
        if ((n == 0 && seg[n] == '/') || (n == 1 && seg[0] == '.') ||
            (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return 1;
    }
    return 0;
}

/* The package part of a bare specifier: "lodash" of "lodash/fp",
 * "@scope/pkg" of "@scope/pkg/sub" (for the pool choice, imports.h). */
static size_t top_level_len(const char *m)
{
    size_t n = strcspn(m, "/");
    if (m[0] == '@' && m[n] == '/')
        n += 1 + strcspn(m + n + 1, "/");
    return n;
}

/* Decide on the specifier `spec` loaded by `how` (reported at `at`). */
static void check_specifier(struct js_ctx *c, TSNode at, const struct js_str *spec, const char *how)
{
    const struct sg_lang_policy *lp = c->lp;
    const char *m = spec->buf;
    if (strncmp(m, NODE_SCHEME, strlen(NODE_SCHEME)) == 0)
        m += strlen(NODE_SCHEME);
    if (is_path_like(m)) {
        js_report(c, at, SG_RULE_IMPORT_NOT_ALLOWED,
                  "%s of '" SHOWN "' is not allowed: only module names may be loaded, not file "
                  "paths or URLs",
                  how, spec->buf);
        return;
    }
    sg_imports_add(c->imports, m, top_level_len(m));
    int listed = sg_strset_has_prefix(&lp->modules, m, '/');
    int refused = lp->import_mode == SG_IMPORTS_ALLOW ? !listed : listed;
    if (refused && sg_strset_has_prefix(&lp->network_modules, m, '/'))
        js_report(c, at, SG_RULE_NETWORK_DISABLED, "%s of module '" SHOWN "': %s", how, m,
                  SG_NETWORK_DISABLED_HOW);
    else if (lp->import_mode == SG_IMPORTS_ALLOW && !listed)
        js_report(c, at, SG_RULE_IMPORT_NOT_ALLOWED, "%s of module '" SHOWN "' is not allowed", how,
                  m);
    else if (lp->import_mode == SG_IMPORTS_DENY && listed)
        js_report(c, at, SG_RULE_IMPORT_DENIED, "%s of module '" SHOWN "' is denied by the policy",
                  how, m);
}

/* The module argument of require(...) / import(...). */
static void check_module_arg(struct js_ctx *c, TSNode call, TSNode args, const char *how)
{
    struct js_str spec;
    TSNode arg = {0};
    enum js_fold_kind k = JS_FOLD_DYNAMIC;
    /* require`x` (a tagged template) passes an array, not a name */
    if (js_is(args, c->sy->arguments)) {
        arg = js_first_arg(c, args);
        if (!ts_node_is_null(arg) && !js_is(arg, c->sy->spread_element))
            k = js_fold(c->sy, c->src, arg, &spec);
    }
    if (k == JS_FOLD_STRING) {
        check_specifier(c, arg, &spec, how);
        return;
    }
    if (k == JS_FOLD_COMPLEX || c->lp->deny_dynamic_imports)
        js_report(c, ts_node_is_null(arg) ? call : arg, SG_RULE_IMPORT_DYNAMIC,
                  "%s with a module name that is not a constant", how);
}

/* setTimeout("code") evaluates the string in browsers; Node throws, but a
 * string there is never legitimate, so it is rejected outright. */
static void check_timer(struct js_ctx *c, TSNode args, const struct js_str *fn)
{
    struct js_str v;
    TSNode arg = js_is(args, c->sy->arguments) ? js_first_arg(c, args) : (TSNode){0};
    if (ts_node_is_null(arg))
        return;
    enum js_fold_kind k = js_fold(c->sy, c->src, arg, &v);
    if (k == JS_FOLD_DYNAMIC)
        js_consts_defer(c, arg, JS_DEFER_TIMER); /* setTimeout(code) with const code = ... */
    if (k == JS_FOLD_STRING || k == JS_FOLD_COMPLEX)
        js_report(c, arg, SG_RULE_CALL_FORBIDDEN, "%s with a string argument evaluates code",
                  fn->buf);
}

void js_check_call(struct js_ctx *c, TSNode call)
{
    static const char *const timers[] = {"setTimeout", "setInterval", "setImmediate"};
    struct js_str name;
    TSNode fn = js_head(call), args = js_tail(call);
    if (js_is(fn, c->sy->import)) {
        check_module_arg(c, call, args, "import()");
        return;
    }
    if (!js_is(fn, c->sy->identifier))
        return;
    js_node_name(c, fn, &name);
    if (js_name_is(&name, "require")) {
        check_module_arg(c, call, args, "require");
        return;
    }
    for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
        if (js_name_is(&name, timers[i]))
            check_timer(c, args, &name);
}

void js_check_module_source(struct js_ctx *c, TSNode stmt)
{
    struct js_str spec;
    TSNode src = ts_node_child_by_field_id(stmt, c->sy->f_source);
    if (ts_node_is_null(src))
        return; /* export of local declarations */
    if (js_fold(c->sy, c->src, src, &spec) == JS_FOLD_STRING)
        check_specifier(c, src, &spec, js_is(stmt, c->sy->import_statement) ? "import" : "export");
}
