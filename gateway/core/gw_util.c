#include "gw_util.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "sg_random.h"
#include "sg_time.h"

void gw_request_id(char out[17])
{
    /* A request id only has to be unique, not secret: should the kernel
     * refuse randomness, count instead of failing the request. */
    static atomic_uint_fast64_t fallback;
    if (sg_random_hex(out, 8) < 0)
        snprintf(out, 17, "%016" PRIxFAST64, atomic_fetch_add(&fallback, 1));
}

uint64_t gw_now_ns(void)
{
    return sg_time_mono_ns();
}

void gw_iso_time(char out[64])
{
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000));
}
