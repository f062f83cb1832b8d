/* Fuzz sandgate-runner's two parsers of outside input (images/nodejs): the
 * job line (from the executor) and the child's report line, which the
 * program can write itself, so it is hostile. The first input byte picks
 * the parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runner_job.h"
#include "runner_result.h"
#include "runner_watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_job(const char *line, size_t len)
{
    struct runner_cfg cfg;
    runner_cfg_from_env(&cfg);
    cfg.max_files = 4;
    cfg.max_files_bytes = 4096;
    struct runner_job job;
    struct sg_error err = {0};
    runner_job_parse(&cfg, line, len, &job, &err);
    runner_job_free(&job);
}

static void fuzz_report(const char *report, size_t len)
{
    struct runner_cfg cfg;
    runner_cfg_from_env(&cfg);
    cfg.workspace = "/nonexistent-sandgate-fuzz"; /* no artifacts */
    struct runner_watch w = {.stop = RUNNER_REPORTED};
    sg_buf_init(&w.out, 1 << 16);
    sg_buf_init(&w.err, 1 << 16);
    sg_buf_init(&w.res, 1 << 20);
    sg_buf_append(&w.res, report, len);
    sg_buf_append(&w.out, report, len < 256 ? len : 256); /* also as program output text */
    json_t *r = runner_result_from_watch(&cfg, &w, 1 << 20);
    char *line = r ? json_dumps(r, JSON_COMPACT) : NULL;
    if (r && !line)
        __builtin_trap(); /* the result must always serialise */
    json_decref(r);
    free(line);
    runner_watch_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        fuzz_job((const char *)data + 1, size - 1);
    else
        fuzz_report((const char *)data + 1, size - 1);
    return 0;
}
