/* sg_random.c - random hex strings (sg_random.h). */
#include "sg_random.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

int sg_random_hex(char *out, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[SG_RANDOM_BYTES_MAX];
    if (nbytes == 0 || nbytes > sizeof(raw))
        return -EINVAL;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t n = getrandom(raw + got, nbytes - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        got += (size_t)n;
    }
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}
