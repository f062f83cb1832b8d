/* Fuzz the executor's parsers of what dockerd and the sandbox send: the
 * multiplexed attach stream and the runner's result line inside it (through
 * job_feed, chunked at a fuzzer-chosen size), the upgrade reply's status
 * line, every Engine API reply parser, and the runner result classifier. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "docker.h"
#include "job.h"
#include "outcome.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stream frames reach the hook only well-formed (PROTOCOL.md). */
static int on_frame(void *ud, const char *name, json_t *text)
{
    (void)ud;
    if ((strcmp(name, "stdout") != 0 && strcmp(name, "stderr") != 0) || !json_is_string(text))
        abort();
    return json_string_length(text) == 13 ? -1 : 0; /* the client went, sometimes */
}

static void engine_replies(const char *s, size_t n)
{
    char id[DOCKER_ID_LEN + 1];
    struct docker_state st;
    int code;
    bool found;
    char(*ids)[DOCKER_ID_LEN + 1] = NULL;
    size_t nids = 0;
    char msg[64];
    if (docker_parse_create(s, n, id) == 0 && !docker_id_valid(id))
        abort();
    docker_parse_inspect(s, n, &st);
    docker_parse_wait(s, n, &code);
    docker_parse_runtimes(s, n, "runsc", &found);
    if (docker_parse_list(s, n, &ids, &nids) == 0) {
        for (size_t i = 0; i < nids; i++)
            if (!docker_id_valid(ids[i]))
                abort();
        free(ids);
    }
    docker_parse_message(s, n, msg, sizeof(msg));
    (void)docker_parse_oom_events(
        s, n, "4f1c0e0d6a9b7c3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e");
    attach_parse_status(s, n, &code);
    struct exec_outcome o;
    outcome_init(&o);
    outcome_from_runner(s, n, &o);
    outcome_clear(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = (size_t)data[0] % 64 + 1;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    struct job_io io;
    job_io_init(&io, 4096, "0123456789abcdef");
    struct job_hooks hooks = {.cancel_fd = -1, .client_fd = -1, .frame = on_frame};
    io.hooks = data[0] & 0x80 ? &hooks : NULL;
    struct attach_parser p = {0};
    for (size_t off = 0; off < n; off += step) {
        size_t len = off + step <= n ? step : n - off;
        int r = job_feed(&io, &p, d + off, len);
        if (r != 0)
            break;
    }
    if (io.stdout_total > io.line.cap || io.diag.len > JOB_DIAG_MAX)
        abort();
    job_io_free(&io);
    engine_replies((const char *)d, n);
    return 0;
}
