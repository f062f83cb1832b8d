/* gw_util.h - small helpers shared by the gateway modules. */
#ifndef SG_GW_UTIL_H
#define SG_GW_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sg_error.h"

/* A random request id: 16 lowercase hex characters (sg_random_hex). */
void gw_request_id(char out[17]);

/* The wall-clock time now as ISO 8601 UTC with milliseconds (audit lines). */
void gw_iso_time(char out[64]);

/* Monotonic clock in nanoseconds (sg_time_mono_ns(), the one clock). */
uint64_t gw_now_ns(void);

#endif
