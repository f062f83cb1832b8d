/* Unit tests of pool flavours: the spec parser, the choice of a flavour from
 * a job's imports and the pools' state, sizing within a memory budget, the
 * /v1/exec `imports` field, the flavour's container spec, the memory figure
 * read from Docker stats, and --flavour / --pool-memory-mb in the config;
 * package sets: a job importing what only a set installs goes there. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_config.h"
#include "docker.h"
#include "exec_api.h"
#include "flavour.h"
#include "pools.h"
#include "sandbox.h"

/* ---- spec parser ---- */

Test(flavour_parse, full_spec)
{
    struct flavour f;
    cr_assert_eq(flavour_parse("pd=numpy,pandas:3", &f, NULL), 0);
    cr_assert_str_eq(f.name, "pd");
    cr_assert_eq(f.n_modules, 2);
    cr_assert_str_eq(f.modules[0], "numpy");
    cr_assert_str_eq(f.modules[1], "pandas");
    cr_assert_eq(f.size, 3);
    cr_assert(f.size_set);
}

Test(flavour_parse, short_forms)
{
    struct flavour f;
    cr_assert_eq(flavour_parse("plain", &f, NULL), 0);
    cr_assert_eq(f.n_modules, 0);
    cr_assert(!f.size_set);
    cr_assert_eq(flavour_parse("plain:4", &f, NULL), 0);
    cr_assert_eq(f.size, 4);
    cr_assert_eq(flavour_parse("plain=:0", &f, NULL), 0);
    cr_assert_eq(f.n_modules, 0);
    cr_assert_eq(f.size, 0);
    cr_assert_eq(flavour_parse("mpl=matplotlib.pyplot", &f, NULL), 0);
    cr_assert_str_eq(f.modules[0], "matplotlib.pyplot");
    cr_assert(!f.size_set);
}

Test(flavour_parse, rejects_bad_specs)
{
    static const char *bad[] = {
        "",
        "=numpy",
        "bad name=numpy",
        "n=numpy:",
        "n=numpy:65",
        "n=numpy:-1",
        "n=numpy:1x",
        "n=num py",
        "n=numpy,,pandas",
        "n=numpy,numpy",
        "n=a;b",
        "n=$(id)",
        "a_name_that_is_longer_than_31_bytes=numpy",
        "n=a_module_name_that_is_longer_than_sixty_three_bytes_and_so_is_refused_here",
        "n=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct flavour f;
        struct sg_error e = {0};
        cr_expect_eq(flavour_parse(bad[i], &f, &e), -EINVAL, "accepted '%s'", bad[i]);
        cr_expect_neq(e.msg[0], '\0', "no message for '%s'", bad[i]);
    }
}

Test(flavour_set, list_and_finish_sort_by_cost)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "heavy=numpy,pandas;plain  numpy=numpy:2", NULL), 0);
    cr_assert_eq(s.n, 3);
    cr_assert_eq(flavour_set_finish(&s, 5, NULL), 0);
    cr_assert_str_eq(s.f[0].name, "plain");
    cr_assert_eq(s.f[0].size, 5, "a flavour without modules and size takes --pool-size");
    cr_assert_str_eq(s.f[1].name, "numpy");
    cr_assert_eq(s.f[1].size, 2);
    cr_assert_str_eq(s.f[2].name, "heavy");
    cr_assert_eq(s.f[2].size, 1, "a heavy flavour without a size keeps one");
}

/* A job's "flavour" (RAGFlow's base_image) is tried first when it exists,
 * the imports' choice after it; an unknown name changes nothing. */
Test(flavour_choose, a_named_flavour_goes_first)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "heavy=numpy,pandas;plain  numpy=numpy:2", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 5, NULL), 0);
    struct flavour_choice c;
    flavour_choose(&s, NULL, 0, &c);
    cr_assert_eq(c.order[0], 0u, "a plain job: the plain flavour");
    unsigned before = c.n;
    flavour_prefer(&s, "heavy", &c);
    cr_assert_str_eq(s.f[c.order[0]].name, "heavy");
    cr_assert_eq(c.n, before + 1);
    cr_assert_str_eq(s.f[c.order[1]].name, "plain");
    const char *imports[] = {"numpy", "pandas"};
    flavour_choose(&s, imports, 2, &c);
    cr_assert_str_eq(s.f[c.order[0]].name, "heavy");
    unsigned n = c.n;
    flavour_prefer(&s, "numpy", &c); /* already a fall-back: moved, not added */
    cr_assert_str_eq(s.f[c.order[0]].name, "numpy");
    cr_assert_str_eq(s.f[c.order[1]].name, "heavy");
    cr_assert_eq(c.n, n);
    struct flavour_choice d = c;
    flavour_prefer(&s, "nope", &d);
    flavour_prefer(&s, NULL, &d);
    cr_assert_eq(memcmp(&c, &d, sizeof(c)), 0);
}

Test(flavour_set, rejects_duplicates_and_too_many)
{
    struct flavour_set s = {0};
    struct sg_error e = {0};
    cr_assert_eq(flavour_set_add_list(&s, "a=numpy b=numpy", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 1, &e), -EINVAL);
    cr_assert(strstr(e.msg, "same modules"), "%s", e.msg);
    memset(&s, 0, sizeof(s));
    cr_assert_eq(flavour_set_add_list(&s, "a=numpy a=pandas", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 1, &e), -EINVAL);
    memset(&s, 0, sizeof(s));
    for (unsigned i = 0; i < FLAVOUR_MAX; i++) {
        char spec[32];
        snprintf(spec, sizeof(spec), "f%u=m%u", i, i);
        cr_assert_eq(flavour_set_add(&s, spec, NULL), 0);
    }
    cr_assert_eq(flavour_set_add(&s, "one_more=s", &e), -E2BIG);
    memset(&s, 0, sizeof(s));
    cr_assert_eq(flavour_set_finish(&s, 1, &e), -EINVAL, "no flavour at all");
}

Test(flavour_set, defaults)
{
    struct flavour_set s;
    flavour_set_defaults(&s, true);
    cr_assert_eq(flavour_set_finish(&s, 2, NULL), 0);
    cr_assert_eq(s.n, 4);
    cr_assert_str_eq(s.f[0].name, "plain");
    cr_assert_eq(s.f[0].size, 2);
    cr_assert_str_eq(s.f[3].name, "matplotlib");
    char pre[256];
    flavour_preimport(&s.f[3], pre, sizeof(pre));
    cr_assert_str_eq(pre, "numpy,pandas,matplotlib");
    flavour_set_defaults(&s, false);
    cr_assert_eq(s.n, 1);
}

/* ---- the choice ---- */

static struct flavour_set py_set(void)
{
    struct flavour_set s;
    flavour_set_defaults(&s, true); /* plain, numpy, pandas(numpy,pandas), matplotlib(+mpl) */
    cr_assert_eq(flavour_set_finish(&s, 2, NULL), 0);
    return s;
}

static const char *order_names(const struct flavour_set *s, const struct flavour_choice *c)
{
    static char out[256];
    out[0] = '\0';
    for (unsigned i = 0; i < c->n; i++) {
        strcat(out, i ? " " : "");
        strcat(out, s->f[c->order[i]].name);
    }
    return out;
}

static const char *choose(const struct flavour_set *s, size_t n, ...)
{
    const char *imports[16];
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        imports[i] = va_arg(ap, const char *);
    va_end(ap);
    struct flavour_choice c;
    flavour_choose(s, imports, n, &c);
    return order_names(s, &c);
}

Test(flavour_choose, plain_job_only_plain)
{
    struct flavour_set s = py_set();
    cr_assert_str_eq(choose(&s, 0), "plain");
    cr_assert_str_eq(choose(&s, 3, "json", "math", "re"), "plain",
                     "light imports never take a heavy sandbox, not even as a fall-back");
}

Test(flavour_choose, pandas_job_ideal_then_lighter)
{
    struct flavour_set s = py_set();
    cr_assert_str_eq(choose(&s, 2, "pandas", "json"), "pandas plain");
    cr_assert_str_eq(choose(&s, 2, "numpy", "pandas"), "pandas numpy plain");
    cr_assert_str_eq(choose(&s, 1, "numpy"), "numpy plain");
    cr_assert_str_eq(choose(&s, 3, "matplotlib.pyplot", "pandas", "numpy"),
                     "matplotlib pandas numpy plain");
}

Test(flavour_choose, dotted_names_count_by_top_level)
{
    struct flavour_set s = py_set();
    cr_assert_str_eq(choose(&s, 1, "pandas.io.json"), "pandas plain");
    cr_assert_str_eq(choose(&s, 1, "pandasx"), "plain", "a prefix is not the module");
}

Test(flavour_choose, nothing_covers)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "a=numpy b=pandas", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 1, NULL), 0);
    /* no flavour holds both: the best partial one first */
    cr_assert_str_eq(choose(&s, 2, "numpy", "pandas"), "a b");
    /* no plain flavour: a light job still gets the cheapest sandbox */
    cr_assert_str_eq(choose(&s, 1, "json"), "a");
}

Test(flavour_choose, node_specifiers)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "plain ax=axios,@scope/pkg", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 1, NULL), 0);
    cr_assert_str_eq(choose(&s, 1, "axios/lib/x"), "ax plain");
    cr_assert_str_eq(choose(&s, 1, "@scope/pkg/sub"), "ax plain");
    cr_assert_str_eq(choose(&s, 1, "@scope/other"), "plain");
    cr_assert_str_eq(choose(&s, 1, "node:fs"), "plain");
}

Test(flavour_pick, first_idle_in_order)
{
    struct flavour_set s = py_set();
    const char *imp[] = {"pandas"};
    struct flavour_choice c;
    flavour_choose(&s, imp, 1, &c);
    unsigned idle[4] = {1, 1, 1, 1}; /* plain numpy pandas matplotlib */
    cr_assert_eq(flavour_pick(&c, idle), 2, "the ideal pool has one");
    idle[2] = 0;
    cr_assert_eq(flavour_pick(&c, idle), 0, "ideal empty: plain, never matplotlib");
    idle[0] = 0;
    cr_assert_eq(flavour_pick(&c, idle), -1, "nothing allowed is idle: wait");
    const char *none[] = {"json"};
    flavour_choose(&s, none, 1, &c);
    unsigned heavy_only[4] = {0, 1, 1, 1};
    cr_assert_eq(flavour_pick(&c, heavy_only), -1, "a plain job waits rather than go heavy");
}

/* ---- sizing ---- */

Test(flavour_targets, budget_round_robin_cheapest_first)
{
    struct flavour_set s = py_set();
    unsigned want[4] = {2, 1, 1, 1}, mem[4] = {20, 40, 70, 90}, t[4];
    flavour_targets(&s, want, mem, 0, t);
    cr_assert(t[0] == 2 && t[1] == 1 && t[2] == 1 && t[3] == 1, "no budget: as wanted");
    flavour_targets(&s, want, mem, 1000, t);
    cr_assert(t[0] == 2 && t[1] == 1 && t[2] == 1 && t[3] == 1);
    flavour_targets(&s, want, mem, 130, t); /* 20+40+70 = 130: each first one, no second */
    cr_assert(t[0] == 1 && t[1] == 1 && t[2] == 1 && t[3] == 0, "%u %u %u %u", t[0], t[1], t[2],
              t[3]);
    flavour_targets(&s, want, mem, 150, t); /* 130 + a second plain (20) */
    cr_assert(t[0] == 2 && t[1] == 1 && t[2] == 1 && t[3] == 0);
    flavour_targets(&s, want, mem, 10, t);
    cr_assert(t[0] == 0 && t[1] == 0 && t[2] == 0 && t[3] == 0, "nothing fits");
}

Test(flavour_targets, never_exceeds_budget)
{
    struct flavour_set s = py_set();
    unsigned want[4] = {64, 64, 64, 64}, mem[4] = {17, 33, 68, 91}, t[4];
    for (unsigned budget = 1; budget < 3000; budget += 37) {
        flavour_targets(&s, want, mem, budget, t);
        unsigned used = 0;
        for (int i = 0; i < 4; i++)
            used += t[i] * mem[i];
        cr_assert_leq(used, budget);
        for (int i = 0; i < 4; i++) /* and nothing more would fit */
            cr_assert(t[i] == want[i] || used + mem[i] > budget, "budget %u flavour %d", budget, i);
    }
}

Test(flavour_want, follows_arrival_rate)
{
    cr_assert_eq(flavour_want(4, 0, 60000, 2000), 1, "idle flavour keeps one");
    cr_assert_eq(flavour_want(4, 60, 60000, 2000), 2, "1 job/s x 2 s refill");
    cr_assert_eq(flavour_want(4, 600, 60000, 2000), 4, "capped at size");
    cr_assert_eq(flavour_want(0, 600, 60000, 2000), 0, "size 0 stays 0");
}

Test(flavour_mem, estimate_grows_with_modules)
{
    struct flavour_set s = py_set();
    cr_assert_lt(flavour_mem_estimate(&s.f[0]), flavour_mem_estimate(&s.f[1]));
    cr_assert_lt(flavour_mem_estimate(&s.f[2]), flavour_mem_estimate(&s.f[3]));
}

/* Parse a NULL-terminated list of flags (getopt wants char *, literals are const). */
static int cfg_parse(struct exec_config *c, struct sg_error *e, ...)
{
    char *argv[32] = {strdup("sandgate-executor")};
    int argc = 1;
    va_list ap;
    va_start(ap, e);
    for (const char *a = va_arg(ap, const char *); a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = strdup(a);
    va_end(ap);
    int r = exec_config_parse(argc, argv, c, e);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return r;
}

/* ---- /v1/exec imports ---- */

static struct exec_config api_config(void)
{
    struct exec_config c;
    unsetenv("SANDGATE_FLAVOURS");
    cr_assert_eq(cfg_parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    return c;
}

static int parse_req(const char *body, struct exec_request *r, struct sg_error *e)
{
    struct exec_config c = api_config();
    return exec_request_parse(body, strlen(body), &c, r, e);
}

Test(exec_imports, accepted_and_borrowed)
{
    struct exec_request r;
    cr_assert_eq(parse_req("{\"code\":\"x\",\"imports\":[\"pandas\",\"numpy.linalg\","
                           "\"@scope/pkg\",\"node:fs\"]}",
                           &r, NULL),
                 0);
    cr_assert_eq(r.n_imports, 4);
    cr_assert_str_eq(r.imports[0], "pandas");
    cr_assert_str_eq(r.imports[3], "node:fs");
    exec_request_free(&r);
    cr_assert_eq(parse_req("{\"code\":\"x\"}", &r, NULL), 0);
    cr_assert_eq(r.n_imports, 0, "imports are optional");
    exec_request_free(&r);
    cr_assert_eq(parse_req("{\"code\":\"x\",\"imports\":null}", &r, NULL), 0);
    exec_request_free(&r);
}

Test(exec_imports, rejects_hostile)
{
    static const char *bad[] = {
        "{\"code\":\"x\",\"imports\":\"pandas\"}",
        "{\"code\":\"x\",\"imports\":{\"a\":1}}",
        "{\"code\":\"x\",\"imports\":[1]}",
        "{\"code\":\"x\",\"imports\":[\"\"]}",
        "{\"code\":\"x\",\"imports\":[\"a b\"]}",
        "{\"code\":\"x\",\"imports\":[\"a\\\"b\"]}",
        "{\"code\":\"x\",\"imports\":[\"a\\nb\"]}",
        "{\"code\":\"x\",\"imports\":[\"\\u00e9\"]}",
        "{\"code\":\"x\",\"imports\":[[\"pandas\"]]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct exec_request r;
        struct sg_error e = {0};
        cr_expect_eq(parse_req(bad[i], &r, &e), -EINVAL, "accepted %s", bad[i]);
        cr_expect(strstr(e.msg, "imports"), "%s", e.msg);
    }
}

Test(exec_imports, bounded_count_and_length)
{
    char body[16384];
    size_t n = (size_t)snprintf(body, sizeof(body), "{\"code\":\"x\",\"imports\":[");
    for (int i = 0; i < EXEC_IMPORTS_MAX; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"m%d\"", i ? "," : "", i);
    snprintf(body + n, sizeof(body) - n, "]}");
    struct exec_request r;
    struct sg_error e = {0};
    cr_assert_eq(parse_req(body, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.n_imports, EXEC_IMPORTS_MAX);
    exec_request_free(&r);
    snprintf(body + n, sizeof(body) - n, ",\"one_more\"]}");
    cr_assert_eq(parse_req(body, &r, &e), -E2BIG);

    char name[EXEC_IMPORT_NAME_MAX + 2];
    memset(name, 'a', sizeof(name) - 1);
    name[EXEC_IMPORT_NAME_MAX] = '\0';
    snprintf(body, sizeof(body), "{\"code\":\"x\",\"imports\":[\"%s\"]}", name);
    cr_assert_eq(parse_req(body, &r, &e), 0, "a name of exactly the maximum");
    exec_request_free(&r);
    name[EXEC_IMPORT_NAME_MAX] = 'a';
    name[EXEC_IMPORT_NAME_MAX + 1] = '\0';
    snprintf(body, sizeof(body), "{\"code\":\"x\",\"imports\":[\"%s\"]}", name);
    cr_assert_eq(parse_req(body, &r, &e), -EINVAL, "one byte over");
}

Test(exec_imports, response_names_the_pool)
{
    struct exec_request r;
    cr_assert_eq(parse_req("{\"code\":\"x\",\"imports\":[\"pandas\"]}", &r, NULL), 0);
    r.pool = "pandas";
    r.pool_fallback = 1;
    struct exec_outcome o;
    outcome_init(&o);
    json_t *j = exec_response_json(r.job_id, &r, &o, 1.0, 2.0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "timings"), "pool")),
                     "pandas");
    json_t *p = json_object_get(j, "pool");
    cr_assert_str_eq(json_string_value(json_object_get(p, "flavour")), "pandas");
    cr_assert(json_is_true(json_object_get(p, "fallback")));
    json_decref(j);
    outcome_clear(&o);
    exec_request_free(&r);
}

/* ---- the flavour's container spec ---- */

Test(sandbox_flavour, env_and_label)
{
    struct exec_config c = api_config();
    char *base = NULL, *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &base, NULL), 0);
    cr_assert_eq(sandbox_flavour_body(base, "inst.pandas", "numpy,pandas", NULL, &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    json_t *env = json_object_get(j, "Env");
    bool found = false;
    for (size_t i = 0; i < json_array_size(env); i++)
        found |= strcmp(json_string_value(json_array_get(env, i)),
                        "SANDGATE_PREIMPORT=numpy,pandas") == 0;
    cr_assert(found);
    json_t *labels = json_object_get(j, "Labels");
    cr_assert_str_eq(json_string_value(json_object_get(labels, EXEC_LABEL_POOL)), "inst.pandas");
    cr_assert_str_eq(json_string_value(json_object_get(labels, EXEC_LABEL_KEY)), c.instance,
                     "the instance label stays: the start-up reap removes every flavour's");
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(j, "HostConfig"), "Runtime")), "runsc",
        "the rest of the spec is untouched");
    json_decref(j);
    free(body);
    cr_assert_eq(sandbox_flavour_body("not json", "l", "", NULL, &body, NULL), -ENOMEM);
    free(base);
}

/* ---- Docker stats ---- */

Test(docker_stats, memory_minus_inactive_cache)
{
    const char *v1 = "{\"memory_stats\":{\"usage\":67883008,\"stats\":{\"total_inactive_file\":"
                     "368640}}}";
    unsigned long long b = 0;
    cr_assert_eq(docker_parse_stats_memory(v1, strlen(v1), &b), 0);
    cr_assert_eq(b, 67883008ull - 368640ull);
    const char *v2 = "{\"memory_stats\":{\"usage\":1000,\"stats\":{\"inactive_file\":5000}}}";
    cr_assert_eq(docker_parse_stats_memory(v2, strlen(v2), &b), 0);
    cr_assert_eq(b, 1000, "a cache figure above usage is ignored");
    static const char *bad[] = {"",
                                "[]",
                                "{}",
                                "{\"memory_stats\":{}}",
                                "{\"memory_stats\":{\"usage\":-1}}",
                                "{\"memory_stats\":{\"usage\":\"1\"}}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(docker_parse_stats_memory(bad[i], strlen(bad[i]), &b), -EPROTO, "%s", bad[i]);
}

/* ---- configuration ---- */

Test(flavour_config, flags_replace_env_and_defaults)
{
    struct exec_config c;
    setenv("SANDGATE_FLAVOURS", "plain;np=numpy:2", 1);
    cr_assert_eq(cfg_parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    cr_assert_eq(c.flavours.n, 2);
    cr_assert_str_eq(c.flavours.f[1].name, "np");
    cr_assert_eq(cfg_parse(&c, NULL, "--language", "python", "--seccomp", "none", "--flavour",
                           "plain:3", "--flavour", "pd=numpy,pandas:1", "--pool-memory-mb", "512",
                           NULL),
                 0);
    cr_assert_eq(c.flavours.n, 2, "flags replace the environment's list");
    cr_assert_str_eq(c.flavours.f[1].name, "pd");
    cr_assert_eq(c.flavours.f[0].size, 3);
    cr_assert_eq(c.pool_memory_mb, 512);
    unsetenv("SANDGATE_FLAVOURS");
    cr_assert_eq(cfg_parse(&c, NULL, "--language", "nodejs", "--seccomp", "none", NULL), 0);
    cr_assert_eq(c.flavours.n, 1, "nodejs: plain only");
    cr_assert_eq(c.flavours.f[0].size, c.pool_size);
    cr_assert_eq(cfg_parse(&c, NULL, "--language", "python", "--seccomp", "none", NULL), 0);
    cr_assert_eq(c.flavours.n, 4, "python: the four default flavours");
    cr_assert_eq(c.pool_memory_mb, 0, "no budget unless asked");
}

Test(flavour_config, errors_name_the_problem)
{
    unsetenv("SANDGATE_FLAVOURS");
    struct exec_config c;
    struct sg_error e = {0};
    cr_assert_eq(cfg_parse(&c, &e, "--language", "python", "--seccomp", "none", "--flavour",
                           "pd=pan das", NULL),
                 -EINVAL);
    cr_assert(strstr(e.msg, "--flavour") && strstr(e.msg, "pan das"), "%s", e.msg);
    setenv("SANDGATE_FLAVOURS", "a=x b=x", 1);
    cr_assert_eq(cfg_parse(&c, &e, "--language", "python", "--seccomp", "none", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "same modules"), "%s", e.msg);
    setenv("SANDGATE_FLAVOURS", "a=x:99", 1);
    cr_assert_eq(cfg_parse(&c, &e, "--language", "python", "--seccomp", "none", NULL), -EINVAL);
    cr_assert(strstr(e.msg, "SANDGATE_FLAVOURS"), "%s", e.msg);
    unsetenv("SANDGATE_FLAVOURS");
    cr_assert_eq(cfg_parse(&c, &e, "--language", "python", "--seccomp", "none", "--pool-memory-mb",
                           "lots", NULL),
                 -EINVAL);
}

/* Sessions hold sandboxes outside the pools: they count against the budget. */
Test(pools, sessions_count_against_the_memory_budget)
{
    cr_assert_eq(pools_budget_left(0, 500), 0, "no budget stays no budget");
    cr_assert_eq(pools_budget_left(1000, 0), 1000);
    cr_assert_eq(pools_budget_left(1000, 300), 700);
    cr_assert_eq(pools_budget_left(1000, 1000), 1, "used up: room for no sandbox, not unlimited");
    cr_assert_eq(pools_budget_left(1000, 4000), 1);
}

/* ---- package sets: routing (manifests in test_pkgset.c) ---- */

/* plain, numpy (pre-imports numpy) and a set "xl" on its own image that
 * installs openpyxl and pre-imports nothing, and "sci" installing sklearn. */
static struct flavour_set sets(void)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "numpy=numpy:1 plain xl sci=numpy", NULL), 0);
    struct flavour *xl = &s.f[2], *sci = &s.f[3];
    snprintf(xl->image, sizeof(xl->image), "sandgate/set-python-xl:t");
    cr_assert_eq(flavour_add_provides(xl, "openpyxl", NULL), 0);
    cr_assert_eq(flavour_add_provides(xl, "et_xmlfile", NULL), 0);
    snprintf(sci->image, sizeof(sci->image), "sandgate/set-python-sci:t");
    cr_assert_eq(flavour_add_provides(sci, "sklearn", NULL), 0);
    cr_assert_eq(flavour_set_finish(&s, 2, NULL), 0);
    return s;
}

Test(pkgset_route, cost_order_puts_plain_before_sets_of_the_same_weight)
{
    struct flavour_set s = sets();
    cr_assert_str_eq(s.f[0].name, "plain", "fewer installed modules first");
    cr_assert_str_eq(s.f[1].name, "xl");
}

Test(pkgset_route, a_sets_module_only_goes_to_that_set)
{
    struct flavour_set s = sets();
    cr_assert_str_eq(choose(&s, 2, "openpyxl", "json"), "xl",
                     "no fall-back to a pool that lacks the package");
    cr_assert_str_eq(choose(&s, 1, "openpyxl.styles"), "xl", "submodules count by top");
    cr_assert_str_eq(choose(&s, 2, "sklearn", "numpy"), "sci",
                     "the set pre-imports numpy too: ideal, and the only one");
}

Test(pkgset_route, plain_jobs_never_need_a_set_but_may_fall_back_onto_a_light_one)
{
    struct flavour_set s = sets();
    cr_assert_str_eq(choose(&s, 1, "json"), "plain xl",
                     "a set that pre-imports nothing carries nothing the job does not use");
    cr_assert_str_eq(choose(&s, 1, "numpy"), "numpy sci plain xl");
}

Test(pkgset_route, modules_of_two_sets_at_once_have_no_flavour)
{
    struct flavour_set s = sets();
    struct flavour_choice c;
    const char *both[] = {"openpyxl", "sklearn"};
    cr_assert_str_eq(choose(&s, 2, "openpyxl", "sklearn"), "");
    flavour_choose(&s, both, 2, &c);
    cr_assert_eq(c.n, 0);
    cr_assert_str_eq(c.missing, "openpyxl");
    flavour_choose(&s, both, 1, &c);
    cr_assert_null(c.missing);
}

/* RAGFlow's base_image names a flavour: never one that lacks the package set
 * the job needs (another image), nor one missing the ideal's pre-imports. */
Test(pkgset_route, a_named_flavour_never_replaces_a_needed_set)
{
    struct flavour_set s = sets();
    struct flavour_choice c;
    const char *xl[] = {"openpyxl"};
    flavour_choose(&s, xl, 1, &c);
    struct flavour_choice d = c;
    flavour_prefer(&s, "plain", &d);
    flavour_prefer(&s, "sci", &d);
    cr_assert_eq(memcmp(&c, &d, sizeof(c)), 0, "the xl set stays the only choice");
    const char *both[] = {"openpyxl", "sklearn"};
    flavour_choose(&s, both, 2, &c);
    flavour_prefer(&s, "plain", &c);
    cr_assert_eq(c.n, 0, "a job no set can serve stays unserved");
    const char *np[] = {"numpy"};
    flavour_choose(&s, np, 1, &c);
    d = c;
    flavour_prefer(&s, "xl", &d); /* already a fall-back (pre-imports nothing): moved */
    cr_assert_str_eq(s.f[d.order[0]].name, "xl");
}

Test(pkgset_route, same_modules_on_another_image_is_not_a_duplicate)
{
    struct flavour_set s = {0};
    cr_assert_eq(flavour_set_add_list(&s, "plain xl", NULL), 0);
    struct sg_error e = {0};
    cr_assert_eq(flavour_set_finish(&s, 1, &e), -EINVAL, "same modules, same image");
    memset(&s, 0, sizeof(s));
    cr_assert_eq(flavour_set_add_list(&s, "plain xl", NULL), 0);
    snprintf(s.f[1].image, sizeof(s.f[1].image), "img");
    cr_assert_eq(flavour_set_finish(&s, 1, &e), 0, "%s", e.msg);
}

Test(pkgset_route, provides_are_bounded_and_checked)
{
    struct flavour f = {.name = "x"};
    struct sg_error e = {0};
    cr_assert_eq(flavour_add_provides(&f, "", &e), -EINVAL);
    cr_assert_eq(flavour_add_provides(&f, "a b", &e), -EINVAL);
    char longname[FLAVOUR_MODULE_MAX + 2];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cr_assert_eq(flavour_add_provides(&f, longname, &e), -EINVAL);
    for (unsigned i = 0; i < FLAVOUR_PROVIDES_MAX; i++) {
        char m[16];
        snprintf(m, sizeof(m), "m%u", i);
        cr_assert_eq(flavour_add_provides(&f, m, &e), 0);
    }
    cr_assert_eq(flavour_add_provides(&f, "m0", &e), 0, "a module twice is one module");
    cr_assert_eq(flavour_add_provides(&f, "one_more", &e), -EINVAL);
    cr_assert(strstr(e.msg, "more than"), "%s", e.msg);
}

Test(pkgset_route, declared_memory_replaces_the_estimate)
{
    struct flavour f = {.name = "x", .n_modules = 2};
    cr_assert_eq(flavour_mem_estimate(&f), FLAVOUR_MEM_BASE_MB + 2 * FLAVOUR_MEM_PER_MODULE_MB);
    f.mem_mb = 75;
    cr_assert_eq(flavour_mem_estimate(&f), 75);
}

Test(pkgset_route, a_flavour_body_runs_on_its_sets_image)
{
    char *body = NULL;
    const char *base = "{\"Image\":\"sandgate/sandbox-python:t\",\"Env\":[],\"Labels\":{}}";
    cr_assert_eq(sandbox_flavour_body(base, "i.xl", "", "sandgate/set-python-xl:t", &body, NULL),
                 0);
    json_t *j = json_loads(body, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(j, "Image")), "sandgate/set-python-xl:t");
    json_decref(j);
    free(body);
    cr_assert_eq(sandbox_flavour_body(base, "i.plain", "", "", &body, NULL), 0);
    j = json_loads(body, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(j, "Image")), "sandgate/sandbox-python:t");
    json_decref(j);
    free(body);
}

Test(pools_launch_parallel, heavy_flavours_one_at_a_time_unless_restored)
{
    struct flavour_set s = {0};
    struct sg_error e = {0};
    cr_assert_eq(flavour_set_add_list(&s, "plain:4;pandas=numpy,pandas:2;tiny=zlib:1", &e), 0, "%s",
                 e.msg);
    cr_assert_eq(flavour_set_finish(&s, 2, &e), 0, "%s", e.msg);
    const struct flavour *plain = NULL, *pandas = NULL, *tiny = NULL;
    for (unsigned i = 0; i < s.n; i++) {
        if (strcmp(s.f[i].name, "plain") == 0)
            plain = &s.f[i];
        else if (strcmp(s.f[i].name, "pandas") == 0)
            pandas = &s.f[i];
        else
            tiny = &s.f[i];
    }
    cr_assert(plain && pandas && tiny);
    cr_assert_eq(pools_launch_parallel(plain, 2, false), 2);
    cr_assert_eq(pools_launch_parallel(pandas, 2, false), 1, "booting: one import at a time");
    cr_assert_eq(pools_launch_parallel(pandas, 16, false), 1, "whatever --create-parallel says");
    cr_assert_eq(pools_launch_parallel(pandas, 4, true), 2, "restored: as plain, up to its size");
    cr_assert_eq(pools_launch_parallel(plain, 16, false), 4, "never more than the flavour's size");
    cr_assert_eq(pools_launch_parallel(tiny, 4, true), 1);
}
