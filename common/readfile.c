/* readfile.c - bounded whole-file reads: config, policy, token and source files. */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK 65536

int sg_read_fd_capped(int fd, const char *name, size_t max, char **ret_buf, size_t *ret_len,
                      struct sg_error *err)
{
    char *buf = NULL;
    size_t len = 0, alloc = 0;
    int r = 0;
    for (;;) {
        /* grow by chunks: a stream's size is unknown, and reading one byte past
         * max tells "exactly max" from "too large" */
        if (alloc - len < 2) {
            size_t na = alloc + READ_CHUNK;
            if (na > max + 2)
                na = max + 2;
            char *p = na > alloc ? realloc(buf, na) : NULL;
            if (!p) {
                r = sg_error_set(err, -ENOMEM, "%s: out of memory", name);
                goto out;
            }
            buf = p;
            alloc = na;
        }
        ssize_t n = read(fd, buf + len, alloc - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = sg_error_set(err, -errno, "%s: %s", name, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            r = sg_error_set(err, -E2BIG, "%s: larger than %zu bytes", name, max);
            goto out;
        }
    }
    if (!buf && !(buf = malloc(1))) {
        r = sg_error_set(err, -ENOMEM, "%s: out of memory", name);
        goto out;
    }
    buf[len] = '\0';
out:
    if (r < 0) {
        free(buf);
        return r;
    }
    *ret_buf = buf;
    *ret_len = len;
    return 0;
}

int sg_read_file_capped(const char *path, size_t max, char **ret_buf, size_t *ret_len,
                        struct sg_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return sg_error_set(err, -errno, "%s: %s", path, strerror(errno));
    struct stat st;
    int r;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        r = sg_error_set(err, -EINVAL, "%s: not a regular file", path);
    else
        r = sg_read_fd_capped(fd, path, max, ret_buf, ret_len, err);
    close(fd);
    return r;
}
