/* Fuzz the whole JavaScript analysis under the default policy. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_analyze_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_load_default_policy();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_analyze_one(SG_LANG_JAVASCRIPT, data, size);
}
