#include "httpsrv_pool.h"

#include <errno.h>
#include <stdlib.h>

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
