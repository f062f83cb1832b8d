/* Fuzz the executor's check of a package set image's manifest
 * (/opt/sandgate/set.json, copied out of an image at start): any bytes either
 * yield a flavour within its bounds and the manifest with its image, or an
 * error naming the image; nothing leaks. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkgset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char BASE[] = "{\"language\":\"python\",\"stdlib_modules\":[\"json\"],"
                           "\"packages\":[{\"name\":\"numpy\",\"modules\":[\"numpy\"]}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct flavour f;
    json_t *doc = NULL;
    struct sg_error err = {0};
    if (pkgset_parse((const char *)data, size, "python", "img:t", BASE, &f, &doc, &err) == 0) {
        if (!doc || strcmp(f.image, "img:t") != 0 || f.n_modules > FLAVOUR_MODULES_MAX ||
            f.n_provides > FLAVOUR_PROVIDES_MAX || f.size > FLAVOUR_SIZE_MAX ||
            f.mem_mb > PKGSET_MEMORY_MB_MAX || !f.name[0])
            abort();
        for (unsigned i = 0; i < f.n_provides; i++)
            if (strcmp(f.provides[i], "numpy") == 0 || strcmp(f.provides[i], "json") == 0)
                abort(); /* what the language image has is never a set's requirement */
        json_decref(doc);
    } else if (doc || !strstr(err.msg, "img:t")) {
        abort();
    }
    return 0;
}
