/* Unit tests for gw_overview_pools: an executor's /healthz reduced to the
 * pool figures the console's Overview shows, bounded and typed. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "gw_overview.h"

static json_t *pools_of(const char *healthz)
{
    json_t *h = json_loads(healthz, 0, NULL);
    cr_assert(h != NULL, "bad test JSON");
    json_t *p = gw_overview_pools(h);
    json_decref(h);
    return p;
}

static json_int_t num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

Test(overview, known_fields_only)
{
    json_t *p = pools_of(
        "{\"pool\":{\"busy\":3},\"sessions\":{\"open\":1,\"max\":4,\"x\":1},"
        "\"flavours\":[{\"name\":\"plain\",\"size\":2,\"target\":3,\"idle\":1,\"busy\":1,"
        "\"creating\":0,\"hits\":9,\"fallbacks\":2,\"create_ms\":699.6,\"secret\":\"s\"}]}");
    cr_assert(p != NULL);
    cr_assert_eq(num(p, "jobs"), 3);
    cr_assert_eq(json_object_size(json_object_get(p, "sessions")), 2);
    json_t *f = json_array_get(json_object_get(p, "flavours"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(f, "name")), "plain");
    cr_assert_eq(num(f, "hits"), 9);
    cr_assert_eq(num(f, "fallbacks"), 2);
    cr_assert_eq(num(f, "create_ms"), 700);
    cr_assert_eq(num(f, "size"), 2);
    cr_assert_null(json_object_get(f, "secret"));
    json_decref(p);
}

Test(overview, hostile_values_are_bounded)
{
    static char body[32768];
    char name[200];
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    int n = snprintf(body, sizeof(body), "{\"pool\":{\"busy\":-1},\"sessions\":7,\"flavours\":[");
    for (int i = 0; i < GW_OVERVIEW_FLAVOURS_MAX + 5; i++)
        n += snprintf(body + n, sizeof(body) - (size_t)n,
                      "%s{\"name\":\"%s\",\"hits\":-1e3,\"idle\":\"2\",\"size\":9007199254740993}",
                      i ? "," : "", name);
    snprintf(body + n, sizeof(body) - (size_t)n, "]}");
    json_t *p = pools_of(body);
    cr_assert(p != NULL);
    cr_assert_eq(num(p, "jobs"), 0);
    cr_assert(json_is_null(json_object_get(p, "sessions")));
    json_t *fl = json_object_get(p, "flavours");
    cr_assert_eq(json_array_size(fl), GW_OVERVIEW_FLAVOURS_MAX);
    json_t *f = json_array_get(fl, 0);
    cr_assert_eq(strlen(json_string_value(json_object_get(f, "name"))), GW_OVERVIEW_NAME_MAX);
    cr_assert_eq(num(f, "hits"), 0);
    cr_assert_eq(num(f, "idle"), 0);
    cr_assert_eq(num(f, "size"), 0);
    json_decref(p);
}

Test(overview, no_pool_no_figures)
{
    cr_assert_null(gw_overview_pools(NULL));
    json_t *p = pools_of("{\"status\":\"ok\",\"flavours\":[]}");
    cr_assert_null(p);
    p = pools_of("{\"pool\":{}}");
    cr_assert_eq(json_array_size(json_object_get(p, "flavours")), 0);
    json_decref(p);
}
