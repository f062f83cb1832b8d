/* The contracts the gateway and the executors share: the same compose
 * variables (SANDBOX_TIMEOUT, SANDBOX_MAX_MEMORY, SANDBOX_ENABLE_SECCOMP,
 * SANDGATE_MAX_TIMEOUT_MS) reach both daemons, so each string is fed through
 * both daemons' real configuration code here, and both must read it the same
 * way: the same value, or both refuse it. Likewise the input file names,
 * through both daemons' request validation. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_api.h"
#include "exec_config.h"
#include "gw_config.h"
#include "gw_request.h"
#include "sg_file_name.h"

static const char *const contract_envs[] = {"SANDBOX_TIMEOUT", "SANDBOX_MAX_MEMORY",
                                            "SANDBOX_ENABLE_SECCOMP", "SANDGATE_MAX_TIMEOUT_MS",
                                            NULL};

static void clean_env(void)
{
    for (size_t i = 0; contract_envs[i]; i++)
        unsetenv(contract_envs[i]);
}

TestSuite(contract, .init = clean_env, .fini = clean_env);

/* The gateway's view: 0 and its config, or negative. */
static int gateway_reads(struct gw_config *c)
{
    struct sg_error e = {0};
    gw_config_defaults(c);
    return gw_config_apply_env(c, &e);
}

/* The executor's view: no flags but the language, so the variables count (the
 * tests run from the source tree, where the default seccomp profile is). */
static int executor_reads(struct exec_config *c)
{
    char *argv[] = {(char[]){"sandgate-executor"}, (char[]){"--language"}, (char[]){"python"},
                    NULL};
    struct sg_error e = {0};
    return exec_config_parse(3, argv, c, &e);
}

struct timeout_case {
    const char *text;
    long long ms; /* -1: both daemons refuse it */
};

Test(contract, sandbox_timeout_reads_the_same_in_both_daemons)
{
    static const struct timeout_case cases[] = {
        {"10s", 10000},   {"1m", 60000},   {"1m30s", 90000},
        {"2M", 120000},   {"90", 90000},   {"1500ms", 1500},
        {" 10s ", 10000}, {"1h", 3600000}, {"1s500ms", 1500},
        {"ten", -1},      {"-5", -1},      {"10x", -1},
        {"1m1m", -1},     {"30s1m", -1},   {"1.5s", -1},
        {"s", -1},        {"0", -1},       {"99999999999999999999s", -1},
        {"2h", -1},       {"+5s", -1},     {"5 s", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gw_config g;
        struct exec_config x;
        setenv("SANDBOX_TIMEOUT", cases[i].text, 1);
        int rg = gateway_reads(&g), rx = executor_reads(&x);
        if (cases[i].ms < 0) {
            cr_expect_lt(rg, 0, "gateway accepted SANDBOX_TIMEOUT='%s'", cases[i].text);
            cr_expect_lt(rx, 0, "executor accepted SANDBOX_TIMEOUT='%s'", cases[i].text);
            continue;
        }
        cr_expect_eq(rg, 0, "gateway refused SANDBOX_TIMEOUT='%s'", cases[i].text);
        cr_expect_eq(rx, 0, "executor refused SANDBOX_TIMEOUT='%s'", cases[i].text);
        cr_expect_eq(g.default_timeout_ms, (uint64_t)cases[i].ms, "gateway: '%s' -> %llu ms",
                     cases[i].text, (unsigned long long)g.default_timeout_ms);
        cr_expect_eq(x.timeout_ms, (unsigned)cases[i].ms, "executor: '%s' -> %u ms", cases[i].text,
                     x.timeout_ms);
    }
}

struct memory_case {
    const char *text;
    long long mb; /* -1: both daemons refuse it */
};

Test(contract, sandbox_max_memory_reads_the_same_in_both_daemons)
{
    static const struct memory_case cases[] = {
        {"256m", 256},
        {"1g", 1024},
        {"1G", 1024},
        {"512MB", 512},
        {"268435456", 256},
        {"268435456b", 256},
        {"32768k", 32},
        {"33554433", 33},
        {"64mib", 64},
        {" 256m", 256},
        {"512k", -1},
        {"512", -1},
        {"16m", -1},
        {"65g", -1},
        {"lots", -1},
        {"-256m", -1},
        {"256x", -1},
        {"1.5g", -1},
        {"m", -1},
        {"256mm", -1},
        {"99999999999999999999g", -1},
        {"18446744073709551615k", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gw_config g;
        struct exec_config x;
        setenv("SANDBOX_MAX_MEMORY", cases[i].text, 1);
        int rg = gateway_reads(&g), rx = executor_reads(&x);
        if (cases[i].mb < 0) {
            cr_expect_lt(rg, 0, "gateway accepted SANDBOX_MAX_MEMORY='%s'", cases[i].text);
            cr_expect_lt(rx, 0, "executor accepted SANDBOX_MAX_MEMORY='%s'", cases[i].text);
            continue;
        }
        cr_expect_eq(rg, 0, "gateway refused SANDBOX_MAX_MEMORY='%s'", cases[i].text);
        cr_expect_eq(rx, 0, "executor refused SANDBOX_MAX_MEMORY='%s'", cases[i].text);
        cr_expect_eq(g.default_memory_mb, (uint64_t)cases[i].mb, "gateway: '%s' -> %llu MiB",
                     cases[i].text, (unsigned long long)g.default_memory_mb);
        cr_expect_eq(x.memory_mb, (unsigned)cases[i].mb, "executor: '%s' -> %u MiB", cases[i].text,
                     x.memory_mb);
    }
}

Test(contract, sandbox_enable_seccomp_reads_the_same_in_both_daemons)
{
    static const struct {
        const char *text;
        int on; /* -1: both refuse */
    } cases[] = {{"true", 1}, {"TRUE", 1}, {"1", 1},   {"yes", 1},    {"on", 1}, {"false", 0},
                 {"0", 0},    {"No", 0},   {"off", 0}, {"maybe", -1}, {"2", -1}, {"truee", -1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gw_config g;
        struct exec_config x;
        setenv("SANDBOX_ENABLE_SECCOMP", cases[i].text, 1);
        int rg = gateway_reads(&g), rx = executor_reads(&x);
        if (cases[i].on < 0) {
            cr_expect_lt(rg, 0, "gateway accepted SANDBOX_ENABLE_SECCOMP='%s'", cases[i].text);
            cr_expect_lt(rx, 0, "executor accepted SANDBOX_ENABLE_SECCOMP='%s'", cases[i].text);
            continue;
        }
        cr_expect_eq(rg, 0, "gateway refused '%s'", cases[i].text);
        cr_expect_eq(rx, 0, "executor refused '%s'", cases[i].text);
        cr_expect_eq(g.enable_seccomp, cases[i].on, "gateway: '%s'", cases[i].text);
        cr_expect_eq(!x.seccomp_off, cases[i].on, "executor: '%s'", cases[i].text);
    }
}

Test(contract, empty_ragflow_variables_count_as_unset_in_both_daemons)
{
    struct gw_config g, gd;
    struct exec_config x, xd;
    cr_assert_eq(gateway_reads(&gd), 0);
    cr_assert_eq(executor_reads(&xd), 0);
    for (size_t i = 0; contract_envs[i]; i++)
        setenv(contract_envs[i], "", 1);
    cr_expect_eq(gateway_reads(&g), 0);
    cr_expect_eq(executor_reads(&x), 0);
    cr_expect_eq(g.default_timeout_ms, gd.default_timeout_ms);
    cr_expect_eq(g.default_memory_mb, gd.default_memory_mb);
    cr_expect_eq(g.enable_seccomp, gd.enable_seccomp);
    cr_expect_eq(x.timeout_ms, xd.timeout_ms);
    cr_expect_eq(x.memory_mb, xd.memory_mb);
    cr_expect_eq(x.max_timeout_ms, xd.max_timeout_ms);
    cr_expect_eq(x.seccomp_off, xd.seccomp_off,
                 "an empty SANDBOX_ENABLE_SECCOMP turns nothing off");
}

Test(contract, sandgate_max_timeout_ms_reads_the_same_in_both_daemons)
{
    static const struct timeout_case cases[] = {
        {"60000", 60000}, {"2m", 120000}, {"90s", 90000}, {"1m30s", 90000},
        {"1h", 3600000},  {"abc", -1},    {"-1", -1},     {"5h", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gw_config g;
        struct exec_config x;
        setenv("SANDGATE_MAX_TIMEOUT_MS", cases[i].text, 1);
        int rg = gateway_reads(&g), rx = executor_reads(&x);
        if (cases[i].ms < 0) {
            cr_expect_lt(rg, 0, "gateway accepted SANDGATE_MAX_TIMEOUT_MS='%s'", cases[i].text);
            cr_expect_lt(rx, 0, "executor accepted SANDGATE_MAX_TIMEOUT_MS='%s'", cases[i].text);
            continue;
        }
        cr_expect_eq(rg, 0, "gateway refused SANDGATE_MAX_TIMEOUT_MS='%s'", cases[i].text);
        cr_expect_eq(rx, 0, "executor refused SANDGATE_MAX_TIMEOUT_MS='%s'", cases[i].text);
        cr_expect_eq(g.max_timeout_ms, (uint64_t)cases[i].ms, "gateway: '%s'", cases[i].text);
        cr_expect_eq(x.max_timeout_ms, (unsigned)cases[i].ms, "executor: '%s'", cases[i].text);
    }
}

Test(contract, input_file_names_are_judged_the_same_by_both_daemons)
{
    static const char *const names[] = {"data.csv", "A_b-9.txt",   "x",    "a..b", "a b", ".env",
                                        "..",       "caf\xc3\xa9", "a\\b", "a:b",  "a/b"};
    static const struct gw_caps caps = {.max_code_bytes = 64,
                                        .max_arguments_bytes = 100,
                                        .max_arguments_depth = 3,
                                        .max_files = 2,
                                        .max_files_bytes = 8,
                                        .max_timeout_ms = 10000,
                                        .max_memory_mb = 512};
    struct exec_config x;
    cr_assert_eq(executor_reads(&x), 0);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        json_t *body = json_pack("{s:s, s:s, s:{s:s}}", "language", "python", "code", "x", "files",
                                 names[i], "YQ==");
        char *text = json_dumps(body, 0);
        struct gw_request g;
        struct gw_req_error ge = {0};
        struct exec_request r;
        struct sg_error xe = {0};
        int rg = gw_request_parse(GW_REQ_RUN, text, strlen(text), &caps, &g, &ge);
        int rx = exec_request_parse(text, strlen(text), &x, &r, &xe);
        cr_expect_eq(rg == 0, rx == 0, "'%s': gateway %s, executor %s", names[i],
                     rg == 0 ? "accepts" : ge.message, rx == 0 ? "accepts" : xe.msg);
        cr_expect_eq(rg == 0, sg_file_name_ok(names[i], strlen(names[i])), "'%s'", names[i]);
        if (rg == 0)
            gw_request_free(&g);
        if (rx == 0)
            exec_request_free(&r);
        free(text);
        json_decref(body);
    }
}
