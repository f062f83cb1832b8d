/* sg_time.h - the one monotonic clock of sandgate.
 *
 * Every duration, deadline and phase timing in the project is measured on
 * CLOCK_MONOTONIC through these three functions, so values in different
 * units come from the same clock and never jump with the wall clock (NTP,
 * settimeofday). The origin is unspecified (boot time on Linux): compare or
 * subtract readings, never print one as a date. Thread-safe, no allocation.
 */
#ifndef SG_TIME_H
#define SG_TIME_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
uint64_t sg_time_mono_ns(void);

/* Microseconds on CLOCK_MONOTONIC (sg_time_mono_ns() / 1000). */
uint64_t sg_time_mono_us(void);

/* Milliseconds on CLOCK_MONOTONIC (sg_time_mono_ns() / 1000000). */
uint64_t sg_time_mono_ms(void);

#endif
