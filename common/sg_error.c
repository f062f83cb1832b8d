#include "sg_error.h"

#include <stdarg.h>
#include <stdio.h>

int sg_error_set(struct sg_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

void sg_error_clear(struct sg_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}
