#include "runner_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "b64.h"
#include "runner_watch.h"
#include "sg_file_name.h"

#define MIB (1024u * 1024u)
#define GIB (1024u * MIB)

static size_t env_size(const char *name, size_t dflt, size_t low, size_t high)
{
    const char *raw = getenv(name);
    size_t value = dflt;
    if (raw && *raw) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(raw, &end, 10);
        if (errno == 0 && end && *end == '\0')
            value = v < 0 ? 0 : (size_t)v;
    }
    return value < low ? low : value > high ? high : value;
}

void runner_cfg_from_env(struct runner_cfg *ret_cfg)
{
    const char *pre = getenv("SANDGATE_PREIMPORT");
    *ret_cfg = (struct runner_cfg){
        .workspace = "/workspace",
        .main_file = "main.js",
        .preimport = pre ? pre : "",
        .max_job = env_size("SANDGATE_MAX_JOB_BYTES", 48 * MIB, 1024, GIB),
        .max_files = env_size("SANDGATE_MAX_INPUT_FILES", 64, 0, 4096),
        .max_files_bytes = env_size("SANDGATE_MAX_INPUT_BYTES", 16 * MIB, 0, GIB),
        .art_files = env_size("SANDGATE_ARTIFACT_MAX_FILES", 10, 0, 1000),
        .art_bytes = env_size("SANDGATE_ARTIFACT_MAX_BYTES", 10 * MIB, 0, GIB),
        .art_total = env_size("SANDGATE_ARTIFACT_MAX_TOTAL", 20 * MIB, 0, GIB),
    };
}

int runner_nonce_ok(const char *s, size_t len)
{
    if (len < RUNNER_NONCE_MIN || len > RUNNER_NONCE_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* The rule every layer checks (sg_file_name.h), plus the runner's own names. */
int runner_name_ok(const char *name, size_t len, const char *main_file)
{
    if (!sg_file_name_ok(name, len))
        return 0;
    return strcmp(name, main_file) != 0 && strcmp(name, RUNNER_ARTIFACT_DIR) != 0;
}

/* Limit `key` of limits: absent or null -> dflt; else a positive integer,
 * clamped to high. */
static int int_limit(json_t *limits, const char *key, size_t dflt, size_t high, size_t *ret,
                     struct sg_error *err)
{
    json_t *v = json_object_get(limits, key);
    if (!v || json_is_null(v)) {
        *ret = dflt;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return sg_error_set(err, -EINVAL, "limits.%s must be a positive integer", key);
    json_int_t n = json_integer_value(v);
    *ret = (uintmax_t)n > high ? high : (size_t)n;
    return 0;
}

static int decode_files(const struct runner_cfg *cfg, json_t *files, struct runner_job *job,
                        struct sg_error *err)
{
    if (!files || json_is_null(files))
        return 0;
    if (!json_is_object(files))
        return sg_error_set(err, -EINVAL, "'files' must be an object of name -> base64");
    size_t n = json_object_size(files);
    if (n > cfg->max_files)
        return sg_error_set(err, -EINVAL, "too many input files (%zu > %zu)", n, cfg->max_files);
    job->files = calloc(n ? n : 1, sizeof(*job->files));
    if (!job->files)
        return -ENOMEM;
    size_t total = 0;
    const char *name;
    json_t *b64;
    json_object_foreach(files, name, b64)
    {
        if (!runner_name_ok(name, strlen(name), cfg->main_file))
            return sg_error_set(err, -EINVAL,
                                "refused file name \"%.300s\": " SG_FILE_NAME_RULE
                                ", not a name reserved by the runner",
                                name);
        if (!json_is_string(b64))
            return sg_error_set(err, -EINVAL, "file \"%s\": content must be a base64 string", name);
        struct runner_file *f = &job->files[job->n_files];
        struct sg_error e = {0};
        int r = sg_b64_decode(json_string_value(b64), json_string_length(b64),
                              cfg->max_files_bytes - total, &f->data, &f->len, &e);
        if (r == -E2BIG || (r == 0 && f->len > cfg->max_files_bytes - total))
            return sg_error_set(err, -EINVAL, "input files larger than %zu bytes in total",
                                cfg->max_files_bytes);
        if (r < 0)
            return r == -ENOMEM ? r
                                : sg_error_set(err, -EINVAL,
                                               "file \"%s\": content is not valid base64", name);
        job->n_files++;
        total += f->len;
        if (!(f->name = strdup(name)))
            return -ENOMEM;
    }
    return 0;
}

static int take_nonce(json_t *root, struct runner_job *job, struct sg_error *err)
{
    json_t *nonce = json_object_get(root, "nonce");
    if (!nonce || json_is_null(nonce))
        return 0;
    if (!json_is_string(nonce) ||
        !runner_nonce_ok(json_string_value(nonce), json_string_length(nonce)))
        return sg_error_set(err, -EINVAL, "'nonce' must be 16-128 characters [A-Za-z0-9]");
    memcpy(job->nonce, json_string_value(nonce), json_string_length(nonce) + 1);
    return 0;
}

/* "mode": "main" (default) or "script" (run main.js as the program itself,
 * no main() call; executors/PROTOCOL.md). */
static int parse_mode(json_t *root, int *ret_script, struct sg_error *err)
{
    json_t *mode = json_object_get(root, "mode");
    const char *m = json_string_value(mode);
    if (mode && !json_is_null(mode) && (!m || (strcmp(m, "main") && strcmp(m, "script"))))
        return sg_error_set(err, -EINVAL, "'mode' must be \"main\" or \"script\"");
    *ret_script = m && strcmp(m, "script") == 0;
    return 0;
}

static int parse_fields(json_t *root, struct runner_job *job, struct sg_error *err)
{
    json_t *code = json_object_get(root, "code");
    if (!json_is_string(code))
        return sg_error_set(err, -EINVAL, "'code' must be a string");
    json_t *args = json_object_get(root, "arguments");
    if (args && !json_is_null(args) && !json_is_object(args))
        return sg_error_set(err, -EINVAL, "'arguments' must be an object");
    json_t *runtime = json_object_get(root, "runtime");
    if (runtime && !json_is_null(runtime) && !json_is_object(runtime))
        return sg_error_set(err, -EINVAL, "'runtime' must be an object");
    json_t *limits = json_object_get(root, "limits");
    if (limits && !json_is_null(limits) && !json_is_object(limits))
        return sg_error_set(err, -EINVAL, "'limits' must be an object");
    json_t *stream = json_object_get(root, "stream");
    if (stream && !json_is_boolean(stream))
        return sg_error_set(err, -EINVAL, "'stream' must be a boolean");
    job->stream = json_is_true(stream);
    job->sigsys_type = runner_sigsys_type(json_is_object(runtime) ? runtime : NULL);
    int script = 0;
    if (parse_mode(root, &script, err) < 0)
        return -EINVAL;
    size_t timeout_ms = 0;
    int r = int_limit(limits, "timeout_ms", RUNNER_DEFAULT_TIMEOUT_MS, RUNNER_MAX_TIMEOUT_MS,
                      &timeout_ms, err);
    if (r == 0)
        r = int_limit(limits, "max_output_bytes", RUNNER_DEFAULT_MAX_OUTPUT, RUNNER_MAX_MAX_OUTPUT,
                      &job->max_output, err);
    if (r < 0)
        return r;
    job->timeout_ms = (unsigned)timeout_ms;
    job->code_len = json_string_length(code);
    job->code = malloc(job->code_len + 1);
    json_t *payload = json_pack(
        "{s:o,s:o}", "arguments", args && json_is_object(args) ? json_incref(args) : json_object(),
        "runtime", runtime && json_is_object(runtime) ? json_incref(runtime) : json_null());
    if (payload && script)
        json_object_set_new(payload, "mode", json_string("script"));
    job->payload_json = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
    json_decref(payload);
    if (!job->code || !job->payload_json)
        return -ENOMEM;
    memcpy(job->code, json_string_value(code), job->code_len + 1);
    return 0;
}

int runner_job_parse(const struct runner_cfg *cfg, const char *line, size_t len,
                     struct runner_job *ret_job, struct sg_error *err)
{
    memset(ret_job, 0, sizeof(*ret_job));
    json_error_t je;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return sg_error_set(err, -EINVAL, "job is not valid JSON: %s", je.text);
    int r;
    if (!json_is_object(root)) {
        r = sg_error_set(err, -EINVAL, "job must be a JSON object");
        goto out;
    }
    r = take_nonce(root, ret_job, err);
    if (r == 0)
        r = parse_fields(root, ret_job, err);
    if (r == 0)
        r = decode_files(cfg, json_object_get(root, "files"), ret_job, err);
out:
    json_decref(root);
    return r;
}

const char *runner_sigsys_type(json_t *runtime)
{
    if (!runtime)
        return NULL;
    int processes = json_is_true(json_object_get(runtime, "processes"));
    int network = json_is_true(json_object_get(runtime, "network"));
    /* A networked job's refused sockets are EPERM, never a kill; offline with
     * processes refused too, the kernel does not say which of the two it was. */
    if (!processes)
        return network ? "process" : "process_or_network";
    return network ? NULL : "network";
}

int runner_as_job(const struct runner_cfg *cfg, int as_job)
{
    if (!cfg->split)
        return 0;
    /* gid while the uid still allows it; the uid back first (saved uid 0) */
    if (as_job) {
        if (setresgid((gid_t)-1, RUNNER_JOB_GID, (gid_t)-1) < 0 ||
            setresuid((uid_t)-1, RUNNER_JOB_UID, (uid_t)-1) < 0)
            return -errno;
        return 0;
    }
    if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0 || setresgid((gid_t)-1, 0, (gid_t)-1) < 0)
        return -errno;
    return 0;
}

static int write_new(int dirfd, const char *name, const void *data, size_t len)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    const char *p = data;
    int r = 0;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            break;
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return r;
}

static int job_write(const struct runner_cfg *cfg, const struct runner_job *job,
                     struct sg_error *err)
{
    const char *workspace = cfg->workspace, *main_file = cfg->main_file;
    int dirfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0)
        return sg_error_set(err, -errno, "cannot open %s: %s", workspace, strerror(errno));
    const char *what = main_file;
    int r = write_new(dirfd, main_file, job->code, job->code_len);
    if (r == 0) {
        what = RUNNER_ARTIFACT_DIR;
        r = mkdirat(dirfd, RUNNER_ARTIFACT_DIR, 0700) < 0 ? -errno : 0;
    }
    for (size_t i = 0; r == 0 && i < job->n_files; i++) {
        what = job->files[i].name;
        r = write_new(dirfd, what, job->files[i].data, job->files[i].len);
    }
    close(dirfd);
    if (r == -EEXIST)
        return sg_error_set(err, r, "file \"%s\" given twice", what);
    if (r < 0)
        return sg_error_set(err, r, "cannot write the workspace: %s: %s", what, strerror(-r));
    return 0;
}

int runner_job_write(const struct runner_cfg *cfg, const struct runner_job *job,
                     struct sg_error *err)
{
    int r = runner_as_job(cfg, 1);
    if (r < 0)
        return sg_error_set(err, r, "cannot take the job's identity: %s", strerror(-r));
    r = job_write(cfg, job, err);
    int back = runner_as_job(cfg, 0);
    if (back < 0 && r == 0)
        r = sg_error_set(err, back, "cannot return to the runner's identity: %s", strerror(-back));
    return r;
}

void runner_job_free(struct runner_job *job)
{
    if (!job)
        return;
    free(job->code);
    free(job->payload_json);
    for (size_t i = 0; i < job->n_files; i++) {
        free(job->files[i].name);
        free(job->files[i].data);
    }
    free(job->files);
    memset(job, 0, sizeof(*job));
}
