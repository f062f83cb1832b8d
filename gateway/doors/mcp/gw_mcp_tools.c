#include "gw_mcp_tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "gw_mcp_content.h"
#include "gw_mcp_rpc.h"
#include "gw_mcp_stools.h"
#include "policy.h"
#include "sg_lang.h"

#define DESCRIPTION_MAX (16u * 1024u) /* bytes of one generated description */

static const char *const lang_names[SG_LANG_COUNT] = {"python", "nodejs"};

static const struct sg_lang_policy *lang_policy(const struct sg_policy *p, int lang)
{
    return lang == SG_LANG_JAVASCRIPT ? &p->javascript : &p->python;
}

/* "a, b, c and N more" from a set, at most GW_MCP_MODULES_SHOWN names. */
static void list_names(struct sg_buf *b, const struct sg_strset *set)
{
    size_t shown = set->count < GW_MCP_MODULES_SHOWN ? set->count : GW_MCP_MODULES_SHOWN;
    for (size_t i = 0; i < shown; i++)
        sg_buf_printf(b, "%s%s", i ? ", " : "", set->items[i]);
    if (shown < set->count)
        sg_buf_printf(b, " and %zu more (list_runtimes lists them all)", set->count - shown);
    if (!set->count)
        sg_buf_printf(b, "none");
}

static void describe_lang(struct sg_buf *b, const struct sg_policy *p, int lang)
{
    const struct sg_lang_policy *lp = lang_policy(p, lang);
    if (!lp->enabled) {
        sg_buf_printf(b, "\n- %s: disabled by this policy.", lang_names[lang]);
        return;
    }
    if (lang == SG_LANG_JAVASCRIPT)
        sg_buf_printf(b, "\n- nodejs (Node.js, CommonJS): define `function main(args)` and "
                         "export it: `module.exports = { main };`. main is called with the "
                         "`arguments` object; its return value (or what its promise resolves "
                         "to) is the result.");
    else
        sg_buf_printf(b, "\n- python (Python 3): define `def main(**arguments)`; it is called "
                         "with the `arguments` object as keyword arguments and its return "
                         "value (JSON-serialisable) is the result.");
    sg_buf_printf(b, " %s modules: ",
                  lp->import_mode == SG_IMPORTS_ALLOW
                      ? "Only these may be imported (and their submodules)"
                      : "Every module may be imported except");
    list_names(b, &lp->modules);
    sg_buf_printf(b, ".");
    if (lp->forbidden_names.count) {
        sg_buf_printf(b, " Forbidden names: ");
        list_names(b, &lp->forbidden_names);
        sg_buf_printf(b, ".");
    }
    sg_buf_printf(b, " Network: %s. Child processes: %s.", lp->runtime.network ? "allowed" : "off",
                  lp->runtime.processes ? "allowed" : "not allowed");
}

static char *run_description(const struct gw_mcp_caller *c, const struct sg_policy *p)
{
    struct sg_buf b;
    sg_buf_init(&b, DESCRIPTION_MAX);
    sg_buf_printf(&b,
                  "Run code once in a fresh, isolated sandbox and return its output. The "
                  "code is checked against policy '%s' first (unless `policy` names "
                  "another) and rejected code does not run: the error names the rule, "
                  "line and column so you can fix it.",
                  p->name);
    for (int l = 0; l < SG_LANG_COUNT; l++)
        describe_lang(&b, p, l);
    sg_buf_printf(&b,
                  "\nprint/console output comes back as stdout and stderr. `files` "
                  "(name -> base64) are placed in the working directory; files the code "
                  "writes under `artifacts/` come back (PNG, JPEG and SVG as images). Code "
                  "is at most %llu bytes; a run stops after %llu ms by default.",
                  (unsigned long long)c->jobs->cfg->max_code_bytes,
                  (unsigned long long)c->jobs->cfg->default_timeout_ms);
    size_t len;
    return sg_buf_steal(&b, &len);
}

static json_t *code_schema(const struct gw_mcp_caller *c, const struct sg_policy *def, int run)
{
    json_t *props =
        json_pack("{s:{s:s,s:[ss],s:s},s:{s:s,s:s},s:{s:s,s:o,s:s}}", "language", "type", "string",
                  "enum", "python", "nodejs", "description", "The language of `code`.", "code",
                  "type", "string", "description", "The complete source file.", "policy", "type",
                  "string", "enum", gw_mcp_policy_enum(c, def), "description",
                  "Policy to check against (default: the caller's).");
    if (props && run) {
        json_object_set_new(props, "arguments",
                            json_pack("{s:s,s:s}", "type", "object", "description",
                                      "Passed to main (Python: as keyword arguments)."));
        json_object_set_new(props, "files",
                            json_pack("{s:s,s:{s:s},s:s}", "type", "object", "additionalProperties",
                                      "type", "string", "description",
                                      "Input files: name -> base64 content."));
    }
    return json_pack("{s:s,s:o,s:[ss],s:b}", "type", "object", "properties", props, "required",
                     "language", "code", "additionalProperties", 0);
}

json_t *gw_mcp_tools_list(const struct gw_mcp_caller *c)
{
    const struct sg_policy *def = gw_ruleset_policy(c->rs, c->tenant, NULL);
    if (!def)
        return NULL;
    char *run = run_description(c, def);
    char check[512];
    snprintf(check, sizeof(check),
             "Check code against a policy without running it (default "
             "'%s'). Returns accept or reject and every violation with rule, line and column. "
             "Same languages and rules as run_code.",
             def->name);
    json_t *tools = json_pack(
        "{s:[{s:s,s:s,s:o,s:{s:b}},{s:s,s:s,s:o,s:{s:b}},{s:s,s:s,s:{s:s,s:{s:{s:s,s:o}},s:b},"
        "s:{s:b}}]}",
        "tools", "name", "run_code", "description", run ? run : "", "inputSchema",
        code_schema(c, def, 1), "annotations", "openWorldHint", 0, "name", "check_code",
        "description", check, "inputSchema", code_schema(c, def, 0), "annotations", "readOnlyHint",
        1, "name", "list_runtimes", "description",
        "List the languages and, per policy, which modules code may import, which names are "
        "forbidden and whether the network is on; and the installed packages (with versions) "
        "and which of them the policy lets code import.",
        "inputSchema", "type", "object", "properties", "policy", "type", "string", "enum",
        gw_mcp_policy_enum(c, def), "additionalProperties", 0, "annotations", "readOnlyHint", 1);
    free(run);
    json_t *more = tools && c->code_sessions ? gw_mcp_stools_list(c, def) : NULL;
    if (more)
        json_array_extend(json_object_get(tools, "tools"), more);
    json_decref(more);
    return tools;
}

static json_t *strset_json(const struct sg_strset *s)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < s->count; i++)
        json_array_append_new(a, json_string(s->items[i]));
    return a;
}

static json_t *runtime_lang(const struct sg_policy *p, int lang)
{
    const struct sg_lang_policy *lp = lang_policy(p, lang);
    return json_pack(
        "{s:s,s:b,s:{s:s,s:o},s:o,s:o,s:b,s:b}", "language", lang_names[lang], "enabled",
        lp->enabled, "imports", "mode", lp->import_mode == SG_IMPORTS_ALLOW ? "allow" : "deny",
        "modules", strset_json(&lp->modules), "forbidden_names", strset_json(&lp->forbidden_names),
        "forbidden_calls", strset_json(&lp->forbidden_calls), "network", lp->runtime.network,
        "processes", lp->runtime.processes);
}

/* One text block with a JSON document; the document is taken over. */
static json_t *json_result(json_t *doc, int is_error)
{
    char *t = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    json_t *r = t ? gw_mcp_text_result(t, is_error) : NULL;
    free(t);
    return r;
}

/* What the images have installed and which of it each of the caller's
 * policies lets a job import: GET /v1/runtimes's "runtimes", or why not. */
static json_t *installed(const struct gw_mcp_caller *c)
{
    if (!c->runtimes)
        return json_pack("{s:b,s:s}", "available", 0, "error", "no runtime listing");
    struct sg_http_response resp = {.status = 200};
    c->runtimes(c->runtimes_ctx, c->req, &resp);
    size_t len = resp.body_len ? resp.body_len : (resp.body ? strlen(resp.body) : 0);
    json_t *o = resp.body ? json_loadb(resp.body, len, 0, NULL) : NULL;
    free(resp.body);
    json_t *r = resp.status == 200 ? json_object_get(o, "runtimes") : NULL;
    r = r ? json_incref(r)
          : json_pack("{s:b,s:s}", "available", 0, "error", "the runtime listing failed");
    json_decref(o);
    return r;
}

static int list_runtimes(const struct gw_mcp_caller *c, json_t *args, json_t **ret, char *msg)
{
    const char *want = json_string_value(json_object_get(args, "policy"));
    const struct sg_policy *def = gw_ruleset_policy(c->rs, c->tenant, NULL);
    const struct sg_policy *p = gw_ruleset_policy(c->rs, c->tenant, want);
    if (!def || !p || (want && c->tenant && p != def && !gw_tenant_may_use(c->tenant, want))) {
        *ret = json_result(json_pack("{s:{s:s,s:s}}", "error", "code", "policy_not_allowed",
                                     "message", "policy: not loaded or not allowed for you"),
                           1);
        return *ret ? 0 : (snprintf(msg, 256, "out of memory"), GW_RPC_INTERNAL_ERROR);
    }
    json_t *langs = json_array();
    for (int l = 0; langs && l < SG_LANG_COUNT; l++)
        json_array_append_new(langs, runtime_lang(p, l));
    *ret = json_result(json_pack("{s:{s:s,s:s},s:o,s:o,s:o}", "policy", "name", p->name, "sha256",
                                 p->sha256, "languages", langs, "policies",
                                 gw_mcp_policy_enum(c, def), "installed", installed(c)),
                       0);
    gw_jobs_tool_note(c->jobs, "list_runtimes", c->tenant, c->req,
                      &(struct sg_http_response){.status = 200}, "ok");
    return *ret ? 0 : (snprintf(msg, 256, "out of memory"), GW_RPC_INTERNAL_ERROR);
}

/* The schema check: required keys, known keys, JSON types. Values (language
 * names, base64, sizes) are the pipeline's to judge, as for POST /v1/run. */
static int check_args(json_t *args, int run, char *msg)
{
    static const char *const keys[] = {"language", "code", "policy", "arguments", "files"};
    const char *k;
    json_t *v;
    json_object_foreach(args, k, v)
    {
        size_t i, n = run ? 5 : 3;
        for (i = 0; i < n && strcmp(k, keys[i]) != 0; i++)
            ;
        if (i == n)
            return snprintf(msg, 256, "arguments.%.64s: unknown (schema: %s)", k,
                            run ? "language, code, arguments, files, policy"
                                : "language, code, policy"),
                   GW_RPC_INVALID_PARAMS;
        int ok = i < 3 ? json_is_string(v) : json_is_object(v);
        if (!ok)
            return snprintf(msg, 256, "arguments.%s: expected %s", k,
                            i < 3 ? "a string" : "an object"),
                   GW_RPC_INVALID_PARAMS;
    }
    for (size_t i = 0; i < 2; i++)
        if (!json_object_get(args, keys[i]))
            return snprintf(msg, 256, "arguments.%s: required", keys[i]), GW_RPC_INVALID_PARAMS;
    return 0;
}

static int code_tool(const struct gw_mcp_caller *c, const char *tool, json_t *args, int run,
                     json_t **ret, char *msg)
{
    int r = check_args(args, run, msg);
    if (r < 0)
        return r;
    char *body = json_dumps(args, JSON_COMPACT);
    if (!body)
        return snprintf(msg, 256, "out of memory"), GW_RPC_INTERNAL_ERROR;
    struct sg_http_request req = *c->req;
    req.body = body;
    req.body_len = strlen(body);
    struct sg_http_response resp = {.status = 200};
    gw_jobs_tool(c->jobs, tool, run ? GW_REQ_RUN : GW_REQ_ANALYZE, &req, run ? c->sink : NULL,
                 run ? c->job_id : NULL, &resp);
    free(body);
    size_t len = resp.body_len ? resp.body_len : (resp.body ? strlen(resp.body) : 0);
    json_t *o = resp.body ? json_loadb(resp.body, len, 0, NULL) : NULL;
    free(resp.body);
    const char *rid = gw_mcp_request_id(&resp);
    if (resp.status != 200)
        *ret = gw_mcp_error_result(resp.status, o, rid);
    else if (!json_is_object(o))
        *ret = gw_mcp_text_result("internal: unreadable answer", 1);
    else
        *ret = run ? gw_mcp_run_result(o) : gw_mcp_analysis_result(o, rid);
    json_decref(o);
    return *ret ? 0 : (snprintf(msg, 256, "out of memory"), GW_RPC_INTERNAL_ERROR);
}

int gw_mcp_tools_call(const struct gw_mcp_caller *c, json_t *params, json_t **ret, char msg[256])
{
    *ret = NULL;
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    json_t *empty = NULL;
    if (!name)
        return snprintf(msg, 256, "params.name: expected a tool name"), GW_RPC_INVALID_PARAMS;
    if (args && !json_is_object(args))
        return snprintf(msg, 256, "params.arguments: expected an object"), GW_RPC_INVALID_PARAMS;
    if (!args)
        args = empty = json_object();
    int r;
    if (strcmp(name, "run_code") == 0)
        r = code_tool(c, "run_code", args, 1, ret, msg);
    else if (strcmp(name, "check_code") == 0)
        r = code_tool(c, "check_code", args, 0, ret, msg);
    else if (c->code_sessions && gw_mcp_stools_has(name))
        r = gw_mcp_stools_call(c, name, args, ret, msg);
    else if (strcmp(name, "list_runtimes") == 0)
        r = json_object_size(args) > (json_object_get(args, "policy") ? 1u : 0u) ||
                    (json_object_get(args, "policy") &&
                     !json_is_string(json_object_get(args, "policy")))
                ? (snprintf(msg, 256, "arguments: list_runtimes takes only `policy`, a string"),
                   GW_RPC_INVALID_PARAMS)
                : list_runtimes(c, args, ret, msg);
    else
        r = (snprintf(
                 msg, 256,
                 "unknown tool '%.64s' (run_code, check_code, list_runtimes, " GW_MCP_STOOLS_NAMES
                 ")",
                 name),
             GW_RPC_INVALID_PARAMS);
    json_decref(empty);
    return r;
}
