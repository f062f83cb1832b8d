/* Violations: positions in code points, snippet clipping and sanitising,
 * the cap with its dropped count, the JSON shape. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "violation.h"

Test(span, columns_count_code_points)
{
    /* "é" is 2 bytes, "😀" 4: 'x' sits at byte 10 of line 2, column 6 */
    const char *src = "a = 1\n\xc3\xa9\xf0\x9f\x98\x80 = x\n";
    struct sg_span sp;
    size_t x = (size_t)(strchr(src, 'x') - src);
    sg_span_from_bytes(src, strlen(src), x, x + 1, &sp);
    cr_assert_eq(sp.line, 2);
    cr_assert_eq(sp.column, 6);
    cr_assert_eq(sp.end_line, 2);
    cr_assert_eq(sp.end_column, 7);
    cr_assert_eq(sp.start_byte, x);
    /* a span across lines, and offsets past the end are clamped */
    sg_span_from_bytes(src, strlen(src), 2, 100, &sp);
    cr_assert_eq(sp.line, 1);
    cr_assert_eq(sp.column, 3);
    cr_assert_eq(sp.end_line, 3);
    cr_assert_eq(sp.end_column, 1);
    cr_assert_eq(sp.end_byte, strlen(src));
    sg_span_from_bytes(src, strlen(src), 0, 0, &sp);
    cr_assert(sp.line == 1 && sp.column == 1 && sp.end_line == 1 && sp.end_column == 1);
}

Test(violations, snippet_is_first_line_clipped_on_utf8_boundary)
{
    /* 200 two-byte characters: the snippet must stop at a character
     * boundary at most SG_SNIPPET_MAX bytes in */
    char src[512];
    size_t n = 0;
    for (int i = 0; i < 200; i++) {
        src[n++] = '\xc3';
        src[n++] = '\xa9';
    }
    src[n] = '\0';
    struct sg_violations vs = {0};
    cr_assert_eq(sg_violations_add_at(&vs, SG_RULE_NAME_FORBIDDEN, src, n, 1, n, "m"), 0);
    const char *sn = vs.items[0].snippet;
    cr_assert_leq(strlen(sn), SG_SNIPPET_MAX);
    cr_assert_eq(strlen(sn) % 2, 1, "starts mid-character: one U+FFFD (3 bytes) then pairs");
    cr_assert_eq(strncmp(sn, "\xef\xbf\xbd", 3), 0);
    cr_assert_eq(strlen(sn), 3 + 2 * ((SG_SNIPPET_MAX - 3) / 2));
    /* span over two lines: the snippet is its first line only */
    const char *two = "foo(\n  bar)";
    cr_assert_eq(
        sg_violations_add_at(&vs, SG_RULE_CALL_FORBIDDEN, two, strlen(two), 0, strlen(two), "m"),
        0);
    cr_assert_str_eq(vs.items[1].snippet, "foo(");
    sg_violations_free(&vs);
}

Test(violations, snippet_and_message_are_sanitised)
{
    const char *src = "a\x1b[31m\xe2\x80\xae\tb";
    struct sg_violations vs = {0};
    cr_assert_eq(sg_violations_add_at(&vs, SG_RULE_BIDI_CONTROL, src, strlen(src), 0, strlen(src),
                                      "bad name '%s'", "x\xffy\n"),
                 0);
    cr_assert_str_eq(vs.items[0].snippet, "a\xef\xbf\xbd[31m\xef\xbf\xbd\tb");
    cr_assert_str_eq(vs.items[0].message, "bad name 'x\xef\xbf\xbdy\xef\xbf\xbd'");
    sg_violations_free(&vs);
}

Test(violations, cap_counts_dropped)
{
    struct sg_violations vs = {0};
    const char *src = "eval";
    for (int i = 0; i < SG_VIOLATIONS_MAX + 10; i++) {
        struct sg_span sp;
        sg_span_from_bytes(src, 4, 0, 4, &sp);
        if (i % 2)
            cr_assert_eq(sg_violations_add(&vs, SG_RULE_NAME_FORBIDDEN, &sp, src, 4, "n %d", i), 0);
        else
            cr_assert_eq(sg_violations_add_at(&vs, SG_RULE_NAME_FORBIDDEN, src, 4, 0, 4, "n %d", i),
                         0);
    }
    cr_assert_eq(vs.count, SG_VIOLATIONS_MAX);
    cr_assert_eq(vs.dropped, 10);
    cr_assert_str_eq(vs.items[SG_VIOLATIONS_MAX - 1].message, "n 63");
    sg_violations_free(&vs);
    cr_assert_eq(vs.count, 0);
    cr_assert_null(vs.items);
    sg_violations_free(NULL);
}

Test(violations, json_shape)
{
    const char *src = "x = 1\n\xc3\xa9 = eval\n";
    size_t at = (size_t)(strstr(src, "eval") - src);
    struct sg_violations vs = {0};
    cr_assert_eq(sg_violations_add_at(&vs, SG_RULE_NAME_FORBIDDEN, src, strlen(src), at, at + 4,
                                      "name '%s' is forbidden", "eval"),
                 0);
    json_t *arr = sg_violations_to_json(&vs);
    cr_assert(json_is_array(arr));
    cr_assert_eq(json_array_size(arr), 1);
    json_t *v = json_array_get(arr, 0);
    cr_assert_eq(json_object_size(v), 8);
    cr_assert_str_eq(json_string_value(json_object_get(v, "rule")), "name.forbidden");
    cr_assert_str_eq(json_string_value(json_object_get(v, "severity")), "error");
    cr_assert_str_eq(json_string_value(json_object_get(v, "message")), "name 'eval' is forbidden");
    cr_assert_eq(json_integer_value(json_object_get(v, "line")), 2);
    cr_assert_eq(json_integer_value(json_object_get(v, "column")), 5);
    cr_assert_eq(json_integer_value(json_object_get(v, "end_line")), 2);
    cr_assert_eq(json_integer_value(json_object_get(v, "end_column")), 9);
    cr_assert_str_eq(json_string_value(json_object_get(v, "snippet")), "eval");
    json_decref(arr);
    sg_violations_free(&vs);
    arr = sg_violations_to_json(&vs);
    cr_assert_eq(json_array_size(arr), 0);
    json_decref(arr);
}
