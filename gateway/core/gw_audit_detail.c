#include "gw_audit_detail.h"

#include <stdlib.h>
#include <string.h>

#include "gw_audit.h"

/* n cut back so that s[0..n) ends on a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t n)
{
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static json_t *violation_json(const struct sg_violation *v)
{
    const char *m = v->message ? v->message : "";
    size_t n = strlen(m);
    if (n > GW_AUDIT_DETAIL_MESSAGE_MAX)
        n = utf8_cut(m, GW_AUDIT_DETAIL_MESSAGE_MAX);
    return json_pack("{s:s,s:s%,s:i,s:i,s:i,s:i}", "rule", v->rule, "message", m, n, "line",
                     (int)v->line, "column", (int)v->column, "end_line", (int)v->end_line,
                     "end_column", (int)v->end_column);
}

static void add_code(json_t *o, const char *code, size_t len)
{
    size_t n = len > GW_AUDIT_DETAIL_CODE_MAX ? utf8_cut(code, GW_AUDIT_DETAIL_CODE_MAX) : len;
    json_t *s = json_stringn(code, n);
    if (!s) {
        json_object_set_new(o, "code_omitted", json_string("not_utf8"));
        return;
    }
    json_object_set_new(o, "code", s);
    if (n < len)
        json_object_set_new(o, "code_truncated", json_true());
}

void gw_audit_detail_add(json_t *o, const struct gw_tenant *tenant, const struct sg_violations *v,
                         int rejected, const char *code, size_t code_len)
{
    if (!o)
        return;
    if (v && v->count) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < v->count && i < GW_AUDIT_DETAIL_VIOLATIONS_MAX; i++)
            json_array_append_new(arr, violation_json(&v->items[i]));
        json_object_set_new(o, "violations", arr);
    }
    enum gw_audit_code mode = tenant ? tenant->audit_code : GW_AUDIT_CODE_REJECTED;
    if (code && (mode == GW_AUDIT_CODE_ALL || (mode == GW_AUDIT_CODE_REJECTED && rejected)))
        add_code(o, code, code_len);
}

char *gw_audit_detail_fit(json_t *o, size_t flags)
{
    char *line = json_dumps(o, flags);
    for (int step = 0; line && strlen(line) >= GW_AUDIT_LINE_MAX && step < 2; step++) {
        free(line);
        json_object_del(o, step == 0 ? "code" : "violations");
        json_object_del(o, "code_truncated");
        json_object_set_new(o, "code_omitted", json_string("too_large"));
        line = json_dumps(o, flags);
    }
    return line;
}
