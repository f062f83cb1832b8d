#include "runner_session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "b64.h"
#include "buf.h"
#include "runner_result.h"
#include "sg_time.h"

#define READ_CHUNK 65536
#define REPORT_SLACK (64u * 1024u)

struct session {
    const struct runner_cfg *cfg;
    struct runner_child *child;
    int sigfd;
    char key[RUNNER_SESSION_KEY_MAX + 1];
    size_t max_output;
    struct sg_buf in;        /* stdin bytes not yet a whole line */
    struct sg_buf rep;       /* report-pipe bytes not yet a whole line */
    json_t *seen;            /* artifact name -> "size:mtime" already returned */
    const char *sigsys_type; /* what a SIGSYS death of the child is (runner_sigsys_type()) */
    int lost;
};

static double now_ms(void)
{
    return (double)sg_time_mono_ns() / 1e6;
}

/* The first whole line of b (without '\n') moved out into a new string. */
static char *take_line(struct sg_buf *b, size_t *ret_len)
{
    char *nl = b->len ? memchr(b->data, '\n', b->len) : NULL;
    if (!nl)
        return NULL;
    size_t n = (size_t)(nl - b->data);
    char *line = malloc(n + 1);
    if (line) {
        memcpy(line, b->data, n);
        line[n] = '\0';
        *ret_len = n;
    }
    memmove(b->data, nl + 1, b->len - n - 1);
    b->len -= n + 1;
    return line;
}

/* One read of fd into b; 1 data, 0 EOF, -EAGAIN nothing, -E2BIG over the cap. */
static int fill(int fd, struct sg_buf *b)
{
    static char chunk[READ_CHUNK];
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -EAGAIN;
    if (n <= 0)
        return 0;
    return sg_buf_append(b, chunk, (size_t)n) < 0 ? -E2BIG : 1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The child's report lines carry the report token (runner_watch.h): a line
 * without it is the program's (it holds fd 4 too) and is dropped; in one
 * with it, the token, its space and what precedes it go. NULL when the
 * line is not a report. */
static const char *report_of(const struct session *s, const char *line, size_t n)
{
    size_t tl = strlen(s->child->token);
    const char *t = tl ? memmem(line, n, s->child->token, tl) : NULL;
    if (!t || (size_t)(t - line) + tl >= n || t[tl] != ' ')
        return NULL;
    return t + tl + 1;
}

/* Write o (consumed) as one line to the child's fd 3. */
static int to_child(struct session *s, json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return -ENOMEM;
    size_t n = strlen(text);
    text[n] = '\n';
    int r = write_all(s->child->job_w, text, n + 1);
    free(text);
    return r;
}

static int key_ok(const struct session *s, json_t *req)
{
    const char *k = json_string_value(json_object_get(req, "key"));
    size_t kl = k ? strlen(k) : 0, sl = strlen(s->key);
    unsigned char diff = (unsigned char)(kl != sl);
    for (size_t i = 0; i < sl; i++)
        diff |= (unsigned char)(s->key[i] ^ (i < kl ? k[i] : 0));
    return diff == 0;
}

/* ----------------------------------------------------------------- cells */

struct cell_run {
    const char *nonce;
    unsigned timeout_ms;
    size_t cap;
    const char *interrupted; /* "timeout" / "cancelled" once SIGINT was sent */
    double kill_at;
    int dead;
};

/* One stream frame of a streamed cell, stamped with the cell's nonce. */
static void send_frame(void *ud, const char *name, const char *data, size_t len)
{
    const struct cell_run *c = ud;
    int r = runner_stream_write(c->nonce, name, data, len);
    if (r < 0)
        fprintf(stderr, "runner: cannot write a stream frame: %s\n", strerror(-r));
}

/* Lines that arrived on stdin while the cell ran: only a keyed cancel of
 * this cell counts. */
static void read_cancels(struct session *s, struct cell_run *c)
{
    int r = fill(STDIN_FILENO, &s->in);
    char *line;
    size_t n;
    if (r == 0)
        c->kill_at = c->kill_at ? c->kill_at : now_ms() + c->timeout_ms; /* executor gone */
    while ((line = take_line(&s->in, &n))) {
        json_t *req = json_loadb(line, n, 0, NULL);
        const char *cancel = json_string_value(json_object_get(req, "cancel"));
        if (req && key_ok(s, req) && cancel && strcmp(cancel, c->nonce) == 0 && !c->interrupted) {
            c->interrupted = "cancelled";
            c->kill_at = now_ms() + RUNNER_SESSION_GRACE_MS;
            kill(s->child->pid, SIGINT);
        }
        json_decref(req);
        free(line);
    }
}

static void child_exited(struct session *s, struct cell_run *c, struct runner_watch *w)
{
    char drain[64];
    while (read(s->sigfd, drain, sizeof(drain)) > 0)
        ;
    int status;
    if (waitpid(s->child->pid, &status, WNOHANG) == s->child->pid) {
        w->reaped = 1;
        w->status = status;
        c->dead = 1;
    }
}

/* The report pipe is readable: 1 when the cell's report (a line with the
 * token) is in, or the pipe is gone (the cell is over). */
static int read_report(struct session *s, struct cell_run *c, struct runner_watch *w)
{
    int r = fill(s->child->res_r, &s->rep);
    size_t n;
    char *line;
    while ((line = take_line(&s->rep, &n))) {
        const char *rep = report_of(s, line, n);
        if (rep) {
            sg_buf_append(&w->res, rep, n - (size_t)(rep - line));
            w->reported = 1;
        } else {
            w->forged_lines++;
        }
        free(line);
        if (rep)
            return 1;
    }
    if (r == 0 || r == -E2BIG) {
        c->dead = 1;
        return 1;
    }
    return 0;
}

/* One poll round of a running cell; 1 when the cell is over. */
static int watch_round(struct session *s, struct cell_run *c, struct runner_watch *w,
                       double deadline)
{
    double now = now_ms();
    if (!c->interrupted && now >= deadline) {
        c->interrupted = "timeout";
        c->kill_at = now + RUNNER_SESSION_GRACE_MS;
        kill(s->child->pid, SIGINT);
    }
    if (c->kill_at && now >= c->kill_at) {
        runner_child_kill(s->child);
        c->dead = 1;
        return 1;
    }
    double until = c->kill_at ? c->kill_at : deadline;
    struct pollfd p[] = {{s->child->out_r, POLLIN, 0},
                         {s->child->err_r, POLLIN, 0},
                         {s->child->res_r, POLLIN, 0},
                         {STDIN_FILENO, POLLIN, 0},
                         {s->sigfd, POLLIN, 0}};
    double due = runner_watch_stream_tick(w); /* a streamed cell's output */
    double wait = due >= 0 && due < until - now ? due : until - now;
    if (wait > RUNNER_STUCK_CHECK_MS)
        wait = RUNNER_STUCK_CHECK_MS;
    if (poll(p, 5, (int)wait + 1) <= 0) {
        c->dead = runner_watch_check_stuck(s->child, w);
        return c->dead;
    }
    struct sg_buf *bufs[] = {&w->out, &w->err};
    for (int i = 0; i < 2; i++) {
        size_t old = bufs[i]->len;
        if (p[i].revents && fill(p[i].fd, bufs[i]) == -E2BIG && !w->limit_hit)
            w->limit_hit = i == 0 ? "stdout" : "stderr";
        runner_watch_stream_note(w, i, old);
    }
    if (p[2].revents && read_report(s, c, w))
        return 1;
    if (p[3].revents)
        read_cancels(s, c);
    if (p[4].revents)
        child_exited(s, c, w);
    if (!c->dead)
        c->dead = runner_watch_check_stuck(s->child, w);
    return c->dead;
}

/* Keep only the artifacts the cell created or changed (a listing of what
 * was returned before, by size and modification time). */
static void new_artifacts_only(struct session *s, json_t *res)
{
    json_t *arts = json_object_get(res, "artifacts"), *a, *keep = json_array();
    size_t i;
    char path[4200], sig[64];
    json_array_foreach(arts, i, a)
    {
        const char *name = json_string_value(json_object_get(a, "name"));
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s/%s", s->cfg->workspace, RUNNER_ARTIFACT_DIR,
                 name ? name : "");
        if (!name || lstat(path, &st) < 0)
            continue;
        snprintf(sig, sizeof(sig), "%lld:%lld.%ld", (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        const char *old = json_string_value(json_object_get(s->seen, name));
        if (old && strcmp(old, sig) == 0)
            continue;
        json_object_set_new(s->seen, name, json_string(sig));
        json_array_append(keep, a);
    }
    json_object_set_new(res, "artifacts", keep);
}

static json_t *cell_result(struct session *s, struct cell_run *c, struct runner_watch *w)
{
    w->stop = w->res.len ? RUNNER_REPORTED : RUNNER_EXITED;
    /* the memory figure is this process's reading, never the report's */
    w->max_rss_kb = c->dead ? 0 : runner_child_rss_kb(s->child->pid);
    w->sigsys_type = s->sigsys_type;
    if (c->dead && !w->res.len) {
        int status;
        if (!w->reaped && waitpid(s->child->pid, &status, 0) == s->child->pid) {
            w->reaped = 1;
            w->status = status;
        }
    }
    json_t *res = runner_result_from_watch(s->cfg, w, c->cap);
    if (res)
        new_artifacts_only(s, res);
    if (res && c->interrupted) {
        int t = strcmp(c->interrupted, "timeout") == 0;
        json_object_set_new(res, "outcome", json_string(t ? "timeout" : "cancelled"));
        json_object_set_new(res, "exit_code", json_integer(t ? RUNNER_EXIT_TIMEOUT : -130));
        json_object_set_new(res, "result", json_pack("{s:b}", "present", 0));
        json_object_set_new(res, "message",
                            json_string(c->dead ? "interrupted; the interrupt was not handled: "
                                                  "the interpreter was killed"
                                                : "interrupted"));
    } else if (res && w->limit_hit) {
        char msg[96];
        snprintf(msg, sizeof(msg), "%s larger than max_output_bytes (%zu)", w->limit_hit, c->cap);
        json_object_set_new(res, "outcome", json_string("output_limit"));
        json_object_set_new(res, "exit_code", json_integer(RUNNER_EXIT_OUTPUT));
        json_object_set_new(res, "message", json_string(msg));
    }
    const char *oc = json_string_value(json_object_get(res, "outcome"));
    if (oc && strcmp(oc, "unauthorized") == 0) {
        /* runner.js ends the child after a run-time denial (deny()) */
        runner_child_kill(s->child);
        c->dead = 1;
    }
    if (res && c->dead) {
        s->lost = 1;
        json_object_set_new(res, "session_lost", json_true());
    }
    return res;
}

static size_t limit_of(json_t *limits, const char *key, size_t dflt, size_t high)
{
    json_t *v = json_object_get(limits, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return dflt;
    return (size_t)json_integer_value(v) < high ? (size_t)json_integer_value(v) : high;
}

static json_t *run_cell(struct session *s, json_t *req, const char *nonce)
{
    json_t *limits = json_object_get(req, "limits");
    struct cell_run c = {.nonce = nonce};
    c.timeout_ms =
        (unsigned)limit_of(limits, "timeout_ms", RUNNER_DEFAULT_TIMEOUT_MS, RUNNER_MAX_TIMEOUT_MS);
    c.cap = limit_of(limits, "max_output_bytes", s->max_output, RUNNER_MAX_MAX_OUTPUT);
    if (!json_is_string(json_object_get(req, "cell")))
        return runner_result_failed("bad_job", "'cell' must be a string");
    if (to_child(s, json_pack("{s:O}", "cell", json_object_get(req, "cell"))) < 0) {
        s->lost = 1;
        json_t *res = runner_result_failed("runner_error", "the session's interpreter is gone");
        json_object_set_new(res, "session_lost", json_true());
        return res;
    }
    /* a streamed cell sends its output as stream frames too (PROTOCOL.md) */
    struct runner_watch w = {0};
    w.stream.fn = json_is_true(json_object_get(req, "stream")) ? send_frame : NULL;
    w.stream.ud = &c;
    sg_buf_init(&w.out, c.cap);
    sg_buf_init(&w.err, c.cap);
    sg_buf_init(&w.res, c.cap + REPORT_SLACK);
    double start = now_ms(), deadline = start + c.timeout_ms;
    w.next_stuck_check = start + RUNNER_STUCK_CHECK_MS; /* a short cell pays for no reading */
    while (!watch_round(s, &c, &w, deadline))
        ;
    w.elapsed_ms = now_ms() - start;
    struct sg_buf *bufs[] = {&w.out, &w.err};
    int fds[] = {s->child->out_r, s->child->err_r};
    for (int i = 0; i < 2; i++) { /* what the cell wrote before its report */
        size_t old = bufs[i]->len;
        while (fill(fds[i], bufs[i]) == 1)
            ;
        runner_watch_stream_note(&w, i, old);
    }
    runner_watch_stream_finish(&w);
    json_t *res = cell_result(s, &c, &w);
    runner_watch_free(&w);
    return res;
}

/* ------------------------------------------------------- workspace files */

static json_t *file_error(const char *msg)
{
    return runner_result_failed("bad_job", msg);
}

static json_t *put_file(struct session *s, int dirfd, const char *name, json_t *req)
{
    json_t *b64 = json_object_get(req, "content_b64");
    unsigned char *data = NULL;
    size_t n = 0;
    if (!json_is_string(b64) || sg_b64_decode(json_string_value(b64), json_string_length(b64),
                                              RUNNER_SESSION_FILE_MAX, &data, &n, NULL) < 0)
        return file_error("file content must be base64, at most 8 MiB");
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat st;
    int r = fd < 0 ? -errno : fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EISDIR;
    if (r == 0 && (r = write_all(fd, (const char *)data, n)) < 0)
        unlinkat(dirfd, name, 0); /* a failed upload leaves no file */
    if (fd >= 0)
        close(fd);
    free(data);
    (void)s;
    if (r == -ENOSPC || r == -EDQUOT || r == -EFBIG) {
        json_t *res = file_error("the workspace is full");
        json_object_set_new(res, "error", json_string("workspace_full"));
        return res;
    }
    return r < 0 ? file_error("cannot write the file") : runner_result_failed("ok", NULL);
}

static json_t *get_file(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return file_error(errno == ENOENT ? "no such file" : "cannot open the file");
    struct stat st;
    json_t *res = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return file_error("not a regular file");
    }
    if (st.st_size > RUNNER_SESSION_FILE_MAX) { /* a download over the cap */
        close(fd);
        json_t *e = file_error("the file is larger than 8 MiB: downloads are at most 8 MiB");
        if (e)
            json_object_set_new(e, "error", json_string("file_too_large"));
        return e;
    }
    struct sg_buf b;
    sg_buf_init(&b, RUNNER_SESSION_FILE_MAX);
    while (fill(fd, &b) == 1)
        ;
    close(fd);
    char *text = NULL;
    size_t tl = 0;
    if (sg_b64_encode((const unsigned char *)(b.data ? b.data : ""), b.len, &text, &tl) == 0 &&
        (res = runner_result_failed("ok", NULL)))
        json_object_set_new(res, "content_b64", json_stringn(text, tl));
    free(text);
    sg_buf_free(&b);
    return res;
}

static json_t *list_files(int dirfd)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    json_t *files = json_array();
    struct dirent *e;
    while (d && files && json_array_size(files) < RUNNER_SESSION_LIST_MAX && (e = readdir(d))) {
        struct stat st;
        if (e->d_name[0] != '.' && fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode))
            json_array_append_new(
                files, json_pack("{s:s,s:I}", "name", e->d_name, "size", (json_int_t)st.st_size));
    }
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    json_t *res = runner_result_failed("ok", NULL);
    if (res)
        json_object_set_new(res, "files", files);
    else
        json_decref(files);
    return res;
}

static json_t *file_op(struct session *s, json_t *req)
{
    const char *op = json_string_value(json_object_get(req, "op"));
    const char *name = json_string_value(json_object_get(req, "name"));
    int list = op && strcmp(op, "list_files") == 0;
    if (!op || (!list && (!name || !runner_name_ok(name, strlen(name), s->cfg->main_file))))
        return file_error("refused file name: [A-Za-z0-9._-], 1 to 128 bytes, no leading dot, "
                          "no '..', not the runner's own");
    /* with the job's rights: its files are its, and nothing else is read */
    int dirfd = runner_as_job(s->cfg, 1) == 0
                    ? open(s->cfg->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    : -1;
    json_t *res = dirfd < 0 ? runner_result_failed("runner_error", "cannot open the workspace")
                  : list    ? list_files(dirfd)
                  : strcmp(op, "put_file") == 0 ? put_file(s, dirfd, name, req)
                  : strcmp(op, "get_file") == 0 ? get_file(dirfd, name)
                                                : file_error("unknown op");
    if (dirfd >= 0)
        close(dirfd);
    if (runner_as_job(s->cfg, 0) < 0)
        abort(); /* stuck in the job's identity: better no answer than a wrong one */
    return res;
}

/* ------------------------------------------------------------- serving */

/* The child's first report: "ready" once it installed the policy. */
static json_t *start_child(struct session *s, json_t *runtime)
{
    int fds[] = {s->child->out_r, s->child->err_r, s->child->res_r};
    for (int i = 0; i < 3; i++)
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    char head[sizeof(s->child->token) + 1];
    int hl = snprintf(head, sizeof(head), "%s\n", s->child->token);
    if (write_all(s->child->job_w, head, (size_t)hl) < 0 ||
        to_child(s, json_pack("{s:b,s:O?}", "session", 1, "runtime", runtime)) < 0)
        return runner_result_failed("runner_error", "the interpreter is gone");
    double deadline = now_ms() + RUNNER_SESSION_READY_MS;
    char *line = NULL;
    size_t n = 0;
    while (!(line = take_line(&s->rep, &n)) && now_ms() < deadline) {
        struct pollfd p = {s->child->res_r, POLLIN, 0};
        if (poll(&p, 1, 100) > 0 && fill(s->child->res_r, &s->rep) <= 0 && p.revents & POLLHUP)
            break;
    }
    const char *body = line ? report_of(s, line, n) : NULL;
    json_t *rep = body ? json_loadb(body, n - (size_t)(body - line), 0, NULL) : NULL;
    const char *outcome = json_string_value(json_object_get(rep, "outcome"));
    json_t *res = outcome && strcmp(outcome, "ready") == 0
                      ? runner_result_failed("ok", NULL)
                      : runner_result_failed("runner_error", "the session's interpreter did not "
                                                             "start (the run-time policy?)");
    if (res && outcome && strcmp(outcome, "ready") == 0) {
        json_object_set_new(res, "exit_code", json_integer(0));
        json_object_set_new(res, "session", json_string("ready"));
    }
    json_decref(rep);
    free(line);
    return res;
}

static json_t *answer_request(struct session *s, json_t *req, const char *nonce)
{
    if (s->lost) {
        json_t *res = runner_result_failed("runner_error", "the session's interpreter is gone");
        json_object_set_new(res, "session_lost", json_true());
        return res;
    }
    if (json_object_get(req, "cell"))
        return run_cell(s, req, nonce);
    return file_op(s, req);
}

static int serve_requests(struct session *s)
{
    for (;;) {
        size_t n;
        char *line;
        while (!(line = take_line(&s->in, &n))) {
            int r = fill(STDIN_FILENO, &s->in);
            if (r == 0 || r == -E2BIG)
                return 0; /* the executor went, or sent more than a line may hold */
        }
        json_t *req = json_loadb(line, n, 0, NULL);
        free(line);
        const char *nonce = json_string_value(json_object_get(req, "nonce"));
        if (req && key_ok(s, req) && nonce && runner_nonce_ok(nonce, strlen(nonce)) &&
            (json_object_get(req, "cell") || json_object_get(req, "op"))) {
            json_t *res = answer_request(s, req, nonce);
            if (!res || runner_result_write(res, nonce) < 0)
                fprintf(stderr, "runner: cannot write a session answer\n");
            json_decref(res);
        }
        json_decref(req);
    }
}

/* artifacts/, the job's own (mode 0700 as in a one-shot job). */
static int make_artifact_dir(const struct runner_cfg *cfg, const char *path)
{
    int r = runner_as_job(cfg, 1);
    if (r == 0 && mkdir(path, 0700) < 0 && errno != EEXIST)
        r = -errno;
    if (runner_as_job(cfg, 0) < 0)
        abort();
    return r;
}

int runner_session_serve(const struct runner_cfg *cfg, struct runner_child *child, int sigfd,
                         json_t *job, const char *nonce)
{
    struct session s = {.cfg = cfg, .child = child, .sigfd = sigfd, .seen = json_object()};
    const char *key = json_string_value(json_object_get(job, "key"));
    size_t kl = key ? strlen(key) : 0;
    json_t *runtime = json_object_get(job, "runtime");
    json_t *res;
    struct sg_error err = {0};
    s.sigsys_type = runner_sigsys_type(json_is_object(runtime) ? runtime : NULL);
    sg_buf_init(&s.in, cfg->max_job);
    sg_buf_init(&s.rep, RUNNER_MAX_MAX_OUTPUT + REPORT_SLACK);
    s.max_output = limit_of(json_object_get(job, "limits"), "max_output_bytes",
                            RUNNER_DEFAULT_MAX_OUTPUT, RUNNER_MAX_MAX_OUTPUT);
    char art[4096];
    snprintf(art, sizeof(art), "%s/%s", cfg->workspace, RUNNER_ARTIFACT_DIR);
    if (kl < RUNNER_SESSION_KEY_MIN || kl > RUNNER_SESSION_KEY_MAX || !runner_nonce_ok(key, kl))
        res = runner_result_failed("bad_job", "a session needs a key of 32-128 [A-Za-z0-9]");
    else if (runtime && !json_is_object(runtime) && !json_is_null(runtime))
        res = runner_result_failed("bad_job", "'runtime' must be an object");
    else if (runner_child_verify(child, &err) < 0)
        res = runner_result_failed("runner_error", err.msg);
    else if (make_artifact_dir(cfg, art) < 0)
        res = runner_result_failed("runner_error", "cannot write the workspace");
    else {
        memcpy(s.key, key, kl + 1);
        res = start_child(&s, json_is_object(runtime) ? runtime : NULL);
    }
    int ok = res && strcmp(json_string_value(json_object_get(res, "outcome")), "ok") == 0;
    int r = res ? runner_result_write(res, nonce) : -ENOMEM;
    json_decref(res);
    if (ok && r == 0)
        serve_requests(&s);
    runner_child_kill(child);
    sg_buf_free(&s.in);
    sg_buf_free(&s.rep);
    json_decref(s.seen);
    return 0;
}
