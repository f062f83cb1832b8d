/* readfile.h - read a whole file or stream with a hard size cap. */
#ifndef SG_READFILE_H
#define SG_READFILE_H

#include <stddef.h>

#include "sg_error.h"

/* Read fd to its end into a new NUL-terminated buffer (caller frees with
 * free()). More than max bytes fails with -E2BIG; name labels errors. */
int sg_read_fd_capped(int fd, const char *name, size_t max, char **ret_buf, size_t *ret_len,
                      struct sg_error *err);

/* Open path (a regular file) and read it as sg_read_fd_capped does. */
int sg_read_file_capped(const char *path, size_t max, char **ret_buf, size_t *ret_len,
                        struct sg_error *err);

#endif
