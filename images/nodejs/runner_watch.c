#include "runner_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_view.h"
#include "sg_random.h"
#include "sg_time.h"

#define READ_CHUNK 65536
/* Child fd numbers: the child's runner (images/nodejs/runner.js) uses them. */
#define CHILD_JOB_FD 3
#define CHILD_RES_FD 4
#define CHILD_READY_FD 5
#define CHILD_FDS 6
/* Where the child first moves its pipe ends, clear of the fds 0-4 it builds. */
#define CHILD_FD_FLOOR 16
#define STATUS_MAX 4096
#define TASKS_MAX 4096 /* threads of the child looked at by runner_child_verify() */

static int sigchld_pipe[2] = {-1, -1};

static void on_sigchld(int sig)
{
    (void)sig;
    int saved = errno;
    ssize_t n = write(sigchld_pipe[1], "c", 1); /* full pipe: a wake-up is pending anyway */
    (void)n;
    errno = saved;
}

int runner_sigchld_fd(void)
{
    if (pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) < 0)
        return -errno;
    return sigchld_pipe[0];
}

static double now_ms(void)
{
    return (double)sg_time_mono_ns() / 1e6;
}

/* chdir into the workspace; split, with the job's ids (the workspace may be
 * the job's own, mode 0700: root has no CAP_DAC_OVERRIDE here), then back. */
static int enter_workspace(const char *workspace, int split)
{
    if (!split)
        return chdir(workspace);
    if (setresgid((gid_t)-1, RUNNER_JOB_GID, (gid_t)-1) < 0 ||
        setresuid((uid_t)-1, RUNNER_JOB_UID, (uid_t)-1) < 0)
        return -1;
    int r = chdir(workspace);
    if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0 || setresgid((gid_t)-1, 0, (gid_t)-1) < 0)
        return -1;
    return r;
}

/* In the forked child: fds 0-5 as documented, everything else closed on
 * exec, default SIGPIPE, own process group. Never returns. */
static void child_exec(char *const argv[], char *const envp[], const char *workspace, int split,
                       const int fds[CHILD_FDS])
{
    /* the view of runner_view.h; /mnt: the image's empty staging directory */
    if (split && runner_view_enter("/mnt", getenv("SANDGATE_EGRESS_PROXY") != NULL) < 0)
        _exit(72);
    int moved[CHILD_FDS];
    for (int i = 0; i < CHILD_FDS; i++)
        if ((moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, CHILD_FD_FLOOR)) < 0)
            _exit(71);
    for (int i = 0; i < CHILD_FDS; i++)
        if (dup2(moved[i], i) < 0) /* dup2 clears FD_CLOEXEC on the copy */
            _exit(71);
    signal(SIGPIPE, SIG_DFL);
    if (setpgid(0, 0) < 0 || enter_workspace(workspace, split) < 0)
        _exit(71);
    execvpe(argv[0], argv, envp);
    _exit(127);
}

static int close_keep_errno(int fd)
{
    int saved = errno;
    if (fd >= 0)
        close(fd);
    errno = saved;
    return -1;
}

int runner_child_spawn(char *const argv[], char *const envp[], const char *workspace, int split,
                       struct runner_child *ret_child, struct sg_error *err)
{
    int job[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, res[2] = {-1, -1};
    int rdy[2] = {-1, -1};
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int r = 0;
    int *all[] = {&null,  &job[0], &job[1], &out[0], &out[1], &er[0],
                  &er[1], &res[0], &res[1], &rdy[0], &rdy[1]};
    char token[sizeof(ret_child->token)];
    if ((r = sg_random_hex(token, RUNNER_TOKEN_BYTES)) < 0) {
        sg_error_set(err, r, "cannot make the report token: %s", strerror(-r));
        goto out;
    }
    if (null < 0 || pipe2(job, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(er, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0 || pipe2(rdy, O_CLOEXEC) < 0) {
        r = sg_error_set(err, -errno, "cannot create the child's pipes: %s", strerror(errno));
        goto out;
    }
    /* the next child (there is one) is PID 1 of a new PID namespace */
    if (split && unshare(CLONE_NEWPID) < 0) {
        r = sg_error_set(err, -errno, "cannot make the child's PID namespace: %s", strerror(errno));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        r = sg_error_set(err, -errno, "cannot fork the child: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        int fds[CHILD_FDS] = {null, out[1], er[1], job[0], res[1], rdy[1]};
        child_exec(argv, envp, workspace, split, fds);
    }
    setpgid(pid, pid); /* also here: no window where a kill of the group misses it */
    *ret_child = (struct runner_child){.pid = pid,
                                       .job_w = job[1],
                                       .out_r = out[0],
                                       .err_r = er[0],
                                       .res_r = res[0],
                                       .ready_r = rdy[0],
                                       .split = split};
    memcpy(ret_child->token, token, sizeof(token));
    job[1] = out[0] = er[0] = res[0] = rdy[0] = -1;
out:
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        close_keep_errno(*all[i]);
    return r;
}

void runner_child_kill(const struct runner_child *child)
{
    if (child->pid > 0)
        kill(-child->pid, SIGKILL);
}

/* Appends what fits under the cap; 0 or -E2BIG when some was dropped. */
static int take(struct sg_buf *b, const char *data, size_t len)
{
    size_t room = b->cap - b->len;
    if (sg_buf_append(b, data, len < room ? len : room) < 0)
        return -E2BIG; /* out of memory: treated like the cap */
    return len > room ? -E2BIG : 0;
}

/* One read from a pipe into its buffer. Returns 1 (data), 0 (EOF: fd closed
 * and set to -1), -EAGAIN (nothing now) or -E2BIG (over the cap). */
static int pump(int *fd, struct sg_buf *b)
{
    static char chunk[READ_CHUNK];
    ssize_t n = read(*fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -EAGAIN;
    if (n <= 0) {
        *fd = close_keep_errno(*fd);
        return 0;
    }
    return take(b, chunk, (size_t)n) < 0 ? -E2BIG : 1;
}

static const char *const PIPE_NAMES[] = {"stdout", "stderr", "result"};

/* Keeps only the report in w->res. Each complete line on fd 4 (and, once the
 * pipe is done, the unterminated rest) that does not carry the token is the
 * program's (it holds fd 4 too) and is dropped; in the first line that does,
 * what precedes the token (a partial line the program left) and the token
 * with its space go, and the report stays. */
static void report_filter(const struct runner_child *c, struct runner_watch *w, int res_open)
{
    size_t tl = strlen(c->token);
    while (!w->reported && w->res.len > 0 && tl > 0) {
        char *d = w->res.data, *nl = memchr(d, '\n', w->res.len);
        if (!nl && res_open)
            return; /* the line is not complete yet */
        size_t line = nl ? (size_t)(nl - d) + 1 : w->res.len, skip = line;
        const char *t = memmem(d, line, c->token, tl);
        if (t && (size_t)(t - d) + tl < line && t[tl] == ' ') {
            skip = (size_t)(t - d) + tl + 1;
            w->reported = 1;
        } else {
            w->forged_lines++;
        }
        memmove(d, d + skip, w->res.len - skip);
        w->res.len -= skip;
    }
}

/* Reads whatever the pipes hold now (the child has reported or exited, so
 * everything it wrote before is there), without waiting for EOF: something
 * the program started may hold them open. */
static void drain(struct runner_child *c, struct runner_watch *w)
{
    int *fds[] = {&c->out_r, &c->err_r, &c->res_r};
    struct sg_buf *bufs[] = {&w->out, &w->err, &w->res};
    for (int i = 0; i < 3; i++) {
        int r = 0;
        while (*fds[i] >= 0 && (r = pump(fds[i], bufs[i])) == 1)
            ;
        if (*fds[i] >= 0 && r == -E2BIG && w->stop != RUNNER_OUTPUT_LIMIT) {
            w->stop = RUNNER_OUTPUT_LIMIT;
            w->limit_hit = PIPE_NAMES[i];
        }
    }
    report_filter(c, w, 0);
}

static void reap_with(struct runner_child *c, struct runner_watch *w, int flags)
{
    int status;
    struct rusage ru;
    pid_t got;
    do
        got = wait4(c->pid, &status, flags, &ru);
    while (got < 0 && errno == EINTR);
    if (got == c->pid) {
        w->reaped = 1;
        w->status = status;
        if (ru.ru_maxrss > w->max_rss_kb)
            w->max_rss_kb = ru.ru_maxrss;
    }
}

static void reap(struct runner_child *c, struct runner_watch *w)
{
    reap_with(c, w, WNOHANG);
}

/* After a SIGKILL: it cannot take long. */
static void reap_blocking(struct runner_child *c, struct runner_watch *w)
{
    reap_with(c, w, 0);
}

/* Waits for the ready pipe's EOF (the child dropped its identity then). */
static int await_ready(struct runner_child *c, struct sg_error *err)
{
    double deadline = now_ms() + RUNNER_READY_MAX_MS;
    char sink[64];
    while (c->ready_r >= 0) {
        double left = deadline - now_ms();
        if (left <= 0)
            return sg_error_set(err, -ETIMEDOUT, "the interpreter did not get ready");
        struct pollfd p = {.fd = c->ready_r, .events = POLLIN};
        if (poll(&p, 1, (int)left + 1) <= 0)
            continue;
        ssize_t n = read(c->ready_r, sink, sizeof(sink));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            c->ready_r = close_keep_errno(c->ready_r);
    }
    return 0;
}

/* The four ids of a "Uid:" / "Gid:" line are all want. */
static int ids_are(const char *status, const char *key, long want)
{
    const char *p = strstr(status, key);
    if (!p)
        return 0;
    p += strlen(key);
    for (int i = 0; i < 4; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v != want)
            return 0;
        p = end;
    }
    return 1;
}

/* Absent, or all hex zeros. */
static int caps_none(const char *status, const char *key)
{
    const char *p = strstr(status, key);
    if (!p)
        return strcmp(key, "\nCapAmb:") == 0;
    p += strlen(key);
    while (*p == '\t' || *p == ' ')
        p++;
    int digits = 0;
    for (; *p && *p != '\n'; p++, digits++)
        if (*p != '0')
            return 0;
    return digits > 0;
}

int runner_status_is_job(const char *status)
{
    if (!ids_are(status, "\nUid:", RUNNER_JOB_UID) || !ids_are(status, "\nGid:", RUNNER_JOB_GID))
        return -EPERM;
    const char *g = strstr(status, "\nGroups:");
    if (!g)
        return -EPERM;
    for (g += strlen("\nGroups:"); *g && *g != '\n';) {
        char *end;
        long v = strtol(g, &end, 10);
        if (end == g)
            break; /* only blanks left */
        if (v != RUNNER_JOB_GID)
            return -EPERM;
        g = end;
    }
    static const char *const caps[] = {"\nCapInh:", "\nCapPrm:", "\nCapEff:", "\nCapAmb:"};
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
        if (!caps_none(status, caps[i]))
            return -EPERM;
    return 0;
}

/* A /proc status file into text (NUL-terminated); 0 or -errno. */
static int read_status(const char *path, char *text, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    ssize_t r;
    while (n < cap - 1 && (r = read(fd, text + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    text[n] = '\0';
    return 0;
}

int runner_child_verify(struct runner_child *c, struct sg_error *err)
{
    if (!c->split || c->verified)
        return 0;
    int r = await_ready(c, err);
    if (r < 0)
        return r;
    char dir[64], path[128], text[STATUS_MAX];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)c->pid);
    DIR *d = opendir(dir);
    if (!d)
        return sg_error_set(err, -EPERM, "cannot list the interpreter's threads: %s",
                            strerror(errno));
    struct dirent *e;
    int tasks = 0;
    while (r == 0 && tasks < TASKS_MAX && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%.20s/status", dir, e->d_name);
        tasks++;
        if (read_status(path, text, sizeof(text)) < 0 || runner_status_is_job(text) < 0)
            r = sg_error_set(err, -EPERM,
                             "the interpreter's thread %.20s is not the job's "
                             "identity (uid/gid %d, no groups, no capabilities)",
                             e->d_name, RUNNER_JOB_UID);
    }
    closedir(d);
    if (r == 0 && tasks == 0)
        r = sg_error_set(err, -EPERM, "the interpreter has no threads (it died)");
    c->verified = r == 0;
    return r;
}

long runner_child_rss_kb(pid_t pid)
{
    char path[64], text[STATUS_MAX];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    const char *p = strstr(text, "VmHWM:");
    if (!p)
        p = strstr(text, "VmRSS:");
    return p ? strtol(p + 6, NULL, 10) : 0;
}

/* The job pipe carries the token line, then the arguments; *off counts both. */
static void write_args(struct runner_child *c, const char *args, size_t len, size_t *off)
{
    char head[sizeof(c->token) + 1];
    size_t hl = (size_t)snprintf(head, sizeof(head), "%s\n", c->token);
    const char *from = *off < hl ? head + *off : args + (*off - hl);
    ssize_t n = write(c->job_w, from, *off < hl ? hl - *off : hl + len - *off);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n > 0)
        *off += (size_t)n;
    if (n < 0 || *off == hl + len) /* done, or the child is gone (EPIPE) */
        c->job_w = close_keep_errno(c->job_w);
}

size_t runner_utf8_boundary(const char *data, size_t len)
{
    const unsigned char *s = (const unsigned char *)data;
    for (size_t back = 1; back <= 4 && back <= len; back++) {
        unsigned char b = s[len - back];
        if (b < 0x80)
            return len;
        if (b >= 0xC0) {
            size_t need = b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
            return back >= need ? len : len - back;
        }
    }
    return len;
}

/* Sends what stream i (0 stdout, 1 stderr) holds unsent; all of it when
 * final, else up to the last complete UTF-8 character. */
static void stream_flush(struct runner_watch *w, int i, int final)
{
    struct runner_stream *s = &w->stream;
    const struct sg_buf *b = i == 0 ? &w->out : &w->err;
    size_t end = b->len;
    if (!b->data || s->sent[i] >= end) {
        s->since[i] = 0;
        return;
    }
    if (!final)
        end = s->sent[i] + runner_utf8_boundary(b->data + s->sent[i], end - s->sent[i]);
    while (s->sent[i] < end) {
        size_t n = end - s->sent[i];
        if (n > RUNNER_STREAM_FRAME_MAX) {
            n = runner_utf8_boundary(b->data + s->sent[i], RUNNER_STREAM_FRAME_MAX);
            n = n ? n : RUNNER_STREAM_FRAME_MAX;
        }
        s->fn(s->ud, PIPE_NAMES[i], b->data + s->sent[i], n);
        s->sent[i] += n;
    }
    s->since[i] = s->sent[i] < b->len ? now_ms() : 0;
}

/* New bytes arrived in stream i (from offset old): a newline sends them. */
void runner_watch_stream_note(struct runner_watch *w, int i, size_t old)
{
    const struct sg_buf *b = i == 0 ? &w->out : &w->err;
    if (!w->stream.fn || b->len == old)
        return;
    if (!w->stream.since[i])
        w->stream.since[i] = now_ms();
    if (memchr(b->data + old, '\n', b->len - old))
        stream_flush(w, i, 0);
}

void runner_watch_stream_finish(struct runner_watch *w)
{
    for (int i = 0; w->stream.fn && i < 2; i++)
        stream_flush(w, i, 1);
}

/* Streams whose oldest unsent byte waited RUNNER_STREAM_FLUSH_MS go now;
 * returns how long until the next one is due (ms; -1 none). */
double runner_watch_stream_tick(struct runner_watch *w)
{
    double next = -1;
    for (int i = 0; w->stream.fn && i < 2; i++) {
        if (!w->stream.since[i])
            continue;
        double due = w->stream.since[i] + RUNNER_STREAM_FLUSH_MS - now_ms();
        if (due <= 0)
            stream_flush(w, i, 0);
        else if (next < 0 || due < next)
            next = due;
    }
    return next;
}

/* Handles what poll() reported for the three output pipes. */
static void on_pipes(struct runner_child *c, struct runner_watch *w, const struct pollfd *p,
                     const int *slot)
{
    int *fds[] = {&c->out_r, &c->err_r, &c->res_r};
    struct sg_buf *bufs[] = {&w->out, &w->err, &w->res};
    for (int i = 0; i < 3 && !w->stop; i++) {
        if (slot[i] < 0 || !(p[slot[i]].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        size_t old = bufs[i]->len;
        int r = pump(fds[i], bufs[i]);
        if (i < 2)
            runner_watch_stream_note(w, i, old);
        if (r == -E2BIG) {
            w->stop = RUNNER_OUTPUT_LIMIT;
            w->limit_hit = PIPE_NAMES[i];
        } else if (i == 2) {
            report_filter(c, w, c->res_r >= 0);
            if (w->reported)
                w->stop = RUNNER_REPORTED;
        }
    }
}

char runner_stat_state(const char *stat)
{
    const char *close_paren = strrchr(stat, ')'); /* the name may hold anything */
    if (!close_paren || close_paren[1] != ' ' || !close_paren[2])
        return '?';
    return close_paren[2];
}

int runner_child_stuck(pid_t pid, int *ticks)
{
    char path[64], text[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_status(path, text, sizeof(text)) < 0 || runner_stat_state(text) != 'Z') {
        *ticks = 0;
        return 0;
    }
    return ++*ticks >= RUNNER_STUCK_CHECKS;
}

/* The parent's own reading of the child's memory, kept at its highest. */
static void sample_rss(const struct runner_child *c, struct runner_watch *w)
{
    long rss = runner_child_rss_kb(c->pid);
    if (rss > w->max_rss_kb)
        w->max_rss_kb = rss;
}

int runner_watch_check_stuck(struct runner_child *c, struct runner_watch *w)
{
    double now = now_ms();
    if (now < w->next_stuck_check)
        return 0;
    w->next_stuck_check = now + RUNNER_STUCK_CHECK_MS;
    sample_rss(c, w);
    if (!runner_child_stuck(c->pid, &w->stuck_ticks))
        return 0;
    runner_child_kill(c);
    reap_blocking(c, w);
    w->filter_killed = 1;
    w->stop = RUNNER_EXITED;
    return 1;
}

/* One poll() round; returns once something happened or the deadline passed. */
static void watch_once(struct runner_child *c, int sigfd, const char *args, size_t args_len,
                       size_t *args_off, double deadline, struct runner_watch *w)
{
    struct pollfd p[5];
    int slot[3] = {-1, -1, -1}, n = 0, job_slot = -1;
    const int fds[3] = {c->out_r, c->err_r, c->res_r};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0) {
            slot[i] = n;
            p[n++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        }
    if (c->job_w >= 0) {
        job_slot = n;
        p[n++] = (struct pollfd){.fd = c->job_w, .events = POLLOUT};
    }
    p[n++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
    double left = deadline - now_ms();
    if (left <= 0) {
        w->stop = RUNNER_TIMEOUT;
        return;
    }
    double due = runner_watch_stream_tick(w);
    if (due >= 0 && due < left)
        left = due;
    if (left > RUNNER_STUCK_CHECK_MS)
        left = RUNNER_STUCK_CHECK_MS;
    if (poll(p, (nfds_t)n, (int)left + 1) <= 0) {
        runner_watch_check_stuck(c, w);
        return; /* EINTR or the deadline: the next round decides */
    }
    if (job_slot >= 0 && p[job_slot].revents)
        write_args(c, args, args_len, args_off);
    on_pipes(c, w, p, slot);
    if (!w->stop && p[n - 1].revents) {
        char sink[64];
        while (read(sigfd, sink, sizeof(sink)) > 0)
            ;
        reap(c, w);
        if (w->reaped)
            w->stop = RUNNER_EXITED;
    }
    if (!w->stop)
        runner_watch_check_stuck(c, w);
}

void runner_watch_run(struct runner_child *child, int sigchld_fd, const char *args, size_t args_len,
                      size_t max_output, unsigned timeout_ms, runner_stream_fn fn, void *ud,
                      struct runner_watch *ret_watch)
{
    struct runner_watch *w = ret_watch;
    *w = (struct runner_watch){.stream = {.fn = fn, .ud = ud}};
    sg_buf_init(&w->out, max_output);
    sg_buf_init(&w->err, max_output);
    sg_buf_init(&w->res, max_output);
    const int fds[] = {child->job_w, child->out_r, child->err_r, child->res_r};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    double started = now_ms(), deadline = started + timeout_ms;
    /* the first /proc reading a check away: a short job pays for none */
    w->next_stuck_check = started + RUNNER_STUCK_CHECK_MS;
    size_t args_off = 0;
    reap(child, w); /* it may have died before the job came: no SIGCHLD is pending then */
    if (w->reaped)
        w->stop = RUNNER_EXITED;
    while (!w->stop)
        watch_once(child, sigchld_fd, args, args_len, &args_off, deadline, w);
    if (w->stop == RUNNER_REPORTED || w->stop == RUNNER_EXITED)
        drain(child, w);
    w->elapsed_ms = now_ms() - started;
    runner_watch_stream_finish(w);
    /* Status, signal and memory as the kernel shows them to a parent: what
     * the report says of them is the program's to forge. After a report the
     * child is killed without waiting for its teardown (5-7 ms under gVisor):
     * its memory is this process's last /proc reading, kept at the highest
     * seen every RUNNER_STUCK_CHECK_MS while it ran. Otherwise it is reaped
     * (wait4's peak). */
    if (!w->reaped)
        reap(child, w);
    if (!w->reaped && w->stop == RUNNER_REPORTED) {
        sample_rss(child, w);
        runner_child_kill(child);
    } else if (!w->reaped) {
        runner_child_kill(child);
        reap_blocking(child, w);
    }
}

void runner_watch_free(struct runner_watch *watch)
{
    if (!watch)
        return;
    sg_buf_free(&watch->out);
    sg_buf_free(&watch->err);
    sg_buf_free(&watch->res);
}
