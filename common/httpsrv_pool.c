#include "httpsrv_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "sg_time.h"

#define SWEEP_INTERVAL_MS 250u

struct sg_workq {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    void (*run)(void *);
    void **ring; /* max_threads + max_queued slots */
    unsigned cap, head, count;
    unsigned reserved; /* reserved + queued + running */
    unsigned threads, idle, max_threads;
    pthread_t *tids;
    int stop;
};

static void *worker_main(void *arg)
{
    struct sg_workq *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->count && !q->stop) {
            q->idle++;
            pthread_cond_wait(&q->wake, &q->lock);
            q->idle--;
        }
        if (!q->count)
            break; /* stopping and nothing left */
        void *task = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        pthread_mutex_unlock(&q->lock);
        q->run(task);
        pthread_mutex_lock(&q->lock);
        q->reserved--;
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

struct sg_workq *sg_workq_new(unsigned max_threads, unsigned max_queued, void (*run)(void *))
{
    struct sg_workq *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->max_threads = max_threads ? max_threads : 1;
    q->cap = q->max_threads + max_queued;
    q->ring = calloc(q->cap, sizeof(*q->ring));
    q->tids = calloc(q->max_threads, sizeof(*q->tids));
    if (!q->ring || !q->tids) {
        free(q->ring);
        free(q->tids);
        free(q);
        return NULL;
    }
    q->run = run;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->wake, NULL);
    return q;
}

int sg_workq_reserve(struct sg_workq *q)
{
    pthread_mutex_lock(&q->lock);
    int ok = !q->stop && q->reserved < q->cap;
    if (ok)
        q->reserved++;
    pthread_mutex_unlock(&q->lock);
    return ok ? 0 : -EBUSY;
}

void sg_workq_push(struct sg_workq *q, void *task)
{
    pthread_mutex_lock(&q->lock);
    q->ring[(q->head + q->count) % q->cap] = task;
    q->count++;
    /* A thread more when every one is taken; when none can start, the queued
     * task waits for a running one (the reservation bounded the queue). */
    if (q->idle < q->count && q->threads < q->max_threads &&
        pthread_create(&q->tids[q->threads], NULL, worker_main, q) == 0)
        q->threads++;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
}

unsigned sg_workq_pending(struct sg_workq *q)
{
    pthread_mutex_lock(&q->lock);
    unsigned n = q->reserved;
    pthread_mutex_unlock(&q->lock);
    return n;
}

void sg_workq_free(struct sg_workq *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->stop = 1;
    pthread_cond_broadcast(&q->wake);
    unsigned n = q->threads;
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < n; i++)
        pthread_join(q->tids[i], NULL);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    free(q->ring);
    free(q->tids);
    free(q);
}

/* Shut down (not close: the event loop owns the fd) every connection past
 * its deadline. Runs under r->lock, which also keeps each fd open: a
 * connection leaves the list before its fd is closed. */
static void sweep(struct sg_conn_reg *r, uint64_t now)
{
    for (struct sg_conn_rec *c = r->head.next; c != &r->head; c = c->next) {
        if (c->busy || c->cut || now - c->since_ms < r->deadline_ms)
            continue;
        shutdown(c->fd, SHUT_RDWR);
        c->cut = 1;
        atomic_fetch_add(&r->cut_total, 1);
    }
}

static void *sweeper_main(void *arg)
{
    struct sg_conn_reg *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)SWEEP_INTERVAL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r->wake, &r->lock, &ts);
        sweep(r, sg_time_mono_ms());
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int sg_conn_reg_init(struct sg_conn_reg *r, uint64_t deadline_ms)
{
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    r->head.next = r->head.prev = &r->head;
    atomic_init(&r->open, 0);
    atomic_init(&r->cut_total, 0);
    r->deadline_ms = deadline_ms;
    r->stop = 0;
    int e = pthread_create(&r->thread, NULL, sweeper_main, r);
    r->started = e == 0;
    return -e;
}

void sg_conn_reg_destroy(struct sg_conn_reg *r)
{
    if (r->started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
    }
    while (r->head.next != &r->head)
        sg_conn_reg_remove(r, r->head.next);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
}

struct sg_conn_rec *sg_conn_reg_add(struct sg_conn_reg *r, int fd)
{
    struct sg_conn_rec *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->fd = fd;
    c->since_ms = sg_time_mono_ms();
    pthread_mutex_lock(&r->lock);
    c->next = r->head.next;
    c->prev = &r->head;
    r->head.next->prev = c;
    r->head.next = c;
    pthread_mutex_unlock(&r->lock);
    return c;
}

void sg_conn_reg_remove(struct sg_conn_reg *r, struct sg_conn_rec *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&r->lock);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    pthread_mutex_unlock(&r->lock);
    free(c);
}

void sg_conn_reg_mark(struct sg_conn_reg *r, struct sg_conn_rec *c, int busy)
{
    if (!c)
        return;
    pthread_mutex_lock(&r->lock);
    c->busy = busy;
    if (!busy)
        c->since_ms = sg_time_mono_ms();
    pthread_mutex_unlock(&r->lock);
}
