/* check_report.c - text, JSON and SARIF reports for sandgate-check. */
#include "check_report.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "rules.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define URI_MAX 4096
#define CHECK_LINE_SHOWN_MAX 512 /* bytes of a source line shown in text reports */

/* Every rule of rules.h, with the one-line description SARIF consumers show. */
static const struct {
    const char *id, *text;
} rule_table[] = {
    {SG_RULE_INVALID_UTF8, "Source is not valid UTF-8"},
    {SG_RULE_NUL_BYTE, "Source contains a NUL byte"},
    {SG_RULE_LONE_CR, "Carriage return not followed by a line feed"},
    {SG_RULE_CODING_COOKIE, "Python coding declaration other than utf-8"},
    {SG_RULE_LINE_SEPARATOR, "U+2028/U+2029 line or paragraph separator"},
    {SG_RULE_BIDI_CONTROL, "Bidirectional control character (Trojan Source)"},
    {SG_RULE_MIXED_INDENTATION, "Python indentation with a tab after a space"},
    {SG_RULE_SYNTAX_ERROR, "Source does not parse"},
    {SG_RULE_CONTEXT_KEYWORD, "'await' or 'yield' where Node reads an identifier"},
    {SG_RULE_ANNOTATION_MEMBER,
     "an attribute access the parser reads as part of a type annotation"},
    {SG_RULE_SOURCE_BYTES, "Source larger than the policy allows"},
    {SG_RULE_DEPTH, "Syntax tree deeper than the policy allows"},
    {SG_RULE_NODES, "Syntax tree larger than the policy allows"},
    {SG_RULE_LANGUAGE_DISABLED, "Language disabled by the policy"},
    {SG_RULE_IMPORT_NOT_ALLOWED, "Import of a module not on the allow-list"},
    {SG_RULE_NETWORK_DISABLED, "Import of a network module in a job without network"},
    {SG_RULE_IMPORT_DENIED, "Import of a module on the deny-list"},
    {SG_RULE_IMPORT_DYNAMIC, "Import by a computed module name"},
    {SG_RULE_NAME_FORBIDDEN, "Reference to a forbidden name"},
    {SG_RULE_CALL_FORBIDDEN, "Call of a forbidden function"},
    {SG_RULE_ATTRIBUTE_FORBIDDEN, "Access to a forbidden attribute"},
    {SG_RULE_ATTRIBUTE_DUNDER, "Access to a dunder attribute"},
    {SG_RULE_REFLECTION_DYNAMIC, "Attribute access by a computed name"},
};
#define RULE_COUNT (sizeof(rule_table) / sizeof(rule_table[0]))

int check_format_from_name(const char *name, enum check_format *ret_format)
{
    static const char *const names[] = {"text", "json", "sarif"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, names[i]) == 0) {
            *ret_format = (enum check_format)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* The bytes of 1-based line `line` of src (without its line break). */
static const char *find_line(const char *src, size_t len, uint32_t line, size_t *ret_n)
{
    const char *p = src, *end = src + len;
    for (uint32_t l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *e = p;
    while (e < end && *e != '\n' && *e != '\r')
        e++;
    *ret_n = (size_t)(e - p);
    return p;
}

/* The source line, sanitised, and a caret line under the violation's span;
 * tabs are repeated so the caret lines up in a terminal. */
static void write_source_line(FILE *out, const struct sg_violation *v, const char *src, size_t len)
{
    char text[CHECK_LINE_SHOWN_MAX];
    size_t n;
    const char *line = find_line(src, len, v->line, &n);
    sg_text_sanitize(line, n, 1, text, sizeof(text));
    fprintf(out, "  %5u | %s\n        | ", v->line, text);
    uint32_t col = 1, last = v->end_line == v->line && v->end_column > v->column ? v->end_column
                                                                                 : v->column + 1;
    for (const char *p = text; *p && col < last; p++) {
        if (((unsigned char)*p & 0xC0) == 0x80)
            continue; /* one mark per code point, as columns count */
        fputc(col < v->column ? (*p == '\t' ? '\t' : ' ') : (col == v->column ? '^' : '~'), out);
        col++;
    }
    if (col == v->column) /* the span starts at the end of the line */
        fputc('^', out);
    fputc('\n', out);
}

int check_report_text(FILE *out, const struct check_result *r, const char *src, size_t len)
{
    const struct sg_violations *vs = &r->analysis.violations;
    for (size_t k = 0; k < vs->count; k++) {
        const struct sg_violation *v = &vs->items[k];
        fprintf(out, "%s:%u:%u: %s[%s]: %s\n", r->file, v->line, v->column, v->severity, v->rule,
                v->message);
        write_source_line(out, v, src, len);
    }
    if (vs->dropped)
        fprintf(out, "%s: note: %zu more violations not shown\n", r->file, vs->dropped);
    return ferror(out) ? -EIO : 0;
}

static json_t *policy_json(const struct sg_policy *policy)
{
    return json_pack("{s:s, s:s}", "name", policy->name, "sha256", policy->sha256);
}

static json_t *build_json(const struct sg_policy *policy, const struct check_result *results,
                          size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        const struct sg_analysis *a = &results[i].analysis;
        json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:I}", "file", results[i].file, "language",
                              sg_lang_name(results[i].lang), "verdict",
                              a->accepted ? "accept" : "reject", "policy", policy_json(policy),
                              "violations", sg_violations_to_json(&a->violations), "dropped",
                              (json_int_t)a->violations.dropped);
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

/* Percent-encode a path for artifactLocation.uri (RFC 3986 path characters kept). */
static void path_to_uri(const char *path, char *out, size_t outsz)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    if (strcmp(path, "-") == 0)
        path = "stdin";
    for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < outsz; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
}

static json_t *sarif_rules(void)
{
    json_t *rules = json_array();
    for (size_t i = 0; rules && i < RULE_COUNT; i++) {
        json_t *r = json_pack("{s:s, s:{s:s}, s:{s:s}}", "id", rule_table[i].id, "shortDescription",
                              "text", rule_table[i].text, "defaultConfiguration", "level", "error");
        if (!r || json_array_append_new(rules, r) < 0) {
            json_decref(rules);
            return NULL;
        }
    }
    return rules;
}

static int rule_index(const char *id)
{
    for (size_t i = 0; i < RULE_COUNT; i++)
        if (strcmp(rule_table[i].id, id) == 0)
            return (int)i;
    return -1;
}

static json_t *sarif_result(const char *uri, const struct sg_violation *v)
{
    json_t *region =
        json_pack("{s:I, s:I, s:I, s:I, s:{s:s}}", "startLine", (json_int_t)v->line, "startColumn",
                  (json_int_t)v->column, "endLine", (json_int_t)v->end_line, "endColumn",
                  (json_int_t)v->end_column, "snippet", "text", v->snippet);
    json_t *res = json_pack("{s:s, s:i, s:s, s:{s:s}, s:[{s:{s:{s:s}, s:o}}]}", "ruleId", v->rule,
                            "ruleIndex", rule_index(v->rule), "level", "error", "message", "text",
                            v->message, "locations", "physicalLocation", "artifactLocation", "uri",
                            uri, "region", region);
    if (res && rule_index(v->rule) < 0) /* a rule this build does not know */
        json_object_del(res, "ruleIndex");
    return res;
}

static json_t *sarif_results(const struct check_result *results, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        char uri[URI_MAX];
        path_to_uri(results[i].file, uri, sizeof(uri));
        const struct sg_violations *vs = &results[i].analysis.violations;
        for (size_t k = 0; k < vs->count; k++) {
            json_t *r = sarif_result(uri, &vs->items[k]);
            if (!r || json_array_append_new(arr, r) < 0) {
                json_decref(arr);
                return NULL;
            }
        }
    }
    return arr;
}

static json_t *build_sarif(const struct sg_policy *policy, const struct check_result *results,
                           size_t n)
{
    /* columns count code points, which SARIF calls unicodeCodePoints */
    return json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:o}}, s:s, s:o, s:{s:o}}]}", "$schema",
                     SARIF_SCHEMA, "version", "2.1.0", "runs", "tool", "driver", "name",
                     "sandgate-check", "version", SG_CHECK_VERSION, "rules", sarif_rules(),
                     "columnKind", "unicodeCodePoints", "results", sarif_results(results, n),
                     "properties", "policy", policy_json(policy));
}

int check_report_write(FILE *out, enum check_format format, const struct sg_policy *policy,
                       const struct check_result *results, size_t n)
{
    if (format == CHECK_FORMAT_TEXT) /* streamed per file by check_report_text() */
        return 0;
    json_t *doc = format == CHECK_FORMAT_JSON ? build_json(policy, results, n)
                                              : build_sarif(policy, results, n);
    if (!doc)
        return -ENOMEM;
    int r = json_dumpf(doc, out, JSON_INDENT(2)) < 0 ? -EIO : 0;
    fputc('\n', out);
    json_decref(doc);
    return r == 0 && ferror(out) ? -EIO : r;
}
