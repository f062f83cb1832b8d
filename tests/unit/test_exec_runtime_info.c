/* Unit tests for the executor's runtime listing: the tar stream dockerd's
 * archive endpoint returns is untrusted input (sizes, types, JSON shape). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_info.h"

#define OK_DOC                                                                                     \
    "{\"language\":\"python\",\"interpreter\":{\"name\":\"CPython\",\"version\":"                  \
    "\"3.11.2\"},\"stdlib_modules\":[\"json\",\"re\"],\"packages\":[{\"name\":"                    \
    "\"numpy\",\"version\":\"1.24.2\",\"modules\":[\"numpy\"]}],"                                  \
    "\"system_packages\":[{\"name\":\"python3\",\"version\":\"3.11.2-1\"}]}"

/* Append one tar entry (header + padded data) at *off. */
static void entry(char *tar, size_t *off, char type, const char *data, const char *size_field)
{
    char *h = tar + *off;
    memset(h, 0, 512);
    snprintf(h, 100, "runtime.json");
    char sz[13];
    if (size_field)
        memcpy(h + 124, size_field, strlen(size_field));
    else {
        snprintf(sz, sizeof(sz), "%011o", (unsigned)strlen(data));
        memcpy(h + 124, sz, 12);
    }
    h[156] = type;
    size_t n = strlen(data);
    memcpy(h + 512, data, n);
    *off += 512 + ((n + 511) / 512) * 512;
}

static char *tar_of(const char *doc, size_t *ret_len)
{
    char *tar = calloc(1, 64 * 1024);
    size_t off = 0;
    entry(tar, &off, 'x', "30 path=opt/sandgate/runtime.json\n", NULL);
    entry(tar, &off, '0', doc, NULL);
    *ret_len = off + 1024; /* two zero blocks end the archive */
    return tar;
}

Test(runtime_info, parses_the_first_regular_file_after_pax_headers)
{
    size_t len;
    char *tar = tar_of(OK_DOC, &len);
    char *json = NULL;
    struct sg_error err = {0};
    cr_assert_eq(runtime_info_from_tar(tar, len, "python", &json, &err), 0, "%s", err.msg);
    cr_assert(strstr(json, "\"version\":\"3.11.2\""));
    cr_assert(strstr(json, "numpy"));
    free(json);
    err = (struct sg_error){0};
    cr_assert_lt(runtime_info_from_tar(tar, len, "nodejs", &json, &err), 0);
    cr_assert(strstr(err.msg, "is for 'python', not nodejs"), "%s", err.msg);
    free(tar);
}

Test(runtime_info, refuses_malformed_streams_and_documents)
{
    static const struct {
        const char *doc, *needle;
    } docs[] = {
        {"not json", "not a JSON object"},
        {"[1]", "not a JSON object"},
        {"{\"language\":\"python\"}", "interpreter.version"},
        {"{\"language\":\"python\",\"interpreter\":{\"version\":\"3\"},\"stdlib_modules\":[1],"
         "\"packages\":[],\"system_packages\":[]}",
         "stdlib_modules[0]"},
        {"{\"language\":\"python\",\"interpreter\":{\"version\":\"3\"},\"stdlib_modules\":[],"
         "\"packages\":[{\"name\":\"x\"}],\"system_packages\":[]}",
         "packages[0]"},
        {"{\"language\":\"python\",\"interpreter\":{\"version\":\"3\"},\"stdlib_modules\":[],"
         "\"packages\":[]}",
         "system_packages"},
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        size_t len;
        char *tar = tar_of(docs[i].doc, &len);
        char *json = NULL;
        struct sg_error err = {0};
        cr_assert_lt(runtime_info_from_tar(tar, len, "python", &json, &err), 0, "doc %zu", i);
        cr_assert(strstr(err.msg, docs[i].needle), "doc %zu: '%s' lacks '%s'", i, err.msg,
                  docs[i].needle);
        free(tar);
    }
    char tar[4096] = {0};
    size_t off = 0;
    struct sg_error err = {0};
    char *json = NULL;
    entry(tar, &off, '0', "{}", "77777777777");
    cr_assert_lt(runtime_info_from_tar(tar, sizeof(tar), "python", &json, &err), 0);
    cr_assert(strstr(err.msg, "malformed tar"), "size past the end: %s", err.msg);
    off = 0;
    entry(tar, &off, '0', "{}", "12x");
    cr_assert_lt(runtime_info_from_tar(tar, sizeof(tar), "python", &json, &err), 0);
    cr_assert(strstr(err.msg, "malformed tar"), "non-octal size: %s", err.msg);
    off = 0;
    entry(tar, &off, '5', "", NULL); /* a directory only */
    memset(tar + off, 0, 1024);
    cr_assert_lt(runtime_info_from_tar(tar, off + 1024, "python", &json, &err), 0);
    cr_assert(strstr(err.msg, "no file"), "%s", err.msg);
    cr_assert_lt(runtime_info_from_tar(tar, 100, "python", &json, &err), 0, "short stream");
}
