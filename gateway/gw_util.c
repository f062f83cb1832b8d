#include "gw_util.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

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
