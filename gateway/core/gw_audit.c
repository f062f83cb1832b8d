#include "gw_audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "gw_util.h"
#include "log.h"

#define BATCH_MAX 64
#define RETRY_NS 1000000000ull /* reopen an unwritable log at most once a second */
/* Once woken for a line, the writer waits this long for more before it
 * writes: under load one wake-up and one writev() carry a batch instead of
 * one line each (a context switch and a system call per request). Lines
 * reach the file at most this much later. */
#define LINGER_NS 2000000l

struct line {
    char *data; /* owned, ends with '\n' */
    size_t len;
};

struct gw_audit {
    char *path; /* "" disabled, "-" stdout */
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* writer: lines queued, reopen or stop */
    pthread_cond_t drained; /* flushers: queue became empty */
    struct line *ring;
    size_t cap, head, count;
    int busy; /* writer holds a batch outside the lock */
    int stop, reopen;
    pthread_t thread;
    int fd;
    uint64_t last_open_ns;
    atomic_uint_fast64_t written, dropped, write_errors;
    atomic_int writable;
    gw_audit_writev_fn writev_fn; /* writev, or a test's stand-in */
    int torn;                     /* a cut line's fragment could not be removed: end it first */
};

static int is_stdout(const struct gw_audit *a)
{
    return strcmp(a->path, "-") == 0;
}

static void try_open(struct gw_audit *a)
{
    if (is_stdout(a)) {
        a->fd = STDOUT_FILENO;
        return;
    }
    a->last_open_ns = gw_now_ns();
    a->fd = open(a->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (a->fd < 0) {
        if (atomic_exchange(&a->writable, 0))
            sg_log(SG_LOG_ERROR, "audit_unwritable", "path=%s error=\"%s\"", a->path,
                   strerror(errno));
    } else {
        atomic_store(&a->writable, 1);
    }
}

static void close_fd(struct gw_audit *a)
{
    if (a->fd >= 0 && !is_stdout(a))
        close(a->fd);
    a->fd = -1;
}

/* A write failed after `partial` bytes of a line reached the file (ENOSPC
 * cuts a line anywhere). Take them back, so that every line in the file is
 * whole or absent; where that is impossible (a pipe, a failing truncate), the
 * next write starts with a newline so no record is glued to the fragment. */
static void drop_fragment(struct gw_audit *a, size_t partial)
{
    if (!partial)
        return;
    off_t end = lseek(a->fd, 0, SEEK_END);
    if (end >= (off_t)partial && ftruncate(a->fd, end - (off_t)partial) == 0)
        return;
    a->torn = 1;
    sg_log(SG_LOG_ERROR, "audit_line_cut", "path=%s bytes=%zu error=\"%s\"", a->path, partial,
           strerror(errno));
}

/* The newline that ends a fragment left by drop_fragment(); 0 once written. */
static int end_fragment(struct gw_audit *a)
{
    if (!a->torn)
        return 0;
    struct iovec nl = {.iov_base = (void *)(uintptr_t) "\n", .iov_len = 1};
    if (a->writev_fn(a->fd, &nl, 1) != 1)
        return -1;
    a->torn = 0;
    return 0;
}

/* Write lines[0..n) with writev, finishing partial writes; returns lines written. */
static size_t write_batch(struct gw_audit *a, struct line *lines, size_t n)
{
    if (end_fragment(a) < 0) {
        close_fd(a);
        return 0;
    }
    struct iovec iov[BATCH_MAX];
    size_t done = 0, off = 0; /* lines fully written; bytes of lines[done] written */
    while (done < n) {
        size_t k = 0;
        for (size_t i = done; i < n; i++, k++) {
            iov[k].iov_base = lines[i].data + (i == done ? off : 0);
            iov[k].iov_len = lines[i].len - (i == done ? off : 0);
        }
        ssize_t w = a->writev_fn(a->fd, iov, (int)k);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (atomic_exchange(&a->writable, 0))
                sg_log(SG_LOG_ERROR, "audit_write_failed", "path=%s error=\"%s\"", a->path,
                       w < 0 ? strerror(errno) : "short write");
            drop_fragment(a, off);
            close_fd(a);
            return done;
        }
        size_t left = (size_t)w;
        while (done < n && left >= lines[done].len - off) {
            left -= lines[done].len - off;
            off = 0;
            done++;
        }
        off += left;
    }
    atomic_store(&a->writable, 1);
    return done;
}

static void handle_batch(struct gw_audit *a, struct line *lines, size_t n)
{
    if (a->fd < 0 && (gw_now_ns() - a->last_open_ns >= RETRY_NS || a->last_open_ns == 0))
        try_open(a);
    size_t ok = a->fd >= 0 ? write_batch(a, lines, n) : 0;
    atomic_fetch_add(&a->written, ok);
    atomic_fetch_add(&a->write_errors, n - ok);
    for (size_t i = 0; i < n; i++)
        free(lines[i].data);
}

static void *writer_main(void *arg)
{
    struct gw_audit *a = arg;
    struct line batch[BATCH_MAX];
    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->count && !a->stop && !a->reopen) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1;
            if (pthread_cond_timedwait(&a->wake, &a->lock, &ts) == ETIMEDOUT && a->fd < 0)
                break; /* retry opening so /readyz recovers without traffic */
        }
        if (a->reopen || (!a->count && a->fd < 0 && !a->stop)) {
            a->reopen = 0;
            close_fd(a);
            try_open(a);
        }
        if (!a->count && a->stop)
            break;
        if (a->count < BATCH_MAX && !a->stop && !a->reopen) {
            struct timespec linger = {0, LINGER_NS};
            pthread_mutex_unlock(&a->lock);
            nanosleep(&linger, NULL);
            pthread_mutex_lock(&a->lock);
        }
        size_t n = 0;
        while (a->count && n < BATCH_MAX) {
            batch[n++] = a->ring[a->head];
            a->head = (a->head + 1) % a->cap;
            a->count--;
        }
        a->busy = n > 0;
        pthread_mutex_unlock(&a->lock);
        if (n)
            handle_batch(a, batch, n);
        pthread_mutex_lock(&a->lock);
        a->busy = 0;
        if (!a->count)
            pthread_cond_broadcast(&a->drained);
    }
    pthread_cond_broadcast(&a->drained);
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

int gw_audit_open(const char *path, size_t queue_max, struct gw_audit **ret, struct sg_error *err)
{
    struct gw_audit *a = calloc(1, sizeof(*a));
    if (!a || !(a->path = strdup(path ? path : "")) ||
        !(a->ring = calloc(queue_max ? queue_max : 1, sizeof(*a->ring)))) {
        if (a)
            free(a->path);
        free(a);
        return sg_error_set(err, -ENOMEM, "out of memory");
    }
    a->cap = queue_max ? queue_max : 1;
    a->fd = -1;
    a->writev_fn = writev;
    atomic_store(&a->writable, 1);
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->wake, NULL);
    pthread_cond_init(&a->drained, NULL);
    if (a->path[0]) {
        try_open(a);
        int r = pthread_create(&a->thread, NULL, writer_main, a);
        if (r) {
            a->path[0] = '\0';
            gw_audit_close(a);
            return sg_error_set(err, -r, "audit: cannot start writer: %s", strerror(r));
        }
    }
    *ret = a;
    return 0;
}

void gw_audit_write(struct gw_audit *a, const char *line, size_t len)
{
    if (!a || !a->path[0])
        return;
    char *copy = len < GW_AUDIT_LINE_MAX ? malloc(len + 1) : NULL;
    if (!copy) {
        atomic_fetch_add(&a->dropped, 1);
        return;
    }
    memcpy(copy, line, len);
    copy[len] = '\n';
    pthread_mutex_lock(&a->lock);
    if (a->count >= a->cap || a->stop) {
        pthread_mutex_unlock(&a->lock);
        free(copy);
        atomic_fetch_add(&a->dropped, 1);
        return;
    }
    a->ring[(a->head + a->count) % a->cap] = (struct line){copy, len + 1};
    a->count++;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

void gw_audit_reopen(struct gw_audit *a)
{
    if (!a || !a->path[0])
        return;
    pthread_mutex_lock(&a->lock);
    a->reopen = 1;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

void gw_audit_get_stats(struct gw_audit *a, struct gw_audit_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->writable = 1;
    if (!a)
        return;
    ret->written = atomic_load(&a->written);
    ret->dropped = atomic_load(&a->dropped);
    ret->write_errors = atomic_load(&a->write_errors);
    ret->writable = atomic_load(&a->writable);
    pthread_mutex_lock(&a->lock);
    ret->queued = a->count;
    pthread_mutex_unlock(&a->lock);
}

int gw_audit_flush(struct gw_audit *a, unsigned timeout_ms)
{
    if (!a || !a->path[0])
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&a->lock);
    while ((a->count || a->busy) &&
           pthread_cond_timedwait(&a->drained, &a->lock, &ts) != ETIMEDOUT) {
    }
    int r = (a->count || a->busy) ? -ETIMEDOUT : 0;
    pthread_mutex_unlock(&a->lock);
    return r;
}

void gw_audit_close(struct gw_audit *a)
{
    if (!a)
        return;
    if (a->path[0]) {
        gw_audit_flush(a, 5000);
        pthread_mutex_lock(&a->lock);
        a->stop = 1;
        pthread_cond_signal(&a->wake);
        pthread_mutex_unlock(&a->lock);
        pthread_join(a->thread, NULL);
    }
    for (size_t i = 0; i < a->count; i++)
        free(a->ring[(a->head + i) % a->cap].data);
    close_fd(a);
    pthread_mutex_destroy(&a->lock);
    pthread_cond_destroy(&a->wake);
    pthread_cond_destroy(&a->drained);
    free(a->ring);
    free(a->path);
    free(a);
}

void gw_audit_set_writer(struct gw_audit *a, gw_audit_writev_fn fn)
{
    pthread_mutex_lock(&a->lock);
    while (a->busy || a->count)
        pthread_cond_wait(&a->drained, &a->lock);
    a->writev_fn = fn ? fn : writev;
    pthread_mutex_unlock(&a->lock);
}
