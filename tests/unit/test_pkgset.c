/* Unit tests of package sets: the check of a set image's manifest (hostile:
 * sizes, counts, names, types), what it provides beyond the language image's
 * listing, and --set / SANDGATE_SETS. The routing of jobs to a set that
 * installs their modules is in test_flavour.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_config.h"
#include "flavour.h"
#include "pkgset.h"

/* ---- the manifest ---- */

static const char *BASE =
    "{\"language\":\"python\",\"interpreter\":{\"version\":\"3.11\"},\"stdlib_modules\":[\"json\"],"
    "\"packages\":[{\"name\":\"numpy\",\"version\":\"1\",\"modules\":[\"numpy\"]}],"
    "\"system_packages\":[]}";

static const char *GOOD =
    "{\"set\":\"xl\",\"language\":\"python\",\"preimport\":[\"openpyxl\"],"
    "\"pool\":{\"size\":2,\"memory_mb\":80},\"declared_sha256\":\"ab\","
    "\"packages\":[{\"name\":\"openpyxl\",\"version\":\"3.1.2\",\"kind\":\"wheel\","
    "\"source\":\"openpyxl-3.1.2-py2.py3-none-any.whl sha256:00\",\"modules\":[\"openpyxl\"]},"
    "{\"name\":\"python3-numpy\",\"version\":\"1:1.24\",\"kind\":\"debian\","
    "\"source\":\"debian mirror (apt)\",\"modules\":[\"numpy\"]}]}";

static int parse(const char *json, const char *base, struct flavour *f, struct sg_error *e)
{
    json_t *doc = NULL;
    int r =
        pkgset_parse(json, strlen(json), "python", "sandgate/set-python-xl:t", base, f, &doc, e);
    if (r == 0) {
        cr_assert_str_eq(json_string_value(json_object_get(doc, "image")),
                         "sandgate/set-python-xl:t");
        json_decref(doc);
    } else {
        cr_assert_null(doc);
    }
    return r;
}

Test(pkgset_manifest, a_good_manifest_becomes_a_flavour)
{
    struct flavour f;
    struct sg_error e = {0};
    cr_assert_eq(parse(GOOD, BASE, &f, &e), 0, "%s", e.msg);
    cr_assert_str_eq(f.name, "xl");
    cr_assert_str_eq(f.image, "sandgate/set-python-xl:t");
    cr_assert_eq(f.n_modules, 1);
    cr_assert_str_eq(f.modules[0], "openpyxl");
    cr_assert_eq(f.size, 2);
    cr_assert(f.size_set);
    cr_assert_eq(f.mem_mb, 80);
    cr_assert_eq(f.n_provides, 1, "numpy is in the language image: not a requirement");
    cr_assert_str_eq(f.provides[0], "openpyxl");
    cr_assert_eq(parse(GOOD, NULL, &f, &e), 0, "%s", e.msg);
    cr_assert_eq(f.n_provides, 2, "without the image's listing every module counts");
}

/* GOOD with the first occurrence of from replaced by to. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(GOOD, from);
    cr_assert_not_null(at, "%s", from);
    size_t n = strlen(GOOD) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
    return out;
}

Test(pkgset_manifest, hostile_manifests_are_refused)
{
    static const char *const cases[][3] = {
        {"\"set\":\"xl\"", "\"set\":\"x l\"", "set: a name"},
        {"\"set\":\"xl\"", "\"set\":\"\"", "set: a name"},
        {"\"set\":\"xl\"", "\"set\":\"abcdefghijklmnopqrstuvwxyz0123456\"", "set: a name"},
        {"\"language\":\"python\"", "\"language\":\"nodejs\"", "this executor runs python"},
        {"\"preimport\":[\"openpyxl\"]", "\"preimport\":[\"a,b\"]", "preimport[0]"},
        {"\"preimport\":[\"openpyxl\"]", "\"preimport\":\"openpyxl\"", "preimport: an array"},
        {"\"size\":2", "\"size\":65", "pool.size"},
        {"\"size\":2", "\"size\":-1", "pool.size"},
        {"\"memory_mb\":80", "\"memory_mb\":65537", "pool.memory_mb"},
        {"\"memory_mb\":80", "\"memory_mb\":80,\"x\":1", "pool: an object"},
        {"\"declared_sha256\":\"ab\"", "\"declared_sha256\":7", "declared_sha256"},
        {"\"declared_sha256\":\"ab\"", "\"other\":\"ab\"", "unknown key 'other'"},
        {"\"version\":\"3.1.2\"", "\"version\":\"3.1\\n2\"", "packages[0].version"},
        {"\"version\":\"3.1.2\"", "\"version\":\"\"", "packages[0].version"},
        {"\"kind\":\"wheel\",", "", "packages[0]: an object"},
        {"\"modules\":[\"openpyxl\"]", "\"modules\":[\"open pyxl\"]", "packages[0].modules[0]"},
        {"\"modules\":[\"openpyxl\"]", "\"modules\":[1]", "packages[0].modules[0]"},
        {"\"set\":\"xl\"", "\"set\":\"xl\",\"set\":\"yl\"", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *m = edit(cases[i][0], cases[i][1]);
        struct flavour f;
        struct sg_error e = {0};
        cr_assert_eq(parse(m, BASE, &f, &e), -EPROTO, "case %zu accepted: %s", i, m);
        cr_assert(strstr(e.msg, cases[i][2]), "case %zu: %s", i, e.msg);
        cr_assert(strstr(e.msg, "sandgate/set-python-xl:t"), "names the image: %s", e.msg);
        free(m);
    }
}

Test(pkgset_manifest, counts_and_sizes_are_bounded)
{
    /* more packages than allowed */
    size_t cap = 64 + (PKGSET_PACKAGES_MAX + 1) * 80;
    char *big = malloc(cap);
    size_t n = (size_t)snprintf(big, cap,
                                "{\"set\":\"x\",\"language\":\"python\","
                                "\"preimport\":[],\"packages\":[");
    for (unsigned i = 0; i <= PKGSET_PACKAGES_MAX; i++)
        n += (size_t)snprintf(big + n, cap - n,
                              "%s{\"name\":\"p\",\"version\":\"1\",\"kind\":\"k\","
                              "\"source\":\"s\",\"modules\":[]}",
                              i ? "," : "");
    snprintf(big + n, cap - n, "]}");
    struct flavour f;
    struct sg_error e = {0};
    cr_assert_eq(parse(big, BASE, &f, &e), -EPROTO);
    cr_assert(strstr(e.msg, "at most"), "%s", e.msg);
    free(big);
    /* a file over the cap is refused before it is parsed */
    json_t *doc = NULL;
    cr_assert_eq(pkgset_parse(GOOD, PKGSET_MAX + 1, "python", "img", BASE, &f, &doc, &e), -EPROTO);
    cr_assert(strstr(e.msg, "larger than"), "%s", e.msg);
    /* more modules one set provides than a flavour holds */
    cap = 256 + (FLAVOUR_PROVIDES_MAX + 1) * 16;
    big = malloc(cap);
    n = (size_t)snprintf(big, cap,
                         "{\"set\":\"x\",\"language\":\"python\",\"preimport\":[],"
                         "\"packages\":[");
    for (unsigned p = 0; p < 2; p++) {
        n += (size_t)snprintf(big + n, cap - n,
                              "%s{\"name\":\"p\",\"version\":\"1\",\"kind\":\"k\","
                              "\"source\":\"s\",\"modules\":[",
                              p ? "," : "");
        for (unsigned i = 0; i < FLAVOUR_PROVIDES_MAX / 2 + 1; i++)
            n += (size_t)snprintf(big + n, cap - n, "%s\"m%u_%u\"", i ? "," : "", p, i);
        n += (size_t)snprintf(big + n, cap - n, "]}");
    }
    snprintf(big + n, cap - n, "]}");
    cr_assert_eq(parse(big, BASE, &f, &e), -EPROTO);
    cr_assert(strstr(e.msg, "more than"), "%s", e.msg);
    free(big);
}

/* ---- configuration ---- */

static int parse_cfg(int argc, char **argv, struct exec_config *c, struct sg_error *e)
{
    return exec_config_parse(argc, argv, c, e);
}

Test(pkgset_config, set_flags_and_environment)
{
    static struct exec_config c;
    struct sg_error e = {0};
    setenv("SANDGATE_SETS", "sandgate/set-python-a:t;sandgate/set-python-b:t", 1);
    char *argv[] = {(char[]){"x"},         (char[]){"--language"}, (char[]){"python"},
                    (char[]){"--seccomp"}, (char[]){"none"},       NULL};
    cr_assert_eq(parse_cfg(5, argv, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n_sets, 2);
    cr_assert_str_eq(c.sets[1], "sandgate/set-python-b:t");
    cr_assert_eq(c.flavours.n, 0, "with sets, no built-in defaults: the sets are the pools");
    char *argv2[] = {
        (char[]){"x"},    (char[]){"--language"}, (char[]){"python"}, (char[]){"--seccomp"},
        (char[]){"none"}, (char[]){"--set"},      (char[]){"img:1"},  NULL};
    cr_assert_eq(parse_cfg(7, argv2, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n_sets, 1, "a flag replaces the environment's list");
    cr_assert_str_eq(c.sets[0], "img:1");
    unsetenv("SANDGATE_SETS");
    char *bad[] = {
        (char[]){"x"},    (char[]){"--language"}, (char[]){"python"},    (char[]){"--seccomp"},
        (char[]){"none"}, (char[]){"--set"},      (char[]){"bad image"}, NULL};
    cr_assert_eq(parse_cfg(7, bad, &c, &e), -EINVAL);
    cr_assert(strstr(e.msg, "--set"), "%s", e.msg);
    char *none[] = {(char[]){"x"},         (char[]){"--language"}, (char[]){"python"},
                    (char[]){"--seccomp"}, (char[]){"none"},       NULL};
    cr_assert_eq(parse_cfg(5, none, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.n_sets, 0);
    cr_assert_eq(c.flavours.n, 4, "no sets: the built-in flavours");
}

Test(pkgset_config, too_many_sets)
{
    static struct exec_config c;
    struct sg_error e = {0};
    char list[FLAVOUR_MAX * 8 + 16] = "";
    for (unsigned i = 0; i <= FLAVOUR_MAX; i++) {
        char one[16];
        snprintf(one, sizeof(one), "i%u ", i);
        strcat(list, one);
    }
    setenv("SANDGATE_SETS", list, 1);
    char *argv[] = {(char[]){"x"},         (char[]){"--language"}, (char[]){"python"},
                    (char[]){"--seccomp"}, (char[]){"none"},       NULL};
    cr_assert_lt(parse_cfg(5, argv, &c, &e), 0);
    cr_assert(strstr(e.msg, "more than"), "%s", e.msg);
    unsetenv("SANDGATE_SETS");
}
