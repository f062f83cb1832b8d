/* runtime_info.h - what the sandbox image offers a job: its interpreter,
 * packages and versions, read from the image itself at executor start.
 *
 * Each sandgate image generates /opt/sandgate/runtime.json at build time from
 * what is installed (images/python/list_runtime.py,
 * images/nodejs/list_runtime.js). The executor creates one container from
 * its image, never starts it, copies that file out through the Engine API's
 * archive endpoint (a tar stream), validates it and removes the container;
 * GET /v1/runtime serves it. An image without the file (a custom
 * SANDGATE_IMAGE) leaves the listing unknown: logged, and /v1/runtime
 * answers 404, while jobs run as before.
 */
#ifndef SG_EXEC_RUNTIME_INFO_H
#define SG_EXEC_RUNTIME_INFO_H

#include <stddef.h>

#include "exec_config.h"
#include "docker.h"
#include "sg_error.h"

#define RUNTIME_INFO_PATH "/opt/sandgate/runtime.json"
#define RUNTIME_INFO_MAX (1024u * 1024u) /* the file itself */
#define RUNTIME_INFO_PACKAGES_MAX 10000u /* entries in one list */

/* The first regular file of a tar stream (untrusted: dockerd's reply),
 * parsed and checked as a runtime listing for language ("python" or
 * "nodejs"). On success *ret_json is the compact JSON text; caller frees with
 * free(). */
int runtime_info_from_tar(const char *tar, size_t len, const char *language, char **ret_json,
                          struct sg_error *err);

/* Create a container from image (NULL: cfg's; never started), copy the
 * regular file path (at most max bytes) out of it, remove the container.
 * *ret is that file's bytes, NUL-terminated (caller frees with free()), or
 * -ENOENT when the image has no such file. */
int runtime_info_copy(struct docker_client *dc, const struct exec_config *cfg, const char *image,
                      const char *path, size_t max, char **ret, size_t *ret_len,
                      struct sg_error *err);

/* Create a container from cfg's image (never started), copy the listing out,
 * remove the container. -ENOENT when the image has no listing. */
int runtime_info_read(struct docker_client *dc, const struct exec_config *cfg, char **ret_json,
                      struct sg_error *err);

#endif
