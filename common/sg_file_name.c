/* sg_file_name.c - the input file name rule (sg_file_name.h). */
#include "sg_file_name.h"

#include <string.h>

bool sg_file_name_reserved(const char *name, size_t len)
{
    /* The runners' program files and artifacts directory (executors/PROTOCOL.md). */
    static const char *const reserved[] = {"main.py", "main.js", "artifacts"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (len == strlen(reserved[i]) && memcmp(name, reserved[i], len) == 0)
            return true;
    return false;
}

bool sg_file_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > SG_FILE_NAME_MAX || name[0] == '.' || memmem(name, len, "..", 2))
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}
