#include "json_nesting.h"

int sg_json_nesting_exceeds(json_t *v, size_t max)
{
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (max == 0)
        return 1;
    json_t *c;
    if (json_is_object(v)) {
        const char *k;
        json_object_foreach(v, k, c) if (sg_json_nesting_exceeds(c, max - 1)) return 1;
    } else {
        size_t i;
        json_array_foreach(v, i, c) if (sg_json_nesting_exceeds(c, max - 1)) return 1;
    }
    return 0;
}
