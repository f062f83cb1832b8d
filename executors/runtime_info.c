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

/* The first regular file of an archive as a NUL-terminated copy. */
static int tar_file_copy(const char *tar, size_t len, size_t max, char **ret, size_t *ret_len,
                         struct sg_error *err)
{
    const char *data = NULL;
    size_t n = 0;
    int r = tar_first_file(tar, len, &data, &n);
    if (r < 0)
        return sg_error_set(err, r, "%s",
                            r == -ENOENT ? "no file in the archive" : "malformed tar stream");
    if (n > max)
        return sg_error_set(err, -E2BIG, "file larger than %zu bytes", max);
    *ret = malloc(n + 1);
    if (!*ret)
        return sg_error_set(err, -ENOMEM, "out of memory");
    memcpy(*ret, data, n);
    (*ret)[n] = '\0';
    *ret_len = n;
    return 0;
}

static int listing_check(const char *data, size_t n, const char *language, char **ret_json,
                         struct sg_error *err)
{
    int r = 0;
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

int runtime_info_from_tar(const char *tar, size_t len, const char *language, char **ret_json,
                          struct sg_error *err)
{
    char *data = NULL;
    size_t n = 0;
    struct sg_error e = {0};
    int r = tar_file_copy(tar, len, RUNTIME_INFO_MAX, &data, &n, &e);
    if (r < 0)
        return sg_error_set(err, r, "runtime listing: %s", e.msg);
    r = listing_check(data, n, language, ret_json, err);
    free(data);
    return r;
}

/* cfg's create body, with image instead of cfg's when given. */
static int never_run_body(const struct exec_config *cfg, const char *image, char **ret,
                          struct sg_error *err)
{
    static const char *const never_run[] = {"/bin/false", NULL};
    int r = sandbox_create_body(cfg, NULL, never_run, ret, err);
    if (r < 0 || !image)
        return r;
    json_t *spec = json_loads(*ret, 0, NULL);
    free(*ret);
    *ret = NULL;
    if (spec && json_object_set_new(spec, "Image", json_string(image)) == 0)
        *ret = json_dumps(spec, JSON_COMPACT);
    json_decref(spec);
    return *ret ? 0 : sg_error_set(err, -ENOMEM, "cannot build container spec");
}

int runtime_info_copy(struct docker_client *dc, const struct exec_config *cfg, const char *image,
                      const char *path, size_t max, char **ret, size_t *ret_len,
                      struct sg_error *err)
{
    char *body = NULL, id[DOCKER_ID_LEN + 1] = "";
    const char *img = image ? image : cfg->image;
    int r = never_run_body(cfg, image, &body, err);
    if (r == 0)
        r = docker_create(dc, body, id, err);
    free(body);
    if (r < 0)
        return r;
    char url[256 + DOCKER_ID_LEN];
    snprintf(url, sizeof(url), "/containers/%s/archive?path=%s", id, path);
    struct sg_buf b;
    sg_buf_init(&b, max + 16 * TAR_BLOCK);
    long status = 0;
    struct sg_error e = {0};
    r = docker_call(dc, "GET", url, NULL, RUNTIME_CALL_TIMEOUT_MS, max + 16 * TAR_BLOCK, &status,
                    &b, err);
    if (r == 0 && status == 404)
        r = sg_error_set(err, -ENOENT, "image %s has no %s", img, path);
    else if (r == 0 && status != 200)
        r = sg_error_set(err, -EIO, "docker archive %s of %s: HTTP %ld", path, img, status);
    else if (r == 0 && (r = tar_file_copy(b.data, b.len, max, ret, ret_len, &e)) < 0)
        r = sg_error_set(err, r, "%s of image %s: %s", path, img, e.msg);
    sg_buf_free(&b);
    struct sg_error rm_err = {0};
    docker_remove(dc, id, SANDBOX_REMOVE_TIMEOUT_MS, &rm_err);
    return r;
}

int runtime_info_read(struct docker_client *dc, const struct exec_config *cfg, char **ret_json,
                      struct sg_error *err)
{
    char *data = NULL;
    size_t n = 0;
    int r = runtime_info_copy(dc, cfg, NULL, RUNTIME_INFO_PATH, RUNTIME_INFO_MAX, &data, &n, err);
    if (r == 0)
        r = listing_check(data, n, sg_lang_name(cfg->language), ret_json, err);
    free(data);
    return r;
}
