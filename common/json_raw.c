#include "json_raw.h"

#include <jansson.h>

#include "json_nesting.h"

int sg_json_raw_ok(const char *text, size_t len, size_t max_depth)
{
    /* Parsed as reals, integers of any length up to a double's range are
     * accepted; the text itself, not this lossy copy, is what travels on. */
    json_t *j = text ? json_loadb(text, len,
                                  JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL)
                     : NULL;
    int ok = j && !sg_json_nesting_exceeds(j, max_depth);
    json_decref(j);
    return ok;
}
