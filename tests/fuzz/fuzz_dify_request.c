/* Fuzz target: the body of Dify's POST /v1/sandbox/run (gateway/doors/dify/gw_dify.c,
 * gw_dify_parse). The whole input is the body. No crash, leak or sanitizer
 * report is the property, and a parsed run keeps within the code cap. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_dify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CODE 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gw_dify_run run;
    struct gw_dify_error err;
    if (gw_dify_parse((const char *)data, size, MAX_CODE, &run, &err) == 0) {
        if (!run.code || run.code_len > MAX_CODE || strlen(run.code) > run.code_len)
            abort();
        free(run.code);
    } else if (err.code >= 0 ||
               (err.http != 200 && err.http != 400 && err.http != 413 && err.http != 500)) {
        abort();
    }
    return 0;
}
