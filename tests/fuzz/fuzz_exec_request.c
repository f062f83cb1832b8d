/* Fuzz the executor's /v1/exec request parser (untrusted body), the job line
 * built from an accepted request, and the response built around it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_config.h"
#include "buf.h"
#include "exec_api.h"
#include "json_out.h"
#include "outcome.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct exec_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static char a0[] = "fuzz", a1[] = "--language", a2[] = "python", a3[] = "--seccomp",
                a4[] = "none";
    char *args[] = {a0, a1, a2, a3, a4, NULL};
    if (exec_config_parse(5, args, &cfg, NULL) != 0)
        abort();
    return 0;
}

static int append(void *ctx, const char *data, size_t len)
{
    return sg_buf_append(ctx, data, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct exec_request req;
    if (exec_request_parse((const char *)data, size, &cfg, &req, NULL) != 0)
        return 0;
    /* An accepted request must respect every cap it promises. */
    if (req.code_len > EXEC_CODE_MAX || req.limits.timeout_ms > cfg.max_timeout_ms ||
        req.limits.max_output_bytes > cfg.max_output_bytes || !exec_job_id_valid(req.job_id))
        abort();
    size_t len = 0;
    char *line = exec_job_line(&req, "0123456789abcdef0123456789abcdef", &len);
    if (!line || len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
        abort();
    /* the job as it is written to the sandbox (json_out_dump) is that line */
    struct sg_buf streamed;
    sg_buf_init(&streamed, len);
    json_t *job = exec_job_json(&req, "0123456789abcdef0123456789abcdef");
    if (json_out_dump(job, JSON_COMPACT, "\n", append, &streamed) != 0 || streamed.len != len ||
        memcmp(streamed.data, line, len) != 0)
        abort();
    json_decref(job);
    sg_buf_free(&streamed);
    struct exec_outcome o;
    outcome_init(&o);
    outcome_runner_error(&o, "fuzz");
    free(exec_response(req.job_id, &req, &o, 1.0, 2.0));
    free(line);
    exec_request_free(&req);
    return 0;
}
