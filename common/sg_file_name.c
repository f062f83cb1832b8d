/* sg_file_name.c - the input file name rule (sg_file_name.h). */
#include "sg_file_name.h"

#include <string.h>

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
