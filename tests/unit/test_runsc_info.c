/* Unit tests for runsc_info: `runsc --version` output and dockerd's /info are
 * outside input (shape, sizes); the minimum version is refused or, when the
 * operator accepts it, turned into a warning. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runsc_info.h"

static int parse(const char *text, char v[RUNSC_INFO_VERSION_MAX], unsigned *date)
{
    return runsc_info_parse_version(text, strlen(text), v, date);
}

Test(runsc_info, debian_and_upstream_versions)
{
    char v[RUNSC_INFO_VERSION_MAX];
    unsigned d;
    cr_assert_eq(parse("runsc version 0.0~20240729.0\nspec: 1.0.2-dev\n", v, &d), 0);
    cr_assert_str_eq(v, "0.0~20240729.0");
    cr_assert_eq(d, 20240729u);
    cr_assert_eq(parse("runsc version release-20221219.0\n", v, &d), 0);
    cr_assert_str_eq(v, "release-20221219.0");
    cr_assert_eq(d, 20221219u);
}

Test(runsc_info, malformed_versions_are_refused)
{
    char v[RUNSC_INFO_VERSION_MAX];
    unsigned d = 7;
    cr_assert_lt(parse("", v, &d), 0);
    cr_assert_lt(parse("runc version 1.1.5\n", v, &d), 0);
    cr_assert_lt(parse("runsc version \n", v, &d), 0);
    cr_assert_lt(parse("runsc version 0.0~2024072.0\n", v, &d), 0);   /* seven digits */
    cr_assert_lt(parse("runsc version 0.0~202407290.0\n", v, &d), 0); /* nine */
    cr_assert_eq(d, 0u);
    cr_assert_str_eq(v, "");
    char longv[200];
    snprintf(longv, sizeof(longv), "runsc version 20240729%0120d\n", 0);
    cr_assert_lt(parse(longv, v, &d), 0);
    /* a length that stops inside the prefix */
    cr_assert_lt(runsc_info_parse_version("runsc version 0.0~20240729.0", 5, v, &d), 0);
}

Test(runsc_info, registration_path_and_platform)
{
    char path[PATH_MAX], plat[RUNSC_INFO_PLATFORM_MAX];
    const char *info =
        "{\"Runtimes\":{\"runc\":{\"path\":\"runc\"},\"runsc\":{\"path\":\"/usr/bin/runsc\","
        "\"runtimeArgs\":[\"--network=none\",\"--platform=systrap\"]},\"old\":{\"path\":\"/o\","
        "\"runtimeArgs\":[\"--platform\",\"ptrace\"]},\"bare\":{\"path\":\"/b\"},"
        "\"bad\":{\"path\":\"/x\",\"runtimeArgs\":\"--platform=kvm\"}}}";
    size_t n = strlen(info);
    cr_assert_eq(runsc_info_parse_runtime(info, n, "runsc", path, plat), 0);
    cr_assert_str_eq(path, "/usr/bin/runsc");
    cr_assert_str_eq(plat, "systrap");
    cr_assert_eq(runsc_info_parse_runtime(info, n, "old", path, plat), 0);
    cr_assert_str_eq(plat, "ptrace");
    cr_assert_eq(runsc_info_parse_runtime(info, n, "bare", path, plat), 0);
    cr_assert_str_eq(plat, "default");
    cr_assert_eq(runsc_info_parse_runtime(info, n, "bad", path, plat), -EPROTO);
    cr_assert_eq(runsc_info_parse_runtime(info, n, "nope", path, plat), -ENOENT);
    cr_assert_eq(runsc_info_parse_runtime("[1]", 3, "runsc", path, plat), -EPROTO);
    cr_assert_eq(runsc_info_parse_runtime("{\"Runtimes\":", 12, "runsc", path, plat), -EPROTO);
}

Test(runsc_info, minimum_refused_unless_accepted)
{
    struct runsc_info ri = {.gvisor = true, .date = RUNSC_INFO_MIN_DATE - 1};
    snprintf(ri.version, sizeof(ri.version), "0.0~20221219.0");
    struct sg_error e = {0};
    cr_assert_eq(runsc_info_check(&ri, false, &e), -EPERM);
    cr_assert(strstr(e.msg, "older than the minimum 20240729"), "%s", e.msg);
    cr_assert_eq(runsc_info_check(&ri, true, &e), 0);
    cr_assert(strstr(ri.warning, "0.0~20221219.0 is older"), "%s", ri.warning);
    ri.date = RUNSC_INFO_MIN_DATE;
    cr_assert_eq(runsc_info_check(&ri, false, &e), 0);
    cr_assert_str_eq(ri.warning, "");
    ri.date = 0; /* unknown is refused too */
    cr_assert_eq(runsc_info_check(&ri, false, &e), -EPERM);
    cr_assert(strstr(e.msg, "unknown"), "%s", e.msg);
    ri.gvisor = false; /* --insecure-runtime: nothing to check */
    cr_assert_eq(runsc_info_check(&ri, false, &e), 0);
}

Test(runsc_info, read_version_of_a_missing_binary_fails)
{
    struct runsc_info ri = {0};
    struct sg_error e = {0};
    cr_assert_lt(runsc_info_read_version("/nonexistent/runsc", &ri, &e), 0);
    cr_assert_str_eq(ri.version, "");
}
