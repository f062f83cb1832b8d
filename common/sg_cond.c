/* sg_cond.c - condition variables on the monotonic clock (sg_cond.h). */
#include "sg_cond.h"

int sg_cond_init_mono(pthread_cond_t *cond)
{
    pthread_condattr_t ca;
    int r = pthread_condattr_init(&ca);
    if (r)
        return -r;
    r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (!r)
        r = pthread_cond_init(cond, &ca);
    pthread_condattr_destroy(&ca);
    return -r;
}

void sg_cond_deadline(uint64_t mono_ns, struct timespec *ret)
{
    ret->tv_sec = (time_t)(mono_ns / 1000000000u);
    ret->tv_nsec = (long)(mono_ns % 1000000000u);
}
