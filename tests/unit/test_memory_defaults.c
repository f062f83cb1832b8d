/* The shipped defaults hold together: for each daemon, the memory budget it
 * derives from its container limit in docker-compose.yml (membudget.h) holds
 * one request at its body cap with the job it starts (so no valid request is
 * refused for ever), and the rest of the limit leaves room for the daemon's
 * own memory. Everything a request grows is reserved in that budget, so the
 * budget plus the daemon's own memory is the worst case the caps allow:
 * fitting it in the limit is what keeps the kernel's OOM killer away. The
 * limits and the compose variables' defaults are read from the files
 * themselves (docker-compose.yml and the Swarm stack, which must agree),
 * the daemons' defaults from their real configuration code. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_api.h"
#include "exec_config.h"
#include "gw_config.h"
#include "gw_jobs.h"
#include "job.h"
#include "membudget.h"
#include "readfile.h"
#include "sg_parse.h"

#define MIB (1ull << 20)
/* What each daemon needs beside its budget: code, libraries, threads' stacks,
 * tables, the allocator's own slack. Measured idle in the compose stack (RSS,
 * release build; bench/run-soak.sh reports it): gateway 15 MB, executor
 * 14 MB; the margin is several times that. */
#define GATEWAY_OWN_MIB 64u
#define EXECUTOR_OWN_MIB 48u

static char *compose;

/* docker-compose.yml and the Swarm stack, one after the other: a variable's
 * default must be the same in both. */
static void load_compose(void)
{
    static const char *const files[] = {"docker-compose.yml", "deploy/swarm/stack.yml"};
    char *text[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        struct sg_error e = {0};
        cr_assert_eq(sg_read_file_capped(files[i], 1u << 20, &text[i], &len[i], &e), 0,
                     "%s: %s (the tests run from the source tree)", files[i], e.msg);
    }
    compose = malloc(len[0] + len[1] + 2);
    cr_assert(compose);
    snprintf(compose, len[0] + len[1] + 2, "%s\n%s", text[0], text[1]);
    free(text[0]);
    free(text[1]);
    unsetenv("SANDGATE_MAX_BODY");
    unsetenv("SANDGATE_MAX_OUTPUT_BYTES");
    unsetenv("SANDGATE_MAX_BODY_BYTES");
}

static void drop_compose(void)
{
    free(compose);
    compose = NULL;
}

TestSuite(memory_defaults, .init = load_compose, .fini = drop_compose);

/* The default of ${NAME:-VALUE} in the compose file, in bytes; every use
 * must agree. */
static uint64_t compose_default(const char *name)
{
    char key[96];
    snprintf(key, sizeof(key), "${%s:-", name);
    uint64_t found = 0;
    for (const char *p = strstr(compose, key); p; p = strstr(p + 1, key)) {
        const char *v = p + strlen(key), *end = strchr(v, '}');
        cr_assert(end && end - v < 32, "%s: no closing brace", name);
        char text[32];
        snprintf(text, sizeof(text), "%.*s", (int)(end - v), v);
        uint64_t bytes = 0;
        cr_assert_eq(sg_parse_size_bytes(text, 1, &bytes, NULL), 0, "%s: '%s'", name, text);
        cr_assert(found == 0 || found == bytes, "%s has two defaults", name);
        found = bytes;
    }
    cr_assert_gt(found, 0, "%s is not in docker-compose.yml", name);
    return found;
}

Test(memory_defaults, the_gateway_budget_holds_a_request_at_the_cap_and_fits_its_limit)
{
    uint64_t limit = compose_default("SANDGATE_GATEWAY_MEMORY");
    struct gw_config c;
    gw_config_defaults(&c);
    c.max_body_bytes = compose_default("SANDGATE_MAX_BODY_BYTES");
    uint64_t budget = 0;
    const char *src = NULL;
    struct sg_error e = {0};
    cr_assert_eq(sg_membudget_choose(c.memory_budget_bytes, limit, GW_MEMORY_BUDGET_DEFAULT,
                                     "gateway", &budget, &src, &e),
                 0, "%s", e.msg);
    cr_assert_str_eq(src, "cgroup", "the shipped gateway derives its budget from its limit");
    uint64_t one = c.max_body_bytes + gw_job_memory(c.max_body_bytes);
    cr_assert_geq(budget, one, "budget %llu < one request at the body cap %llu",
                  (unsigned long long)budget, (unsigned long long)one);
    cr_assert_leq(budget + GATEWAY_OWN_MIB * MIB, limit, "budget + own memory over the limit");
    cr_assert_leq(c.max_bodies_bytes, budget, "the bodies' own cap is inside the budget");
    /* the budget, not max_inflight_requests, bounds concurrent jobs' memory:
     * the smallest reservation times the workers may exceed it */
    cr_assert_gt(budget / gw_job_memory(0), 8, "at least 8 small jobs at once");
}

/* The most one job may reserve at once with these caps: its body (the HTTP
 * server's), the fixed part and output in flight, and the larger of its
 * input (released once the job is written to the sandbox) and its result
 * line at the line's cap (a streamed job's frames too: job_run), held
 * JOB_LINE_MEMORY_COPIES times (the line and its parsed copy, then the
 * parsed copy and the answer). */
/* The most the parsed values of a body may hold beyond their strings:
 * arguments at their cap made of the smallest values ("[0,0,...": one value
 * per 2 bytes) or members ("a":0,: one per 5 bytes at the least), and a
 * few hundred more for the rest of the body (its keys, up to
 * EXEC_FILES_MAX files, imports, the run-time policy's lists). */
static uint64_t worst_tree(void)
{
    uint64_t per_value = EXEC_JSON_VALUE_BYTES / 2;
    uint64_t per_member = (EXEC_JSON_VALUE_BYTES + EXEC_JSON_MEMBER_BYTES) / 5 + 1;
    uint64_t rest = 512 * (EXEC_JSON_VALUE_BYTES + EXEC_JSON_MEMBER_BYTES);
    return EXEC_ARGS_MAX * (per_value > per_member ? per_value : per_member) + rest;
}

static uint64_t worst_job(size_t body, size_t out)
{
    uint64_t input = exec_job_input_memory(body, worst_tree());
    uint64_t line = job_result_cap(out, JOB_ARTIFACTS_MAX) + job_result_cap(out, 0) + 1;
    uint64_t result = JOB_LINE_MEMORY_COPIES * line;
    return body + exec_job_memory(body, worst_tree(), out) - input +
           (input > result ? input : result);
}

Test(memory_defaults, the_executor_budget_holds_a_job_at_the_caps_and_fits_its_limit)
{
    uint64_t limit = compose_default("SANDGATE_EXECUTOR_MEMORY");
    struct exec_config x;
    char *argv[] = {(char[]){"sandgate-executor"}, (char[]){"--language"}, (char[]){"python"},
                    NULL};
    struct sg_error e = {0};
    cr_assert_eq(exec_config_parse(3, argv, &x, &e), 0, "%s", e.msg);
    size_t out = compose_default("SANDGATE_MAX_OUTPUT_BYTES");
    cr_assert_eq(out, x.max_output_bytes, "the compose file's output cap is the executor's");
    uint64_t budget = 0;
    const char *src = NULL;
    cr_assert_eq(sg_membudget_choose(x.memory_budget, limit, EXEC_MEMORY_BUDGET_DEFAULT, "executor",
                                     &budget, &src, &e),
                 0, "%s", e.msg);
    cr_assert_str_eq(src, "cgroup");
    cr_assert_leq(budget + EXECUTOR_OWN_MIB * MIB, limit, "budget + own memory over the limit");
    /* the worst single job every cap allows (a body at the body cap, output
     * and artifacts at theirs, streamed) fits, with room for a few small
     * jobs beside it: no job within the caps is refused for ever */
    uint64_t worst = worst_job(x.max_body, out);
    uint64_t small = 1024 + exec_job_memory(1024, 64 * EXEC_JSON_VALUE_BYTES, out);
    cr_assert_geq(budget, worst + 3 * small,
                  "budget %llu < the worst job at every cap %llu + 3 small jobs %llu",
                  (unsigned long long)budget, (unsigned long long)worst,
                  (unsigned long long)(3 * small));
    /* the issue's case: jobs carrying 4 MiB of files (about 5.4 MiB of JSON
     * body) at concurrency 8 fit, or are refused busy, never killed */
    uint64_t files_job = 5600000 + exec_job_memory(5600000, 64 * EXEC_JSON_VALUE_BYTES, out);
    cr_assert_geq(budget / files_job, 4, "at least four such jobs at once");
    cr_assert_gt(budget / small, 8, "at least 8 small jobs at once");
}

Test(memory_defaults, a_smaller_container_would_be_caught)
{
    /* the check above is not vacuous: half of a 192 MiB executor does not
     * hold the worst job at the default caps */
    struct exec_config x;
    char *argv[] = {(char[]){"sandgate-executor"}, (char[]){"--language"}, (char[]){"python"},
                    NULL};
    cr_assert_eq(exec_config_parse(3, argv, &x, NULL), 0);
    cr_assert_lt(sg_membudget_for_limit(192 * MIB), worst_job(x.max_body, x.max_output_bytes));
}
