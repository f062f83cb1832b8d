#include "runtime_info.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sandbox.h"

#define TAR_BLOCK 512
#define RUNTIME_CALL_TIMEOUT_MS 15000L

/* An octal tar number field (NUL/space terminated); -1 when malformed. */
static long long tar_octal(const char *p, size_t n)
{
    long long v = 0;
    size_t i = 0;
    while (i < n && p[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++, digits++) {
        if (v > (1LL << 40))
            return -1;
        v = v * 8 + (p[i] - '0');
    }
    for (; i < n; i++)
        if (p[i] != ' ' && p[i] != '\0')
            return -1;
    return digits ? v : -1;
}

/* Find the first regular file; PAX/GNU extension entries are skipped. */
static int tar_first_file(const char *tar, size_t len, const char **ret, size_t *ret_len)
{
    size_t off = 0;
    for (int entries = 0; entries < 16 && off + TAR_BLOCK <= len; entries++) {
        const char *h = tar + off;
        if (h[0] == '\0')
            break; /* end-of-archive block */
        long long size = tar_octal(h + 124, 12);
        if (size < 0 || (unsigned long long)size > len - off - TAR_BLOCK)
            return -EPROTO;
        char type = h[156];
        if (type == '0' || type == '\0') {
            *ret = h + TAR_BLOCK;
            *ret_len = (size_t)size;
            return 0;
        }
        off += TAR_BLOCK + (((size_t)size + TAR_BLOCK - 1) / TAR_BLOCK) * TAR_BLOCK;
    }
    return -ENOENT;
}

static int check_list(json_t *doc, const char *key, int want_version, struct sg_error *err)
{
    json_t *arr = json_object_get(doc, key);
    if (!json_is_array(arr) || json_array_size(arr) > RUNTIME_INFO_PACKAGES_MAX)
        return sg_error_set(err, -EPROTO, "runtime listing: %s: expected an array", key);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        int ok = want_version ? json_is_string(json_object_get(v, "name")) &&
                                    json_is_string(json_object_get(v, "version"))
                              : json_is_string(v);
        if (!ok)
            return sg_error_set(err, -EPROTO, "runtime listing: %s[%zu] is malformed", key, i);
    }
    return 0;
}

int runtime_info_from_tar(const char *tar, size_t len, const char *language, char **ret_json,
                          struct sg_error *err)
{
    const char *data = NULL;
    size_t n = 0;
    int r = tar_first_file(tar, len, &data, &n);
    if (r < 0)
        return sg_error_set(err, r, "runtime listing: %s",
                            r == -ENOENT ? "no file in the archive" : "malformed tar stream");
    if (n > RUNTIME_INFO_MAX)
        return sg_error_set(err, -E2BIG, "runtime listing larger than %u bytes", RUNTIME_INFO_MAX);
    json_error_t jerr;
    json_t *doc = json_loadb(data, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return sg_error_set(err, -EPROTO, "runtime listing: not a JSON object (%s)", jerr.text);
    }
    const char *lang = json_string_value(json_object_get(doc, "language"));
    json_t *interp = json_object_get(doc, "interpreter");
    if (!lang || strcmp(lang, language) != 0)
        r = sg_error_set(err, -EPROTO, "runtime listing is for '%s', not %s", lang ? lang : "?",
                         language);
    else if (!json_is_string(json_object_get(interp, "version")))
        r = sg_error_set(err, -EPROTO, "runtime listing: no interpreter.version");
    else if ((r = check_list(doc, "stdlib_modules", 0, err)) == 0 &&
             (r = check_list(doc, "packages", 1, err)) == 0)
        r = check_list(doc, "system_packages", 1, err);
    if (r == 0) {
        *ret_json = json_dumps(doc, JSON_COMPACT);
        r = *ret_json ? 0 : sg_error_set(err, -ENOMEM, "out of memory");
    }
    json_decref(doc);
    return r;
}

int runtime_info_read(struct docker_client *dc, const struct exec_config *cfg, char **ret_json,
                      struct sg_error *err)
{
    static const char *const never_run[] = {"/bin/false", NULL};
    char *body = NULL, id[DOCKER_ID_LEN + 1] = "";
    int r = sandbox_create_body(cfg, NULL, never_run, &body, err);
    if (r == 0)
        r = docker_create(dc, body, id, err);
    free(body);
    if (r < 0)
        return r;
    char path[128 + DOCKER_ID_LEN];
    snprintf(path, sizeof(path), "/containers/%s/archive?path=%s", id, RUNTIME_INFO_PATH);
    struct sg_buf b;
    sg_buf_init(&b, RUNTIME_INFO_MAX + 16 * TAR_BLOCK);
    long status = 0;
    r = docker_call(dc, "GET", path, NULL, RUNTIME_CALL_TIMEOUT_MS,
                    RUNTIME_INFO_MAX + 16 * TAR_BLOCK, &status, &b, err);
    if (r == 0 && status == 404)
        r = sg_error_set(err, -ENOENT, "image %s has no %s", cfg->image, RUNTIME_INFO_PATH);
    else if (r == 0 && status != 200)
        r = sg_error_set(err, -EIO, "docker archive %s: HTTP %ld", RUNTIME_INFO_PATH, status);
    else if (r == 0)
        r = runtime_info_from_tar(b.data, b.len, sg_lang_name(cfg->language), ret_json, err);
    sg_buf_free(&b);
    struct sg_error rm_err = {0};
    docker_remove(dc, id, SANDBOX_REMOVE_TIMEOUT_MS, &rm_err);
    return r;
}
