/* Fuzz the executor's /v1/exec request parser (untrusted body), the job line
 * built from an accepted request, and the response built around it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec_config.h"
#include "exec_api.h"
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
    struct exec_outcome o;
    outcome_init(&o);
    outcome_runner_error(&o, "fuzz");
    free(exec_response(req.job_id, &req, &o, 1.0, 2.0));
    free(line);
    exec_request_free(&req);
    return 0;
}
