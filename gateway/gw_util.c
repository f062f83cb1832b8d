#include "gw_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"

int gw_read_file(const char *path, size_t cap, char **ret_data, size_t *ret_len,
                 struct sg_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sg_error_set(err, -errno, "%s: %s", path, strerror(errno));
    struct sg_buf b;
    sg_buf_init(&b, cap);
    char chunk[8192];
    int r = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = sg_error_set(err, -errno, "%s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        if (sg_buf_append(&b, chunk, (size_t)n) < 0) {
            r = sg_error_set(err, -E2BIG, "%s: larger than %zu bytes", path, cap);
            goto out;
        }
    }
    if (!b.data && sg_buf_append(&b, "", 0) < 0) {
        r = sg_error_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    *ret_data = sg_buf_steal(&b, ret_len);
out:
    close(fd);
    sg_buf_free(&b);
    return r;
}

void gw_request_id(char out[17])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[8];
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* getrandom cannot fail after boot; keep ids unique anyway. */
            uint64_t t = (uint64_t)time(NULL) ^ (uint64_t)clock();
            memcpy(raw, &t, sizeof(raw));
            break;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[16] = '\0';
}

uint64_t gw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
