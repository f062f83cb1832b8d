#include "sessions_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"
#include "readfile.h"
#include "sessions_int.h"
#include "sg_random.h"

#define BOOT_FILE "boot_id"
#define HEX "0123456789abcdef"

static int path_of(char *out, size_t cap, const char *dir, const char *id, const char *ext)
{
    int n = snprintf(out, cap, "%s/%s%s", dir, id, ext);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Write data to path through a temporary file and a rename: a reader sees
 * the old file or the new one, never a part. */
static int write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[1200];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int r = 0;
    for (size_t off = 0; off < len && r == 0;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno != EINTR)
            r = -errno;
        else if (w > 0)
            off += (size_t)w;
    }
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        unlink(tmp);
    return r;
}

static bool hex_ok(const char *s, size_t n)
{
    return strlen(s) == n && strspn(s, HEX) == n;
}

int sstore_boot_id(const char *dir, char out[SESSIONS_BOOT_HEX + 1], bool *ret_kept,
                   struct sg_error *err)
{
    char path[1100], *text = NULL;
    size_t len = 0;
    *ret_kept = false;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return sg_error_set(err, -errno, "cannot create the session directory %s: %s", dir,
                            strerror(errno));
    if (path_of(path, sizeof(path), dir, BOOT_FILE, "") < 0)
        return sg_error_set(err, -ENAMETOOLONG, "session directory path too long");
    if (sg_read_file_capped(path, 64, &text, &len, NULL) == 0 && len >= SESSIONS_BOOT_HEX) {
        text[SESSIONS_BOOT_HEX] = '\0';
        if (hex_ok(text, SESSIONS_BOOT_HEX)) {
            memcpy(out, text, SESSIONS_BOOT_HEX + 1);
            *ret_kept = true;
        }
    }
    free(text);
    if (*ret_kept)
        return 0;
    if (sg_random_hex(out, SESSIONS_BOOT_HEX / 2) < 0)
        return sg_error_set(err, -EIO, "no random bytes for the boot id");
    int r = write_atomic(path, out, SESSIONS_BOOT_HEX);
    if (r < 0)
        return sg_error_set(err, r, "cannot write %s: %s", path, strerror(-r));
    return 0;
}

int sstore_save(const char *dir, const struct session *x, const char *flavour, bool busy)
{
    char path[1100];
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "id",
                          x->id, "tenant", x->tenant, "key", x->key, "container", x->sb.id,
                          "flavour", flavour, "label", x->label, "created",
                          (json_int_t)x->created_wall, "used", (json_int_t)x->used_wall, "idle_s",
                          (json_int_t)x->idle_s, "life_s", (json_int_t)x->life_s, "timeout_ms",
                          (json_int_t)x->timeout_ms, "cells", (json_int_t)x->cells, "memory_kb",
                          (json_int_t)x->memory_kb, "max_output", (json_int_t)x->max_output,
                          "history_len", (json_int_t)x->history.len, "busy", busy);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int r = !text ? -ENOMEM : path_of(path, sizeof(path), dir, x->id, ".json");
    if (r == 0)
        r = write_atomic(path, text, strlen(text));
    free(text);
    if (r < 0)
        sg_log(SG_LOG_WARN, "session_record_failed", "session_id=%s error=\"%s\"", x->id,
               strerror(-r));
    return r;
}

int sstore_append_history(const char *dir, const char *id, const char *data, size_t len)
{
    char path[1100];
    int r = path_of(path, sizeof(path), dir, id, ".hist");
    int fd = r < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (r == 0 && fd < 0)
        r = -errno;
    for (size_t off = 0; fd >= 0 && off < len && r == 0;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno != EINTR)
            r = -errno;
        else if (w > 0)
            off += (size_t)w;
    }
    if (fd >= 0)
        close(fd);
    if (r < 0)
        sg_log(SG_LOG_WARN, "session_record_failed", "session_id=%s error=\"%s\"", id,
               strerror(-r));
    return r;
}

void sstore_remove(const char *dir, const char *id)
{
    char path[1100];
    if (path_of(path, sizeof(path), dir, id, ".json") == 0)
        unlink(path);
    if (path_of(path, sizeof(path), dir, id, ".hist") == 0)
        unlink(path);
}

/* ------------------------------------------------------------ reading */

static int str_field(json_t *j, const char *key, char *out, size_t cap, bool may_be_empty)
{
    const char *v = json_string_value(json_object_get(j, key));
    size_t n = v ? strlen(v) : 0;
    if (!v || n >= cap || (!may_be_empty && n == 0))
        return -EINVAL;
    memcpy(out, v, n + 1);
    return 0;
}

static int int_field(json_t *j, const char *key, long long lo, long long hi, long long *ret)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -EINVAL;
    *ret = json_integer_value(v);
    return 0;
}

/* The record's fields, each checked (a record is our own file, but it is
 * read back across a crash and must not be trusted further than that). */
static int parse_record(json_t *j, struct sstore_record *r)
{
    long long v[10];
    if (str_field(j, "id", r->id, sizeof(r->id), false) < 0 ||
        str_field(j, "tenant", r->tenant, sizeof(r->tenant), false) < 0 ||
        str_field(j, "key", r->key, sizeof(r->key), false) < 0 ||
        str_field(j, "container", r->container, sizeof(r->container), false) < 0 ||
        str_field(j, "flavour", r->flavour, sizeof(r->flavour), false) < 0 ||
        str_field(j, "label", r->label, sizeof(r->label), true) < 0 ||
        int_field(j, "created", 0, 1LL << 40, &v[0]) < 0 ||
        int_field(j, "used", 0, 1LL << 40, &v[1]) < 0 ||
        int_field(j, "idle_s", 1, SESSIONS_IDLE_MAX_S, &v[2]) < 0 ||
        int_field(j, "life_s", 1, SESSIONS_LIFE_MAX_S, &v[3]) < 0 ||
        int_field(j, "timeout_ms", 1, 1LL << 31, &v[4]) < 0 ||
        int_field(j, "cells", 0, 1LL << 40, &v[5]) < 0 ||
        int_field(j, "memory_kb", -1, 1LL << 40, &v[6]) < 0 ||
        int_field(j, "max_output", 1, 1LL << 40, &v[7]) < 0 ||
        int_field(j, "history_len", 0, SESSIONS_HISTORY_MAX, &v[8]) < 0 ||
        !json_is_boolean(json_object_get(j, "busy")))
        return -EINVAL;
    if (strlen(r->id) != SESSIONS_ID_LEN || !hex_ok(r->key, SESSIONS_KEY_HEX) ||
        !hex_ok(r->container, DOCKER_ID_LEN) || !sess_tenant_ok(r->tenant) ||
        (r->label[0] && !sess_tenant_ok(r->label)))
        return -EINVAL;
    r->created = (time_t)v[0];
    r->used = (time_t)v[1];
    r->idle_s = (unsigned)v[2];
    r->life_s = (unsigned)v[3];
    r->timeout_ms = (unsigned)v[4];
    r->cells = (unsigned long)v[5];
    r->memory_kb = v[6];
    r->max_output = (size_t)v[7];
    r->history_len = (size_t)v[8];
    r->busy = json_is_true(json_object_get(j, "busy"));
    return 0;
}

/* The first history_len bytes of the history file: more is a cell whose
 * record was not written (the record said busy), less is a broken file. */
static int read_history(const char *dir, struct sstore_record *r)
{
    char path[1100];
    size_t len = 0;
    if (path_of(path, sizeof(path), dir, r->id, ".hist") < 0)
        return -ENAMETOOLONG;
    if (r->history_len == 0)
        return 0;
    int rc = sg_read_file_capped(path, SESSIONS_HISTORY_MAX + SESSIONS_HISTORY_MAX, &r->history,
                                 &len, NULL);
    if (rc < 0 || len < r->history_len)
        return -EINVAL;
    return 0;
}

static int load_one(const char *dir, const char *name, struct sstore_record *r)
{
    char path[1100], *text = NULL;
    size_t len = 0;
    memset(r, 0, sizeof(*r));
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        sg_read_file_capped(path, SSTORE_RECORD_MAX, &text, &len, NULL) < 0)
        return -EINVAL;
    json_t *j = json_loadb(text, len, 0, NULL);
    free(text);
    int rc = j ? parse_record(j, r) : -EINVAL;
    json_decref(j);
    /* the file's name is the id it holds, or it is not ours */
    if (rc == 0 && (strlen(name) != SESSIONS_ID_LEN + 5 || strncmp(name, r->id, SESSIONS_ID_LEN)))
        rc = -EINVAL;
    if (rc == 0)
        rc = read_history(dir, r);
    return rc;
}

static bool is_record_name(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

int sstore_load(const char *dir, struct sstore_record **ret, size_t *ret_n, struct sg_error *err)
{
    *ret = NULL;
    *ret_n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : sg_error_set(err, -errno, "cannot read %s", dir);
    struct sstore_record *recs = calloc(SSTORE_RECORDS_MAX, sizeof(*recs));
    if (!recs) {
        closedir(d);
        return sg_error_set(err, -ENOMEM, "out of memory");
    }
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0)
            unlinkat(dirfd(d), e->d_name, 0); /* a write a crash cut short */
        if (!is_record_name(e->d_name))
            continue;
        char id[SESSIONS_ID_LEN + 1];
        snprintf(id, sizeof(id), "%s", e->d_name);
        if (n < SSTORE_RECORDS_MAX && load_one(dir, e->d_name, &recs[n]) == 0) {
            n++;
            continue;
        }
        free(recs[n].history);
        memset(&recs[n], 0, sizeof(recs[n]));
        sg_log(SG_LOG_WARN, "session_record_invalid", "file=%s", e->d_name);
        char path[1100];
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
            unlink(path);
        if (strlen(e->d_name) == SESSIONS_ID_LEN + 5)
            sstore_remove(dir, id);
    }
    closedir(d);
    *ret = recs;
    *ret_n = n;
    return 0;
}

void sstore_records_free(struct sstore_record *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++)
        free(r[i].history);
    free(r);
}
