/* Unit tests for common/sg_lang (the one language table: canonical names and
 * each surface's accepted spellings, pinned, also through the gateway's
 * request parser) and common/sg_time (the one monotonic clock). The
 * executor's spellings are pinned in test_executor.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gw_request.h"
#include "sg_lang.h"
#include "sg_time.h"

struct spelling {
    const char *name;
    int lang; /* enum sg_lang, or -1: rejected */
};

static void expect(unsigned names, const struct spelling *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum sg_lang l = (enum sg_lang)99;
        int r = sg_lang_parse(cases[i].name, names, &l);
        if (cases[i].lang < 0) {
            cr_assert_eq(r, -EINVAL, "names=%#x '%s' must be rejected", names, cases[i].name);
            cr_assert_eq((int)l, 99, "'%s': rejected input must not write", cases[i].name);
        } else {
            cr_assert_eq(r, 0, "names=%#x '%s' must be accepted", names, cases[i].name);
            cr_assert_eq((int)l, cases[i].lang, "'%s'", cases[i].name);
        }
    }
}

#define PY SG_LANG_PYTHON
#define JS SG_LANG_JAVASCRIPT
#define N(a) (sizeof(a) / sizeof((a)[0]))

Test(sg_lang, canonical_names)
{
    cr_assert_str_eq(sg_lang_name(SG_LANG_PYTHON), "python");
    cr_assert_str_eq(sg_lang_name(SG_LANG_JAVASCRIPT), "nodejs");
    cr_assert_null(sg_lang_name((enum sg_lang)SG_LANG_COUNT));
    cr_assert_eq(SG_LANG_COUNT, 2);
    /* every canonical name parses back to its value under every set */
    for (int l = 0; l < SG_LANG_COUNT; l++) {
        enum sg_lang got;
        cr_assert_eq(sg_lang_parse(sg_lang_name((enum sg_lang)l), SG_LANG_NAMES_API, &got), 0);
        cr_assert_eq((int)got, l);
    }
}

/* The gateway's executors.<lang> keys: canonical names only, exact case. */
Test(sg_lang, api_set_is_canonical_exact)
{
    static const struct spelling c[] = {
        {"python", PY}, {"nodejs", JS},  {"javascript", -1}, {"python3", -1},
        {"js", -1},     {"node", -1},    {"Python", -1},     {"NODEJS", -1},
        {"", -1},       {"python ", -1}, {"pythonx", -1},    {"ruby", -1},
    };
    expect(SG_LANG_NAMES_API, c, N(c));
}

/* The executor's --language and its /v1/run language field: RAGFlow's
 * "javascript" alias too, still exact case. */
Test(sg_lang, ragflow_set_adds_javascript_only)
{
    static const struct spelling c[] = {
        {"python", PY}, {"nodejs", JS},     {"javascript", JS}, {"python3", -1},      {"js", -1},
        {"node", -1},   {"JavaScript", -1}, {"Python", -1},     {"javascript\n", -1}, {"java", -1},
    };
    expect(SG_LANG_NAMES_RAGFLOW, c, N(c));
}

/* sandgate-check --lang and the analyzers' sg_lang_from_name: every alias,
 * exact case. */
Test(sg_lang, all_set_exact_case)
{
    static const struct spelling c[] = {
        {"python", PY},  {"python3", PY}, {"nodejs", JS}, {"javascript", JS},
        {"js", JS},      {"node", JS},    {"Python", -1}, {"JS", -1},
        {"python2", -1}, {"ts", -1},      {"", -1},
    };
    expect(SG_LANG_NAMES_ALL, c, N(c));
    for (size_t i = 0; i < N(c); i++) {
        enum sg_lang a = (enum sg_lang)99, b = (enum sg_lang)99;
        cr_assert_eq(sg_lang_from_name(c[i].name, &a),
                     sg_lang_parse(c[i].name, SG_LANG_NAMES_ALL, &b));
        cr_assert_eq(a, b);
    }
}

/* POST /run: every alias in any case, as the README documents
 * ("javascript (any case) is an alias of nodejs"). */
Test(sg_lang, any_case_for_post_run)
{
    static const struct spelling c[] = {
        {"JavaScript", JS}, {"JAVASCRIPT", JS}, {"javascript", JS},  {"NodeJS", JS},
        {"Node", JS},       {"JS", JS},         {"PYTHON", PY},      {"Python3", PY},
        {"ruby", -1},       {"", -1},           {"java script", -1},
    };
    expect(SG_LANG_NAMES_ALL | SG_LANG_ANY_CASE, c, N(c));
    /* any case widens the case rule, never the set of names */
    enum sg_lang l;
    cr_assert_eq(sg_lang_parse("JavaScript", SG_LANG_NAMES_API | SG_LANG_ANY_CASE, &l), -EINVAL);
    cr_assert_eq(sg_lang_parse("Python3", SG_LANG_NAMES_RAGFLOW | SG_LANG_ANY_CASE, &l), -EINVAL);
    cr_assert_eq(sg_lang_parse("NODEJS", SG_LANG_NAMES_API | SG_LANG_ANY_CASE, &l), 0);
    cr_assert_eq(l, SG_LANG_JAVASCRIPT);
}

Test(sg_lang, null_name_rejected)
{
    enum sg_lang l = SG_LANG_PYTHON;
    cr_assert_eq(sg_lang_parse(NULL, SG_LANG_NAMES_ALL | SG_LANG_ANY_CASE, &l), -EINVAL);
    cr_assert_eq(sg_lang_from_name(NULL, &l), -EINVAL);
    cr_assert_eq(l, SG_LANG_PYTHON);
}

Test(sg_time, monotonic_clock_advances)
{
    uint64_t a = sg_time_mono_us(), b = sg_time_mono_us();
    cr_assert_gt(a, 0);
    cr_assert_geq(b, a);
}

/* The three units read one clock: each reading lies between the readings
 * taken just before and after it, scaled. */
Test(sg_time, units_agree)
{
    uint64_t ns0 = sg_time_mono_ns();
    uint64_t us = sg_time_mono_us();
    uint64_t ms = sg_time_mono_ms();
    uint64_t ns1 = sg_time_mono_ns();
    cr_assert_leq(ns0 / 1000u, us);
    cr_assert_leq(us, ns1 / 1000u);
    cr_assert_leq(ns0 / 1000000u, ms);
    cr_assert_leq(ms, ns1 / 1000000u);
}

/* It is CLOCK_MONOTONIC itself, not a clock of its own (e.g. not
 * CLOCK_REALTIME, whose epoch is decades away from boot-based readings). */
Test(sg_time, matches_clock_monotonic)
{
    struct timespec ts;
    uint64_t before = sg_time_mono_ns();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t after = sg_time_mono_ns();
    uint64_t direct = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    cr_assert_leq(before, direct);
    cr_assert_leq(direct, after);
}

Test(sg_time, sleep_is_measured)
{
    uint64_t t0 = sg_time_mono_ms();
    struct timespec d = {0, 20 * 1000000L};
    while (nanosleep(&d, &d) != 0) {
    }
    uint64_t took = sg_time_mono_ms() - t0;
    cr_assert_geq(took, 19, "slept 20 ms, measured %llu", (unsigned long long)took);
}

/* The gateway's POST /run (and the native requests) through its request
 * parser: every alias, any case; the message names the supported ones. */
static const struct gw_caps run_caps = {
    .max_code_bytes = 64,
    .max_arguments_bytes = 100,
    .max_arguments_depth = 3,
    .max_files = 2,
    .max_files_bytes = 8,
    .max_timeout_ms = 10000,
    .max_memory_mb = 512,
};

static int run_language(const char *lang, enum sg_lang *ret, struct gw_req_error *e)
{
    char body[128];
    snprintf(body, sizeof(body), "{\"code_b64\": \"\", \"language\": \"%s\"}", lang);
    struct gw_request req;
    memset(e, 0, sizeof(*e));
    int r = gw_request_parse(GW_REQ_RAGFLOW_RUN, body, strlen(body), &run_caps, &req, e);
    if (r == 0) {
        *ret = req.lang;
        gw_request_free(&req);
    }
    return r;
}

Test(sg_lang, gateway_run_language_spellings)
{
    static const struct spelling c[] = {
        {"python", PY}, {"Python", PY},     {"PYTHON3", PY},    {"nodejs", JS},
        {"NodeJS", JS}, {"javascript", JS}, {"JavaScript", JS}, {"js", JS},
        {"Node", JS},   {"ruby", -1},       {"python2", -1},    {"typescript", -1},
    };
    for (size_t i = 0; i < N(c); i++) {
        enum sg_lang l = (enum sg_lang)99;
        struct gw_req_error e;
        int r = run_language(c[i].name, &l, &e);
        if (c[i].lang < 0) {
            cr_assert_lt(r, 0, "'%s' must be rejected", c[i].name);
            cr_assert_str_eq(e.code, "unknown_language", "'%s'", c[i].name);
        } else {
            cr_assert_eq(r, 0, "'%s': %s", c[i].name, e.message);
            cr_assert_eq((int)l, c[i].lang, "'%s'", c[i].name);
        }
    }
}
