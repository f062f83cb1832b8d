#include "attach.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "docker.h"
#include "json_out.h"
#include "sg_time.h"

double attach_now_ms(void)
{
    return (double)sg_time_mono_ns() / 1e6;
}

int attach_parse(struct attach_parser *p, const void *data, size_t len, attach_sink sink, void *ctx)
{
    const unsigned char *d = data;
    while (len > 0) {
        if (p->remaining == 0 && p->hdr_len < 8) {
            size_t take = 8 - p->hdr_len < len ? 8 - p->hdr_len : len;
            memcpy(p->hdr + p->hdr_len, d, take);
            p->hdr_len += (unsigned)take;
            d += take;
            len -= take;
            if (p->hdr_len < 8)
                return 0;
            if (p->hdr[0] > ATTACH_SYSERR || p->hdr[1] || p->hdr[2] || p->hdr[3])
                return -EPROTO;
            p->stream = p->hdr[0];
            p->remaining = (uint32_t)p->hdr[4] << 24 | (uint32_t)p->hdr[5] << 16 |
                           (uint32_t)p->hdr[6] << 8 | p->hdr[7];
            p->hdr_len = p->remaining ? 8 : 0; /* an empty frame is complete */
            continue;
        }
        size_t take = p->remaining < len ? p->remaining : len;
        int r = sink(ctx, p->stream, (const char *)d, take);
        if (r < 0)
            return r;
        p->remaining -= (uint32_t)take;
        d += take;
        len -= take;
        if (p->remaining == 0)
            p->hdr_len = 0;
    }
    return 0;
}

int attach_parse_status(const char *head, size_t head_len, int *ret_status)
{
    /* "HTTP/1.1 101 UPGRADED" - digits at fixed offsets, then space or CR. */
    if (head_len < 12 || memcmp(head, "HTTP/1.", 7) != 0 || (head[7] != '0' && head[7] != '1') ||
        head[8] != ' ')
        return -EPROTO;
    int s = 0;
    for (int i = 9; i < 12; i++) {
        if (head[i] < '0' || head[i] > '9')
            return -EPROTO;
        s = s * 10 + (head[i] - '0');
    }
    if (head_len > 12 && head[12] != ' ' && head[12] != '\r')
        return -EPROTO;
    *ret_status = s;
    return 0;
}

static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        double left = (double)deadline_ms - attach_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pfd = {.fd = fd, .events = events};
        int n = poll(&pfd, 1, (int)left + 1);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
    }
}

int attach_write_all(int fd, const void *data, size_t len, int64_t deadline_ms)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        int r = wait_fd(fd, POLLOUT, deadline_ms);
        if (r < 0)
            return r;
    }
    return 0;
}

struct attach_out {
    int fd;
    int64_t deadline_ms;
};

static int out_sink(void *ctx, const char *data, size_t len)
{
    const struct attach_out *o = ctx;
    return attach_write_all(o->fd, data, len, o->deadline_ms);
}

int attach_write_json(int fd, const json_t *j, int64_t deadline_ms)
{
    struct attach_out o = {.fd = fd, .deadline_ms = deadline_ms};
    return json_out_dump(j, JSON_COMPACT, "\n", out_sink, &o);
}

/* Read the response head one byte at a time so not a single frame byte is
 * consumed: the stream after the blank line belongs to the frame parser. This
 * is off the request path (the pool attaches while refilling). */
static int read_head(int fd, char *head, size_t cap, size_t *ret_len, int64_t deadline)
{
    size_t n = 0;
    while (n < cap) {
        int r = wait_fd(fd, POLLIN, deadline);
        if (r < 0)
            return r;
        ssize_t got = recv(fd, head + n, 1, MSG_DONTWAIT);
        if (got == 0)
            return -ECONNRESET;
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -errno;
        }
        n++;
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0) {
            *ret_len = n;
            return 0;
        }
    }
    return -E2BIG;
}

static int connect_unix(const char *path, int *ret_fd)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    *ret_fd = fd;
    return 0;
}

int attach_open(const char *socket_path, const char *id, int timeout_ms, int *ret_fd,
                struct sg_error *err)
{
    if (!docker_id_valid(id))
        return sg_error_set(err, -EINVAL, "invalid container id");
    int64_t deadline = (int64_t)attach_now_ms() + timeout_ms;
    int fd = -1;
    int r = connect_unix(socket_path, &fd);
    if (r < 0)
        return sg_error_set(err, -EHOSTDOWN, "dockerd unreachable at %s: %s", socket_path,
                            strerror(-r));
    char req[512], head[ATTACH_HEAD_MAX];
    int n = snprintf(req, sizeof(req),
                     "POST %s/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
                     "Host: docker\r\nContent-Length: 0\r\nConnection: Upgrade\r\n"
                     "Upgrade: tcp\r\n\r\n",
                     DOCKER_API_PREFIX, id);
    size_t head_len = 0;
    int status = 0;
    r = attach_write_all(fd, req, (size_t)n, deadline);
    if (r == 0)
        r = read_head(fd, head, sizeof(head), &head_len, deadline);
    if (r < 0) {
        r = sg_error_set(err, r == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTDOWN, "attach %.12s: %s", id,
                         strerror(-r));
        goto fail;
    }
    if (attach_parse_status(head, head_len, &status) < 0 || (status != 101 && status != 200)) {
        r = sg_error_set(err, -EIO, "attach %.12s: unexpected reply (HTTP %d)", id, status);
        goto fail;
    }
    *ret_fd = fd;
    return 0;
fail:
    close(fd);
    return r;
}
