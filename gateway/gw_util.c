#include "gw_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>


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
