#include "gw_overview.h"

#include <stdio.h>
#include <string.h>

#define NUM_MAX ((json_int_t)1 << 53) /* exact in a browser's number */

static const char *const FLAVOUR_FIELDS[] = {"size",     "target", "idle",      "busy",
                                             "creating", "hits",   "fallbacks", "create_ms"};
#define FLAVOUR_FIELD_COUNT (sizeof(FLAVOUR_FIELDS) / sizeof(FLAVOUR_FIELDS[0]))

/* A count, or a real rounded (create_ms is a moving average). */
static json_int_t num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        return d >= 0 && d <= (double)NUM_MAX ? (json_int_t)(d + 0.5) : 0;
    }
    json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
    return n >= 0 && n <= NUM_MAX ? n : 0;
}

static json_t *flavour(const json_t *f)
{
    const char *name = json_string_value(json_object_get(f, "name"));
    char cut[GW_OVERVIEW_NAME_MAX + 1];
    snprintf(cut, sizeof(cut), "%s", name ? name : "");
    json_t *o = json_pack("{s:s}", "name", cut);
    for (size_t i = 0; o && i < FLAVOUR_FIELD_COUNT; i++)
        json_object_set_new(o, FLAVOUR_FIELDS[i], json_integer(num(f, FLAVOUR_FIELDS[i])));
    return o;
}

json_t *gw_overview_pools(const json_t *healthz)
{
    const json_t *pool = json_object_get(healthz, "pool");
    if (!json_is_object(pool))
        return NULL;
    const json_t *sess = json_object_get(healthz, "sessions");
    json_t *flavours = json_array();
    const json_t *list = json_object_get(healthz, "flavours");
    for (size_t i = 0; flavours && i < json_array_size(list) && i < GW_OVERVIEW_FLAVOURS_MAX; i++)
        if (json_is_object(json_array_get(list, i)))
            json_array_append_new(flavours, flavour(json_array_get(list, i)));
    json_t *s = json_is_object(sess)
                    ? json_pack("{s:I,s:I}", "open", num(sess, "open"), "max", num(sess, "max"))
                    : json_null();
    return json_pack("{s:I,s:o,s:o}", "jobs", num(pool, "busy"), "sessions", s, "flavours",
                     flavours ? flavours : json_array());
}
