#include "runner_result.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "b64.h"
#include "json_nesting.h"
#include "json_raw.h"

#define PROTOCOL_VERSION 1
#define MESSAGE_MAX 1000
#define ARTIFACT_NAMES_MAX 4096 /* directory entries looked at */

#define RUNNER_DENIALS_MAX 16 /* denials a result carries (the executor's cap too) */

static const struct {
    const char *ext;
    const char *mime;
} MIME_TYPES[] = {
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"svg", "image/svg+xml"},
    {"pdf", "application/pdf"},
    {"csv", "text/csv"},
    {"json", "application/json"},
    {"txt", "text/plain"},
    {"html", "text/html"},
    {"md", "text/markdown"},
    {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"xls", "application/vnd.ms-excel"},
    {"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
};

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80; /* no overlongs */
        hi = c == 0xED ? 0x9F : 0xBF; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

json_t *runner_text(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    size_t bad = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        bad += k == 0;
        i += k ? k : 1;
    }
    if (bad == 0)
        return json_stringn(data ? data : "", len);
    char *out = malloc(len + 2 * bad + 1); /* each bad byte (1) becomes U+FFFD (3) */
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(s + i, len - i);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    json_t *j = json_stringn(out, o);
    free(out);
    return j;
}

static json_t *base_result(const char *outcome, int exit_code, int sig, const char *message)
{
    /* memory_used_kb null: unknown until a run measured it */
    return json_pack("{s:s, s:i, s:i, s:s, s:s, s:{s:b}, s:[], s:n, s:f, s:s?}", "outcome", outcome,
                     "exit_code", exit_code, "signal", sig, "stdout", "", "stderr", "", "result",
                     "present", 0, "artifacts", "memory_used_kb", "time_used_ms", 0.0, "message",
                     message);
}

json_t *runner_result_failed(const char *outcome, const char *message)
{
    return base_result(outcome, RUNNER_EXIT_RUNNER, 0, message);
}

/* The result object for the report's value_json (the program's value as
 * JSON text): {"present", "value"}, or {"present", "value_json"} with the
 * checked text when jansson cannot hold it (integers beyond 64 bits). NULL
 * (and *ret_why set) when the text is not a value the line can carry. */
static json_t *result_of(json_t *text, const char **ret_why)
{
    *ret_why = "no value_json string";
    if (!json_is_string(text))
        return NULL;
    const char *s = json_string_value(text);
    size_t n = json_string_length(text);
    json_t *value = json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    *ret_why = "value nested too deep or not JSON";
    if (value && !sg_json_nesting_exceeds(value, SG_JSON_RESULT_DEPTH_MAX))
        return json_pack("{s:b, s:o}", "present", 1, "value", value);
    json_decref(value);
    if (value || !sg_json_raw_ok(s, n, SG_JSON_RESULT_DEPTH_MAX))
        return NULL;
    return json_pack("{s:b, s:O}", "present", 1, "value_json", text);
}

/* A run-time denial report ({"outcome": "unauthorized", "denials": [{type,
 * target}]}): the denials pass with their shape checked and their number
 * capped; the executor checks the types against its list. */
static json_t *unauthorized_result(json_t *rep)
{
    json_t *in = json_object_get(rep, "denials"), *d, *out = json_array();
    size_t i;
    json_array_foreach(in, i, d)
    {
        json_t *type = json_object_get(d, "type"), *target = json_object_get(d, "target");
        if (out && i < RUNNER_DENIALS_MAX && json_is_string(type) && json_is_string(target))
            json_array_append_new(out, json_pack("{s:O,s:O}", "type", type, "target", target));
    }
    if (!out || json_array_size(out) == 0) {
        json_decref(out);
        return base_result("exception", 1, 0,
                           "unreadable report from the program: "
                           "a denial without its record");
    }
    json_t *res =
        base_result("unauthorized", 1, 0, json_string_value(json_object_get(rep, "message")));
    if (res)
        json_object_set_new(res, "denials", out);
    else
        json_decref(out);
    return res;
}

/* The child's report, if it is one the parent accepts (see the header). */
static json_t *classify_report(const struct runner_watch *w)
{
    json_error_t je;
    size_t len = w->res.len;
    const char *nl = memchr(w->res.data, '\n', len);
    /* NUL is a character a returned string may hold (JSON.stringify writes \u0000). */
    json_t *rep =
        json_loadb(w->res.data, nl ? (size_t)(nl - w->res.data) : len, JSON_ALLOW_NUL, &je);
    const char *outcome = rep ? json_string_value(json_object_get(rep, "outcome")) : NULL;
    const char *why = rep ? "not a known outcome" : je.text;
    json_t *res, *result = NULL;
    int known, ok;
    if (outcome && strcmp(outcome, "unauthorized") == 0) {
        res = unauthorized_result(rep);
        goto out;
    }
    known = outcome && (!strcmp(outcome, "ok") || !strcmp(outcome, "exception") ||
                        !strcmp(outcome, "no_main"));
    ok = known && strcmp(outcome, "ok") == 0;
    if (ok && json_is_true(json_object_get(rep, "present")) &&
        !(result = result_of(json_object_get(rep, "value_json"), &why)))
        known = 0;
    if (!known) {
        char msg[MESSAGE_MAX];
        snprintf(msg, sizeof(msg), "unreadable report from the program: %s", why);
        res = base_result("exception", 1, 0, msg);
        goto out;
    }
    const char *message = json_string_value(json_object_get(rep, "message"));
    res = base_result(outcome, ok ? 0 : 1, 0, message);
    if (res && result)
        json_object_set(res, "result", result);
out:
    json_decref(result);
    json_decref(rep);
    return res;
}

/* The kernel filter killed the child (SECCOMP_RET_KILL_PROCESS: SIGSYS) for a
 * refused system call: a denial the program could neither catch nor hide,
 * whatever it reported before. The kernel does not say which call; the
 * job's policy says which refusals kill (runner_sigsys_type()). */
static int killed_by_filter(const struct runner_watch *w)
{
    return w->sigsys_type && (w->filter_killed || (w->reaped && WIFSIGNALED(w->status) &&
                                                   WTERMSIG(w->status) == SIGSYS));
}

static json_t *filter_denial(const struct runner_watch *w)
{
    /* the same words as the Python runner's */
    static const char target[] = "the job's process was killed by the kernel filter (SIGSYS)";
    char msg[160];
    snprintf(msg, sizeof(msg), "runtime.%s: %s", w->sigsys_type, target);
    json_t *res = base_result("unauthorized", 1, SIGSYS, msg);
    if (res)
        json_object_set_new(res, "denials",
                            json_pack("[{s:s,s:s}]", "type", w->sigsys_type, "target", target));
    return res;
}

static json_t *classify_exit(const struct runner_watch *w)
{
    char msg[128];
    int st = w->status;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        const char *name = sigabbrev_np(sig);
        if (name)
            snprintf(msg, sizeof(msg), "the program was killed by signal SIG%s", name);
        else
            snprintf(msg, sizeof(msg), "the program was killed by signal %d", sig);
        return base_result("killed", -sig, sig, msg);
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
    if (code == 0)
        return base_result("ok", 0, 0, NULL);
    snprintf(msg, sizeof(msg), "the program exited with status %d", code);
    return base_result("exception", code, 0, msg);
}

json_t *runner_result_from_watch(const struct runner_cfg *cfg, const struct runner_watch *w,
                                 size_t max_output)
{
    char msg[128];
    json_t *res;
    int ran = 0;
    if (w->stop == RUNNER_TIMEOUT) {
        res = base_result("timeout", RUNNER_EXIT_TIMEOUT, 0, "timeout_ms exceeded");
    } else if (w->stop == RUNNER_OUTPUT_LIMIT) {
        snprintf(msg, sizeof(msg), "%s larger than max_output_bytes (%zu)", w->limit_hit,
                 max_output);
        res = base_result("output_limit", RUNNER_EXIT_OUTPUT, 0, msg);
    } else {
        ran = 1;
        res = killed_by_filter(w) ? filter_denial(w)
              : w->res.len        ? classify_report(w)
                                  : classify_exit(w);
    }
    if (!res)
        return NULL;
    json_object_set_new(res, "stdout", runner_text(w->out.data, w->out.len));
    json_object_set_new(res, "stderr", runner_text(w->err.data, w->err.len));
    json_object_set_new(res, "time_used_ms", json_real(round(w->elapsed_ms * 1000) / 1000));
    json_object_set_new(res, "memory_used_kb",
                        w->max_rss_kb > 0 ? json_integer(w->max_rss_kb) : json_null());
    if (ran)
        runner_result_artifacts(cfg, res);
    return res;
}

static const char *mime_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return NULL;
    for (size_t i = 0; i < sizeof(MIME_TYPES) / sizeof(MIME_TYPES[0]); i++)
        if (strcasecmp(dot + 1, MIME_TYPES[i].ext) == 0)
            return MIME_TYPES[i].mime;
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dirfd (at most ARTIFACT_NAMES_MAX), sorted; caller frees each
 * and the array. */
static char **list_dir(int dirfd, size_t *ret_n)
{
    *ret_n = 0;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    char **names = d ? calloc(ARTIFACT_NAMES_MAX, sizeof(*names)) : NULL;
    if (!names) {
        if (d)
            closedir(d);
        else if (fd >= 0)
            close(fd);
        return NULL;
    }
    struct dirent *e;
    while (*ret_n < ARTIFACT_NAMES_MAX && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            (names[*ret_n] = strdup(e->d_name)))
            (*ret_n)++;
    closedir(d);
    qsort(names, *ret_n, sizeof(*names), by_name);
    return names;
}

/* Reads one artifact within the caps; NULL and *ret_reason set when skipped. */
static unsigned char *read_artifact(const struct runner_cfg *cfg, int dirfd, const char *name,
                                    size_t total, size_t *ret_len, const char **ret_reason)
{
    *ret_reason = "not a regular file";
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    unsigned char *data = NULL;
    size_t size = 0, n = 0;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        goto out;
    *ret_reason = "too large";
    size = (size_t)st.st_size;
    if (size > cfg->art_bytes || total + size > cfg->art_total || !(data = malloc(size + 1)))
        goto out;
    ssize_t r;
    while (n <= size && (r = read(fd, data + n, size + 1 - n)) > 0) /* one more: growth shows */
        n += (size_t)r;
out:
    if (fd >= 0)
        close(fd);
    if (data && n > size) {
        free(data);
        data = NULL;
    }
    *ret_len = n;
    return data;
}

static void add_artifact(json_t *found, const char *name, const char *mime,
                         const unsigned char *data, size_t len)
{
    char *b64 = NULL;
    size_t b64_len = 0;
    if (sg_b64_encode(data, len, &b64, &b64_len) < 0)
        return;
    json_array_append_new(found, json_pack("{s:s, s:s, s:I, s:s%}", "name", name, "mime_type", mime,
                                           "size", (json_int_t)len, "content_b64", b64, b64_len));
    free(b64);
}

static void artifacts(const struct runner_cfg *cfg, json_t *result);

/* Read with the job's rights only: nothing the job could not read itself. */
void runner_result_artifacts(const struct runner_cfg *cfg, json_t *result)
{
    if (runner_as_job(cfg, 1) == 0)
        artifacts(cfg, result);
    if (runner_as_job(cfg, 0) < 0)
        abort(); /* stuck in the job's identity: better no result than a wrong one */
}

static void artifacts(const struct runner_cfg *cfg, json_t *result)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", cfg->workspace, RUNNER_ARTIFACT_DIR);
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0)
        return;
    size_t n = 0, total = 0;
    char **names = list_dir(dirfd, &n);
    json_t *found = json_array(), *skipped = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *mime = mime_of(names[i]), *reason = "too many artifacts";
        size_t len = 0;
        unsigned char *data = NULL;
        if (!mime)
            continue;
        if (json_array_size(found) < cfg->art_files &&
            (data = read_artifact(cfg, dirfd, names[i], total, &len, &reason))) {
            add_artifact(found, names[i], mime, data, len);
            total += len;
            free(data);
            continue;
        }
        json_array_append_new(skipped, json_pack("{s:s, s:s}", "name", names[i], "reason", reason));
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    close(dirfd);
    json_object_set_new(result, "artifacts", found);
    if (json_array_size(skipped))
        json_object_set_new(result, "artifacts_skipped", skipped);
    else
        json_decref(skipped);
}

/* "\n" + line + "\n" to fd 1. Leading newline: a partial line the program
 * wrote to this stdout (it can reach it through /proc/1/fd/1) cannot swallow
 * the line. */
static int write_line(const char *line)
{
    size_t len = line ? strlen(line) : 0;
    char *out = line ? malloc(len + 2) : NULL;
    if (!out)
        return -ENOMEM;
    out[0] = '\n';
    memcpy(out + 1, line, len);
    out[len + 1] = '\n';
    int r = 0;
    for (size_t off = 0; off < len + 2;) {
        ssize_t w = write(STDOUT_FILENO, out + off, len + 2 - off);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w < 0) {
            r = -errno;
            break;
        }
        off += (size_t)w;
    }
    free(out);
    return r;
}

int runner_result_write(json_t *result, const char *nonce)
{
    json_object_set_new(result, "sandgate_runner", json_integer(PROTOCOL_VERSION));
    json_object_set_new(result, "nonce", nonce && *nonce ? json_string(nonce) : json_null());
    char *line = json_dumps(result, JSON_COMPACT);
    int r = write_line(line);
    free(line);
    return r;
}

int runner_stream_write(const char *nonce, const char *name, const char *data, size_t len)
{
    json_t *frame = json_pack("{s:i,s:s,s:s,s:o}", "sandgate_runner", PROTOCOL_VERSION, "nonce",
                              nonce, "stream", name, "text", runner_text(data, len));
    char *line = frame ? json_dumps(frame, JSON_COMPACT) : NULL;
    json_decref(frame);
    int r = write_line(line);
    free(line);
    return r;
}
