/* sg_cond.h - condition variables whose timed waits run on the monotonic
 * clock (the clock of sg_time.h), so a wall-clock step neither cuts a wait
 * short nor stretches it. No heap memory beyond what pthread_cond_init takes
 * (released by pthread_cond_destroy as usual).
 */
#ifndef SG_COND_H
#define SG_COND_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init on the monotonic clock. 0 or -errno. */
int sg_cond_init_mono(pthread_cond_t *cond);

/* The absolute time pthread_cond_timedwait wants, on such a condition, for a
 * deadline of mono_ns nanoseconds on the monotonic clock. */
void sg_cond_deadline(uint64_t mono_ns, struct timespec *ret);

#endif
