/* sg_time.c - CLOCK_MONOTONIC in ns, us and ms (sg_time.h). */
#include "sg_time.h"

#include <time.h>

uint64_t sg_time_mono_ns(void)
{
    struct timespec ts;
    /* cannot fail with a valid clock id and pointer */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sg_time_mono_us(void)
{
    return sg_time_mono_ns() / 1000u;
}

uint64_t sg_time_mono_ms(void)
{
    return sg_time_mono_ns() / 1000000u;
}
