/* Fuzz the executor's reading of dockerd's archive reply (a tar stream
 * holding the image's runtime listing): any bytes either yield a listing
 * that is valid JSON for the language, or an error; nothing leaks. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *json = NULL;
    struct sg_error err = {0};
    if (runtime_info_from_tar((const char *)data, size, "python", &json, &err) == 0) {
        json_t *doc = json_loads(json, 0, NULL);
        if (!doc || strcmp(json_string_value(json_object_get(doc, "language")), "python") != 0)
            abort();
        json_decref(doc);
        free(json);
    } else if (json || err.msg[0] == '\0') {
        abort();
    }
    return 0;
}
