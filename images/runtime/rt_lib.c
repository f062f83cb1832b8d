/* rt_lib.c - libsandgate_rt.so, the runners' way into rt_filter.c.
 *
 * Python's runner calls sg_rt_install(flags) through ctypes in the job's
 * process before it imports the user's module. Node has no such door without
 * an addon, so the library is also a (minimal) Node-API module: the runner
 * sets SANDGATE_RT_FLAGS, loads it with process.dlopen(), and Node calls
 * napi_register_module_v1, which installs the filter on every thread of the
 * node process and leaves the result (0 or -errno) in SANDGATE_RT_RESULT.
 * No Node-API function is used, so no header is needed: the two parameters
 * are opaque pointers and returning NULL keeps the module's exports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_filter.h"

#define RT_VISIBLE __attribute__((visibility("default")))

RT_VISIBLE int sg_rt_install(unsigned flags);
RT_VISIBLE void *napi_register_module_v1(void *env, void *exports);

int sg_rt_install(unsigned flags)
{
    return sg_rt_filter_install(flags);
}

void *napi_register_module_v1(void *env, void *exports)
{
    (void)env;
    (void)exports;
    const char *s = getenv("SANDGATE_RT_FLAGS");
    char *end = NULL;
    unsigned long flags = s && *s ? strtoul(s, &end, 10) : 0;
    int r = (!s || !*s || *end || flags > SG_RT_FLAGS_ALL) ? -EINVAL
                                                           : sg_rt_filter_install((unsigned)flags);
    char text[16];
    snprintf(text, sizeof(text), "%d", r);
    setenv("SANDGATE_RT_RESULT", text, 1);
    return NULL;
}
