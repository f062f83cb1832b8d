/* sandbox_runsc_io.c - the processes of the direct backend (sandbox_runsc.h):
 * bounded runs of the runsc CLI and of tar, and one sandbox's `runsc run`
 * with its stdio relayed as Docker's multiplexed attach stream. */
#include "sandbox_runsc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"

extern char **environ;

#define IO_CHUNK 32768

/* argv[0] with stdin, stdout, stderr on the given descriptors (-1: /dev/null),
 * nothing else inherited, signals at their defaults and unblocked. */
int srs_spawn(const char *const argv[], int in, int out, int errfd, pid_t *ret_pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGTERM);
    sigaddset(&dfl, SIGINT);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const int fds[3] = {in, out, errfd};
    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0)
            posix_spawn_file_actions_adddup2(&fa, fds[i], i);
        else
            posix_spawn_file_actions_addopen(&fa, i, "/dev/null", i ? O_WRONLY : O_RDONLY, 0);
    }
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    union {
        const char *const *c;
        char *const *m;
    } args = {.c = argv}; /* posix_spawn does not write them */
    int r = -posix_spawn(ret_pid, argv[0], &fa, &at, args.m, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return r;
}

/* Wait for pid until deadline (ms, attach_now_ms clock), then SIGKILL it. */
int srs_reap(pid_t pid, double deadline, int *ret_status)
{
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return -errno;
        if (attach_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return -ETIMEDOUT;
        }
        usleep(5000);
    }
    *ret_status = status;
    return 0;
}

int srs_exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_bounded(const char *const argv[], int in, struct sg_buf *out, bool both,
                       long timeout_ms, int *ret_code)
{
    int p[2] = {-1, -1};
    pid_t pid = -1;
    if (out && pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    int r = srs_spawn(argv, in, out ? p[1] : -1, out && both ? p[1] : -1, &pid);
    if (out)
        close(p[1]);
    double deadline = attach_now_ms() + (double)timeout_ms;
    while (r == 0 && out) {
        int left = (int)(deadline - attach_now_ms());
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break; /* srs_reap ends it */
        char tmp[4096];
        ssize_t got = read(p[0], tmp, sizeof(tmp));
        if (got <= 0)
            break;
        size_t room = out->cap - out->len;
        sg_buf_append(out, tmp, (size_t)got < room ? (size_t)got : room);
    }
    if (out)
        close(p[0]);
    int status = 0;
    if (r == 0 && (r = srs_reap(pid, deadline, &status)) == 0)
        *ret_code = srs_exit_code(status);
    return r;
}

int srs_run(const char *const argv[], int in, struct sg_buf *out, long timeout_ms, int *ret_code)
{
    return run_bounded(argv, in, out, false, timeout_ms, ret_code);
}

int srs_run_both(const char *const argv[], struct sg_buf *out, long timeout_ms, int *ret_code)
{
    return run_bounded(argv, -1, out, true, timeout_ms, ret_code);
}

/* One frame of the attach stream: {stream, 0, 0, 0, size32be} + payload. */
static int frame_out(int sock, int stream, const char *data, size_t len)
{
    unsigned char h[8] = {(unsigned char)stream,
                          0,
                          0,
                          0,
                          (unsigned char)(len >> 24),
                          (unsigned char)(len >> 16),
                          (unsigned char)(len >> 8),
                          (unsigned char)len};
    if (send(sock, h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
        return -1;
    while (len > 0) {
        ssize_t n = send(sock, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* stdin: from the executor's end to the runner; a closed end stops it. */
static void relay_in(struct sandbox_runsc_box *b, char *buf, bool *sock_open)
{
    ssize_t n = recv(b->sock, buf, IO_CHUNK, 0);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        *sock_open = false;
        close_fd(&b->in);
        return;
    }
    for (ssize_t off = 0; off < n && b->in >= 0;) {
        ssize_t w = write(b->in, buf + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close_fd(&b->in); /* the runner is gone: its stream tells */
            break;
        }
        off += w;
    }
}

static void relay_out(struct sandbox_runsc_box *b, int *fd, int stream, char *buf, bool sock_open)
{
    ssize_t n = read(*fd, buf, IO_CHUNK);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        close_fd(fd);
        return;
    }
    if (sock_open)
        frame_out(b->sock, stream, buf, (size_t)n); /* a gone reader: keep draining */
}

/* A restored sandbox's exit status: `runsc wait` prints
 * {"id":"...","exitStatus":N} (128+N for a signal, as runsc run exits); else
 * (it failed) its own exit code, which is not 0. */
static int wait_status(int fd, int fallback)
{
    char text[512];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof(text) - 1 && (got = read(fd, text + n, sizeof(text) - 1 - n)) > 0)
        n += (size_t)got;
    text[n] = '\0';
    close(fd);
    const char *k = strstr(text, "\"exitStatus\":");
    char *end = NULL;
    long v = k ? strtol(k + 13, &end, 10) : -1;
    return k && end != k + 13 && v >= 0 && v <= 255 ? (int)v : (fallback ? fallback : 128 + 9);
}

static void *relay_main(void *arg)
{
    struct sandbox_runsc_box *b = arg;
    static __thread char buf[IO_CHUNK];
    bool sock_open = true;
    while (b->out >= 0 || b->err >= 0) {
        struct pollfd p[3] = {{.fd = b->out, .events = POLLIN},
                              {.fd = b->err, .events = POLLIN},
                              {.fd = sock_open ? b->sock : -1, .events = POLLIN}};
        if (poll(p, 3, -1) < 0 && errno != EINTR)
            break;
        if (p[2].revents)
            relay_in(b, buf, &sock_open);
        if (p[0].revents)
            relay_out(b, &b->out, ATTACH_STDOUT, buf, sock_open);
        if (p[1].revents)
            relay_out(b, &b->err, ATTACH_STDERR, buf, sock_open);
    }
    close_fd(&b->in);
    close_fd(&b->out);
    close_fd(&b->err);
    int status = 0;
    while (waitpid(b->pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = srs_exit_code(status);
    if (b->wait_out >= 0)
        code = wait_status(b->wait_out, code);
    b->wait_out = -1;
    /* The exit status first, then the end of the stream the job reads. */
    pthread_mutex_lock(&b->mu);
    b->exit_code = code;
    b->exited = true;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
    close_fd(&b->sock);
    return NULL;
}

/* The box holds the executor's ends of the runner's stdio (and a restored
 * sandbox's wait output); r is how its start went. Start the relay on sp
 * (*ret_fd: the executor's end of the stream) or, on any failure, kill the
 * process the relay would have reaped and close every end. */
static int start_relay(struct sandbox_runsc_box *b, int r, int sp[2], int *ret_fd)
{
    b->sock = sp[1];
    if (r == 0 && (r = -pthread_create(&b->relay, NULL, relay_main, b)) < 0) {
        kill(b->pid, SIGKILL);
        waitpid(b->pid, NULL, 0);
    }
    if (r < 0) {
        close_fd(&sp[0]);
        close_fd(&b->in);
        close_fd(&b->out);
        close_fd(&b->err);
        close_fd(&b->wait_out);
        close_fd(&b->sock);
        return r;
    }
    b->relay_running = true;
    *ret_fd = sp[0];
    return 0;
}

/* The stream's socket pair and the runner's three stdio pipes. 0 or -errno
 * (whatever was opened is still closed by the caller's hand-over). */
static int open_stdio(int sp[2], int in[2], int out[2], int err[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 || pipe2(in, O_CLOEXEC) < 0 ||
        pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
        return -errno;
    return 0;
}

/* Once the sandbox holds the runner's ends (or its start failed): close them
 * here and give the box the executor's ends. */
static void hand_over_stdio(struct sandbox_runsc_box *b, int in[2], int out[2], int err[2])
{
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    b->in = in[1];
    b->out = out[0];
    b->err = err[0];
}

/* Spawn argv with its stdio on three pipes and start the relay; *ret_fd is
 * the executor's end of the stream. On failure nothing is left running. */
int srs_start(struct sandbox_runsc_box *b, const char *const argv[], int *ret_fd)
{
    int sp[2] = {-1, -1}, in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    int r = open_stdio(sp, in, out, err);
    if (r == 0 && (r = srs_spawn(argv, in[0], out[1], err[1], &b->pid)) == 0)
        b->pidfd = pidfd_open(b->pid, 0); /* before the relay can reap it */
    hand_over_stdio(b, in, out, err);
    return start_relay(b, r, sp, ret_fd);
}

/* Bounded: one runsc call whose exit must be 0; its output into errbuf. */
static int run_ok(const char *const argv[], long timeout_ms, struct sg_buf *errbuf)
{
    int code = -1;
    int r = srs_run_both(argv, errbuf, timeout_ms, &code);
    if (r == 0 && code != 0)
        r = -EIO;
    if (r < 0)
        sg_buf_printf(errbuf, " (runsc: %s, exit %d)", strerror(-r), code);
    return r;
}

/* `runsc create` with the runner's stdio on in[0], out[1], err[1]. */
static int create_on(const char *const create[], const int in[2], const int out[2],
                     const int err[2], struct sg_buf *errbuf)
{
    pid_t pid = -1;
    int status = 0;
    int r = srs_spawn(create, in[0], out[1], err[1], &pid);
    if (r == 0)
        r = srs_reap(pid, attach_now_ms() + SANDBOX_RUNSC_CMD_TIMEOUT_MS, &status);
    if (r == 0 && srs_exit_code(status) != 0)
        r = -EIO;
    if (r < 0)
        sg_buf_printf(errbuf, "runsc create failed: %s (exit %d)", strerror(-r),
                      srs_exit_code(status));
    return r;
}

int srs_start_restored(struct sandbox_runsc_box *b, const char *const create[],
                       const char *const restore[], const char *const wait[], int *ret_fd,
                       struct sg_buf *errbuf)
{
    int sp[2] = {-1, -1}, in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    int wo[2] = {-1, -1};
    bool created = false;
    int r = open_stdio(sp, in, out, err);
    if (r == 0 && pipe2(wo, O_CLOEXEC) < 0)
        r = -errno;
    if (r == 0)
        created = (r = create_on(create, in, out, err, errbuf)) == 0;
    hand_over_stdio(b, in, out, err); /* the sandbox holds the runner's ends now */
    if (r == 0)
        r = run_ok(restore, SANDBOX_RUNSC_CHECKPOINT_TIMEOUT_MS, errbuf);
    if (r == 0 && (r = srs_spawn(wait, -1, wo[1], -1, &b->pid)) == 0)
        b->pidfd = pidfd_open(b->pid, 0);
    close_fd(&wo[1]);
    b->wait_out = wo[0];
    if ((r = start_relay(b, r, sp, ret_fd)) < 0 && created)
        srs_delete(b->rs, b->id);
    return r;
}
