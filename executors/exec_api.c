#include "exec_api.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "json_nesting.h"
#include "sg_file_name.h"
#include "sg_netallow.h"
#include "sg_random.h"

int exec_job_id_valid(const char *id)
{
    size_t n = 0;
    for (; id[n]; n++) {
        char c = id[n];
        if (n >= EXEC_JOB_ID_MAX || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return n > 0;
}

int exec_import_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > EXEC_IMPORT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '@' || c == '/' || c == ':' || c == '-'))
            return 0;
    }
    return 1;
}

/* "flavour": a warm pool flavour's name to try first (RAGFlow's base_image);
 * an unknown name is no error (the imports choose). */
static int parse_flavour(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *f = json_object_get(root, "flavour");
    if (!f || json_is_null(f))
        return 0;
    size_t n = json_string_length(f);
    if (!json_is_string(f) || n < 1 || n > 31 ||
        strspn(json_string_value(f), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-") != n)
        return sg_error_set(err, -EINVAL, "flavour must be a name of 1..31 [A-Za-z0-9_-]");
    r->flavour = json_string_value(f);
    return 0;
}

static int parse_imports(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *a = json_object_get(root, "imports");
    if (parse_flavour(root, r, err) < 0)
        return -EINVAL;
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a))
        return sg_error_set(err, -EINVAL, "imports must be an array of module names");
    if (json_array_size(a) > EXEC_IMPORTS_MAX)
        return sg_error_set(err, -E2BIG, "more than %d imports", EXEC_IMPORTS_MAX);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(v) ||
            !exec_import_name_valid(json_string_value(v), json_string_length(v)))
            return sg_error_set(err, -EINVAL,
                                "imports[%zu] must be a module name of 1..%d "
                                "bytes [A-Za-z0-9_.@/:-]",
                                i, EXEC_IMPORT_NAME_MAX);
        r->imports[r->n_imports++] = json_string_value(v);
    }
    return 0;
}

static int parse_arguments(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *a = json_object_get(root, "arguments");
    if (!a || json_is_null(a)) {
        r->arguments = json_object();
        json_object_set_new(root, "arguments", r->arguments);
        return 0;
    }
    if (!json_is_object(a))
        return sg_error_set(err, -EINVAL, "arguments must be an object");
    if (sg_json_nesting_exceeds(a, EXEC_ARGS_DEPTH_MAX))
        return sg_error_set(err, -EINVAL, "arguments nest deeper than %d levels",
                            EXEC_ARGS_DEPTH_MAX);
    size_t n = json_dumpb(a, NULL, 0, JSON_COMPACT);
    if (n > EXEC_ARGS_MAX)
        return sg_error_set(err, -E2BIG, "arguments exceed %u bytes", EXEC_ARGS_MAX);
    r->arguments = a;
    return 0;
}

/* Whether text (len bytes, strictly decoded to raw[0..n)) is already the
 * canonical encoding of raw: no whitespace (the length is exactly the
 * encoding's) and its last quantum is the canonical one (full quanta map
 * one to one; only the last may carry stray bits). */
static bool b64_canonical(const char *text, size_t len, const unsigned char *raw, size_t n)
{
    if (len != (n + 2) / 3 * 4)
        return false;
    if (n == 0)
        return true;
    size_t tail = n % 3 ? n % 3 : 3;
    char *enc = NULL;
    size_t enc_len = 0;
    if (sg_b64_encode(raw + n - tail, tail, &enc, &enc_len) < 0)
        return false;
    bool same = enc_len == 4 && memcmp(text + len - 4, enc, 4) == 0;
    free(enc);
    return same;
}

/* A file's value for the runner: the request's own string when it is
 * canonical base64 (no copy), else the canonical re-encoding. NULL: no memory. */
static json_t *file_value(json_t *v, const unsigned char *raw, size_t n)
{
    if (b64_canonical(json_string_value(v), json_string_length(v), raw, n))
        return json_incref(v);
    char *canon = NULL;
    if (sg_b64_encode(raw, n, &canon, NULL) < 0)
        return NULL;
    json_t *s = json_string(canon);
    free(canon);
    return s;
}

/* Decode each file strictly; a value not in canonical form is re-encoded:
 * the runner then never sees base64 its own decoder might read differently. */
static int parse_files(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *f = json_object_get(root, "files");
    r->files = json_object();
    if (!f || json_is_null(f))
        return 0;
    if (!json_is_object(f))
        return sg_error_set(err, -EINVAL, "files must be an object of name: base64");
    if (json_object_size(f) > EXEC_FILES_MAX)
        return sg_error_set(err, -E2BIG, "more than %d files", EXEC_FILES_MAX);
    size_t total = 0;
    const char *name;
    json_t *v;
    json_object_foreach(f, name, v)
    {
        if (!sg_file_name_ok(name, strlen(name)))
            return sg_error_set(err, -EINVAL,
                                "file name '%.64s' is not allowed (" SG_FILE_NAME_RULE ")", name);
        if (sg_file_name_reserved(name, strlen(name)))
            return sg_error_set(err, -EINVAL,
                                "file name '%s' is reserved (the runners write "
                                "main.py, main.js and artifacts themselves)",
                                name);
        if (!json_is_string(v))
            return sg_error_set(err, -EINVAL, "file '%.64s' must be a base64 string", name);
        unsigned char *raw = NULL;
        size_t rawlen = 0;
        struct sg_error e;
        if (sg_b64_decode(json_string_value(v), json_string_length(v), EXEC_FILES_BYTES_MAX - total,
                          &raw, &rawlen, &e) < 0)
            return sg_error_set(err, e.code == -E2BIG ? -E2BIG : -EINVAL, "file '%.64s': %s", name,
                                e.code == -E2BIG ? "files exceed their total size cap" : e.msg);
        total += rawlen;
        json_t *value = file_value(v, raw, rawlen);
        free(raw);
        if (!value || json_object_set_new(r->files, name, value) < 0)
            return sg_error_set(err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* One list of the run-time policy: strings of 1..EXEC_RT_ITEM_MAX printable
 * ASCII bytes (module names, paths, property names). The runner checks each
 * entry's form again; here the shape and the size are bounded. */
static int rt_list(json_t *v, const char *key, struct sg_error *err)
{
    size_t i;
    json_t *e;
    if (!json_is_array(v) || json_array_size(v) > EXEC_RT_LIST_MAX)
        return sg_error_set(err, -EINVAL, "runtime.%s must be an array of at most %d strings", key,
                            EXEC_RT_LIST_MAX);
    json_array_foreach(v, i, e)
    {
        const char *s = json_string_value(e);
        size_t n = json_string_length(e);
        if (!s || n == 0 || n > EXEC_RT_ITEM_MAX)
            return sg_error_set(err, -EINVAL, "runtime.%s[%zu] must be a string of 1..%d bytes",
                                key, i, EXEC_RT_ITEM_MAX);
        for (size_t k = 0; k < n; k++)
            if ((unsigned char)s[k] < 0x20 || (unsigned char)s[k] >= 0x7f)
                return sg_error_set(err, -EINVAL, "runtime.%s[%zu]: printable ASCII only", key, i);
    }
    return 0;
}

static int rt_imports(json_t *v, struct sg_error *err)
{
    if (json_is_null(v))
        return 0;
    const char *mode = json_string_value(json_object_get(v, "mode"));
    if (!json_is_object(v) || json_object_size(v) != 2 || !mode ||
        (strcmp(mode, "allow") && strcmp(mode, "deny")))
        return sg_error_set(err, -EINVAL,
                            "runtime.imports must be null or {\"mode\": "
                            "\"allow\"|\"deny\", \"modules\": [...]}");
    json_t *m = json_object_get(v, "modules");
    return m ? rt_list(m, "imports.modules", err)
             : sg_error_set(err, -EINVAL, "runtime.imports.modules is required");
}

/* The job's run-time policy (policies/README.md): every key required, no
 * other key, the language's own set. Absent: the runner enforces none. */
static int parse_runtime(json_t *root, const struct exec_config *cfg, struct exec_request *r,
                         struct sg_error *err)
{
    static const char *const py[] = {"processes",   "network",  "imports",    "files", "read_paths",
                                     "native_code", "unpickle", "reflection", NULL};
    static const char *const js[] = {"processes", "network", "imports", "process_properties", NULL};
    json_t *rt = json_object_get(root, "runtime");
    if (!rt || json_is_null(rt))
        return 0;
    const char *const *keys = cfg->language == SG_LANG_PYTHON ? py : js;
    size_t n = 0;
    if (!json_is_object(rt))
        return sg_error_set(err, -EINVAL, "runtime must be an object");
    for (; keys[n]; n++) {
        json_t *v = json_object_get(rt, keys[n]);
        const char *k = keys[n];
        int rr = 0;
        if (!v)
            rr = sg_error_set(err, -EINVAL, "runtime.%s is required", k);
        else if (!strcmp(k, "read_paths") || !strcmp(k, "process_properties"))
            rr = rt_list(v, k, err);
        else if (!strcmp(k, "imports"))
            rr = rt_imports(v, err);
        else if (!strcmp(k, "files")
                     ? !json_is_string(v) || (strcmp(json_string_value(v), "sandbox") &&
                                              strcmp(json_string_value(v), "any"))
                     : !json_is_boolean(v))
            rr = sg_error_set(err, -EINVAL, "runtime.%s has the wrong type or value", k);
        if (rr < 0)
            return rr;
    }
    if (json_object_size(rt) != n)
        return sg_error_set(err, -EINVAL,
                            "runtime has keys this executor's language does not "
                            "know (expected exactly: %s...)",
                            keys[0]);
    r->runtime = rt;
    return 0;
}

static int limit_value(json_t *lim, const char *key, unsigned long long max,
                       unsigned long long *ret, struct exec_request *r, struct sg_error *err)
{
    json_t *v = json_object_get(lim, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return sg_error_set(err, -EINVAL, "limits.%s must be a positive integer", key);
    unsigned long long n = (unsigned long long)json_integer_value(v);
    if (n > max) {
        n = max;
        r->clamped[r->n_clamped++] = key;
    }
    *ret = n;
    return 0;
}

/* RAGFlow's SANDBOX_ENABLE_SECCOMP reaches us as limits.enable_seccomp. The
 * filter is part of the pooled container, fixed before the job: a job that
 * asks for seccomp on an executor without a profile is refused (fail closed);
 * asking for false never relaxes the executor's own setting. */
static int check_seccomp_request(json_t *v, const struct exec_config *cfg, struct sg_error *err)
{
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return sg_error_set(err, -EINVAL, "limits.enable_seccomp must be a boolean");
    if (json_is_true(v) && cfg->seccomp_off)
        return sg_error_set(err, -EINVAL,
                            "limits.enable_seccomp: this executor runs without a "
                            "seccomp profile (started with --seccomp none)");
    return 0;
}

static int parse_limits(json_t *root, const struct exec_config *cfg, struct exec_request *r,
                        struct sg_error *err)
{
    r->limits.timeout_ms = cfg->timeout_ms;
    r->limits.memory_mb = cfg->memory_mb;
    r->limits.max_output_bytes = cfg->max_output_bytes;
    json_t *lim = json_object_get(root, "limits");
    if (!lim || json_is_null(lim))
        return 0;
    if (!json_is_object(lim))
        return sg_error_set(err, -EINVAL, "limits must be an object");
    const char *k;
    json_t *v;
    json_object_foreach(lim, k, v)
    {
        if (strcmp(k, "timeout_ms") != 0 && strcmp(k, "memory_mb") != 0 &&
            strcmp(k, "max_output_bytes") != 0 && strcmp(k, "enable_seccomp") != 0)
            return sg_error_set(err, -EINVAL, "unknown limit '%.32s'", k);
    }
    int rs = check_seccomp_request(json_object_get(lim, "enable_seccomp"), cfg, err);
    if (rs < 0)
        return rs;
    unsigned long long t = r->limits.timeout_ms, m = r->limits.memory_mb,
                       o = r->limits.max_output_bytes;
    int rr;
    if ((rr = limit_value(lim, "timeout_ms", cfg->max_timeout_ms, &t, r, err)) < 0 ||
        (rr = limit_value(lim, "memory_mb", cfg->memory_mb, &m, r, err)) < 0 ||
        (rr = limit_value(lim, "max_output_bytes", cfg->max_output_bytes, &o, r, err)) < 0)
        return rr;
    r->limits.timeout_ms = (unsigned)t;
    /* memory_mb: containers are created before the job with the pool's limit
     * (runsc cannot change it later), so a lower request cannot be applied
     * either; it is listed with the clamped limits so the caller knows. */
    if (m < cfg->memory_mb)
        r->clamped[r->n_clamped++] = "memory_mb";
    r->limits.max_output_bytes = (size_t)o;
    return 0;
}

/* "mode": "main" (default: call main(arguments)) or "script" (run the code
 * as the program itself, no main() call: Dify's sandbox API). */
static int parse_mode(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *mode = json_object_get(root, "mode");
    const char *m = json_string_value(mode);
    if (mode && !json_is_null(mode) && (!m || (strcmp(m, "main") && strcmp(m, "script"))))
        return sg_error_set(err, -EINVAL, "mode must be \"main\" or \"script\"");
    r->script = m && strcmp(m, "script") == 0;
    return 0;
}

static int parse_ids(json_t *root, const struct exec_config *cfg, bool need_code,
                     struct exec_request *r, struct sg_error *err)
{
    json_t *id = json_object_get(root, "job_id");
    if (id && !json_is_null(id)) {
        if (!json_is_string(id) || !exec_job_id_valid(json_string_value(id)))
            return sg_error_set(err, -EINVAL, "job_id must match [A-Za-z0-9._-]{1,64}");
        snprintf(r->job_id, sizeof(r->job_id), "%s", json_string_value(id));
    } else {
        if (sg_random_hex(r->job_id, 8) < 0)
            return sg_error_set(err, -EIO, "no randomness for a job id");
    }
    json_t *lang = json_object_get(root, "language");
    enum sg_lang l;
    if (lang && (!json_is_string(lang) ||
                 sg_lang_parse(json_string_value(lang), SG_LANG_NAMES_RAGFLOW, &l) < 0 ||
                 l != cfg->language))
        return sg_error_set(err, -EINVAL, "language must be \"%s\" on this executor",
                            sg_lang_name(cfg->language));
    json_t *code = json_object_get(root, "code");
    if (!code && !need_code) {
        r->code = "";
        return 0;
    }
    if (!json_is_string(code))
        return sg_error_set(err, -EINVAL, "code must be a string");
    if (json_string_length(code) > EXEC_CODE_MAX)
        return sg_error_set(err, -E2BIG, "code exceeds %u bytes", EXEC_CODE_MAX);
    r->code = json_string_value(code);
    r->code_len = json_string_length(code);
    json_t *stream = json_object_get(root, "stream");
    if (stream && !json_is_boolean(stream))
        return sg_error_set(err, -EINVAL, "stream must be a boolean");
    r->stream = json_is_true(stream);
    return parse_mode(root, r, err);
}

/* "network": {"allow": [entry, ...]} (common/sg_netallow.h): re-checked
 * here, since the egress proxy's helper trusts what the executor writes. */
static int parse_network(json_t *root, struct exec_request *r, struct sg_error *err)
{
    json_t *net = json_object_get(root, "network");
    if (!net || json_is_null(net))
        return 0;
    json_t *allow = json_is_object(net) ? json_object_get(net, "allow") : NULL;
    if (!json_is_array(allow) || json_object_size(net) != 1)
        return sg_error_set(err, -EINVAL, "network must be {\"allow\": [...]}");
    size_t n = json_array_size(allow);
    if (n == 0 || n > SG_NETALLOW_LIST_MAX)
        return sg_error_set(err, -EINVAL, "network.allow holds 1..%d entries",
                            SG_NETALLOW_LIST_MAX);
    r->network_allow = json_array();
    for (size_t i = 0; r->network_allow && i < n; i++) {
        struct sg_netallow_entry e;
        const char *t = json_string_value(json_array_get(allow, i));
        struct sg_error perr = {0};
        if (sg_netallow_parse(t, &e, &perr) < 0)
            return sg_error_set(err, -EINVAL, "network.allow[%zu]: %s", i, perr.msg);
        char canon[SG_NETALLOW_TEXT_MAX];
        sg_netallow_format(&e, canon, sizeof(canon));
        if (json_array_append_new(r->network_allow, json_string(canon)) < 0)
            return sg_error_set(err, -ENOMEM, "out of memory");
    }
    return r->network_allow ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
}

static int parse_request(const char *body, size_t len, const struct exec_config *cfg,
                         bool need_code, struct exec_request *ret, struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    json_error_t je;
    /* Reject NUL in strings (jansson's default) and duplicate keys: a key read
     * twice could be checked in one spelling and used in another. */
    ret->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!ret->root)
        return sg_error_set(err, -EINVAL, "invalid JSON at line %d column %d: %.100s", je.line,
                            je.column, je.text);
    int r = -EINVAL;
    if (!json_is_object(ret->root)) {
        r = sg_error_set(err, -EINVAL, "body must be a JSON object");
        goto fail;
    }
    if ((r = parse_ids(ret->root, cfg, need_code, ret, err)) < 0 ||
        (r = parse_arguments(ret->root, ret, err)) < 0 ||
        (r = parse_files(ret->root, ret, err)) < 0 ||
        (r = parse_limits(ret->root, cfg, ret, err)) < 0 ||
        (r = parse_runtime(ret->root, cfg, ret, err)) < 0 ||
        (r = parse_imports(ret->root, ret, err)) < 0 ||
        (r = parse_network(ret->root, ret, err)) < 0)
        goto fail;
    ret->tree_bytes = exec_json_tree_bytes(ret->root); /* validated: depth bounded */
    return 0;
fail:
    exec_request_free(ret);
    return r;
}

int exec_request_parse(const char *body, size_t len, const struct exec_config *cfg,
                       struct exec_request *ret, struct sg_error *err)
{
    return parse_request(body, len, cfg, true, ret, err);
}

int exec_session_request_parse(const char *body, size_t len, const struct exec_config *cfg,
                               struct exec_request *ret, struct sg_error *err)
{
    return parse_request(body, len, cfg, false, ret, err);
}

void exec_request_free(struct exec_request *req)
{
    if (!req)
        return;
    json_decref(req->files);
    json_decref(req->root);
    json_decref(req->network_allow);
    req->files = req->root = req->network_allow = NULL;
    req->arguments = NULL;
    req->runtime = NULL;
    req->flavour = NULL;
    req->code = NULL;
}

size_t exec_json_tree_bytes(json_t *j)
{
    size_t n = j ? EXEC_JSON_VALUE_BYTES : 0;
    const char *k;
    json_t *v;
    size_t i;
    if (json_is_object(j)) {
        json_object_foreach(j, k, v) n += EXEC_JSON_MEMBER_BYTES + exec_json_tree_bytes(v);
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v) n += exec_json_tree_bytes(v);
    }
    return n;
}

size_t exec_job_input_memory(size_t body_len, size_t tree_bytes)
{
    return EXEC_JOB_MEMORY_BODY_COPIES * body_len + tree_bytes;
}

size_t exec_job_memory(size_t body_len, size_t tree_bytes, size_t max_output)
{
    return EXEC_JOB_MEMORY_FIXED + exec_job_input_memory(body_len, tree_bytes) +
           EXEC_JOB_MEMORY_OUTPUT_COPIES * max_output;
}

void exec_request_drop_input(struct exec_request *req)
{
    static const char *const keys[] = {"code", "arguments", "files"};
    for (size_t i = 0; req->root && i < sizeof(keys) / sizeof(keys[0]); i++)
        json_object_del(req->root, keys[i]);
    json_decref(req->files);
    req->files = NULL;
    req->arguments = NULL;
    req->code = "";
    req->code_len = 0;
}

json_t *exec_job_json(const struct exec_request *req, const char *nonce)
{
    /* the request's own code string when it is the one parsed (no copy) */
    json_t *code = req->root ? json_object_get(req->root, "code") : NULL;
    code = json_string_value(code) == req->code ? json_incref(code)
                                                : json_stringn(req->code, req->code_len);
    json_t *job = json_pack("{s:s,s:o,s:O,s:O,s:{s:I,s:I}}", "nonce", nonce, "code", code,
                            "arguments", req->arguments, "files", req->files, "limits",
                            "timeout_ms", (json_int_t)req->limits.timeout_ms, "max_output_bytes",
                            (json_int_t)req->limits.max_output_bytes);
    if (!job)
        return NULL;
    if ((req->runtime && json_object_set(job, "runtime", req->runtime) < 0) ||
        (req->stream && json_object_set_new(job, "stream", json_true()) < 0) ||
        (req->script && json_object_set_new(job, "mode", json_string("script")) < 0)) {
        json_decref(job);
        return NULL;
    }
    return job;
}

char *exec_job_line(const struct exec_request *req, const char *nonce, size_t *ret_len)
{
    json_t *job = exec_job_json(req, nonce);
    size_t n = job ? json_dumpb(job, NULL, 0, JSON_COMPACT) : 0;
    char *line = n ? malloc(n + 2) : NULL;
    if (line && json_dumpb(job, line, n, JSON_COMPACT) == n) {
        line[n] = '\n';
        line[n + 1] = '\0';
        *ret_len = n + 1;
    } else {
        free(line);
        line = NULL;
    }
    json_decref(job);
    return line;
}

static json_t *nullable_str(const char *s, const char *none)
{
    return s && *s ? json_string(s) : (none ? json_string(none) : json_null());
}

static json_t *result_json(const struct exec_outcome *o)
{
    json_t *res = json_pack("{s:b,s:O?,s:s}", "present", o->result != NULL, "value",
                            o->result ? json_object_get(o->result, "value") : NULL, "type", "json");
    /* beyond 64-bit integers: the checked text instead (value stays null) */
    json_t *raw = o->result ? json_object_get(o->result, "value_json") : NULL;
    if (res && raw)
        json_object_set(res, "value_json", raw);
    return res;
}

static void add_request_fields(json_t *j, const struct exec_request *req)
{
    if (!req)
        return;
    json_object_set_new(j, "limits",
                        json_pack("{s:I,s:I,s:I}", "timeout_ms", (json_int_t)req->limits.timeout_ms,
                                  "memory_mb", (json_int_t)req->limits.memory_mb,
                                  "max_output_bytes", (json_int_t)req->limits.max_output_bytes));
    json_t *cl = json_array();
    for (unsigned i = 0; i < req->n_clamped; i++)
        json_array_append_new(cl, json_string(req->clamped[i]));
    json_object_set_new(j, "clamped", cl);
    if (req->pool) {
        json_object_set_new(
            j, "pool",
            json_pack("{s:s,s:b}", "flavour", req->pool, "fallback", req->pool_fallback));
        json_object_set_new(json_object_get(j, "timings"), "pool", json_string(req->pool));
    }
}

json_t *exec_response_json(const char *job_id, const struct exec_request *req,
                           const struct exec_outcome *o, double wait_ms, double run_ms)
{
    double t = o->time_used_ms >= 0 ? o->time_used_ms : run_ms;
    json_t *j = json_pack(
        "{s:s,s:s,s:O?,s:O?,s:i,s:o,s:f,s:o,s:o,s:o,s:o,s:o,s:O?,s:{s:f,s:f}}", "job_id", job_id,
        "status", outcome_status_name(o->status), "stdout", o->out, "stderr", o->err, "exit_code",
        o->exit_code, "detail", nullable_str(o->detail, NULL), "time_used_ms", t, "memory_used_kb",
        o->memory_used_kb >= 0 ? json_integer(o->memory_used_kb) : json_null(),
        "resource_limit_type", nullable_str(o->resource_limit_type, NULL),
        "unauthorized_access_type", nullable_str(o->unauthorized_access_type, NULL),
        "runtime_error_type", nullable_str(o->runtime_error_type, NULL), "result", result_json(o),
        "artifacts", o->artifacts, "timings", "wait_ms", wait_ms, "run_ms", run_ms);
    if (!j)
        return NULL;
    if (!o->out)
        json_object_set_new(j, "stdout", json_string(""));
    if (!o->err)
        json_object_set_new(j, "stderr", json_string(""));
    if (!o->artifacts)
        json_object_set_new(j, "artifacts", json_array());
    if (o->artifacts_skipped)
        json_object_set(j, "artifacts_skipped", o->artifacts_skipped);
    if (o->denials)
        json_object_set(j, "denials", o->denials);
    add_request_fields(j, req);
    return j;
}

char *exec_response(const char *job_id, const struct exec_request *req,
                    const struct exec_outcome *o, double wait_ms, double run_ms)
{
    json_t *j = exec_response_json(job_id, req, o, wait_ms, run_ms);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return s;
}
