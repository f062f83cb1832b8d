/* sg_error.h - the error record filled by fallible functions.
 *
 * Contract (house style): a fallible function returns 0 on success or a
 * negative errno-style code on failure, and, when the caller passed a non-NULL
 * struct sg_error, writes a one-line human message into it. The struct holds
 * no heap memory, so there is nothing to free.
 */
#ifndef SG_ERROR_H
#define SG_ERROR_H

#include <stddef.h>

#define SG_ERROR_MSG_MAX 512

struct sg_error {
    int code; /* negative errno-style code, 0 when unset */
    char msg[SG_ERROR_MSG_MAX];
};

/* Fill err (if non-NULL) with code and a printf-style message; returns code so
 * callers can write `return sg_error_set(err, -EINVAL, "...")`. */
int sg_error_set(struct sg_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clear err (if non-NULL). */
void sg_error_clear(struct sg_error *err);

#endif
