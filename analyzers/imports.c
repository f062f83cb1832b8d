#include "imports.h"

#include <string.h>

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n > SG_IMPORT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '@' || c == '/' || c == '-'))
            return 0;
    }
    return 1;
}

void sg_imports_add(struct sg_imports *im, const char *top, size_t len)
{
    if (!im || !top || len == 0)
        return;
    int ok = name_ok(top, len);
    /* already there? names never contain ',' */
    for (const char *p = im->text; ok && *p;) {
        size_t l = strcspn(p, ",");
        if (l == len && memcmp(p, top, len) == 0)
            return;
        p += l + (p[l] == ',');
    }
    size_t used = strlen(im->text);
    if (!ok || im->count >= SG_IMPORTS_MAX || used + (used > 0) + len >= sizeof(im->text)) {
        im->dropped++;
        return;
    }
    if (used)
        im->text[used++] = ',';
    memcpy(im->text + used, top, len);
    im->text[used + len] = '\0';
    im->count++;
}
