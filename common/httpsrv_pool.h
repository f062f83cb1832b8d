/* httpsrv_pool.h - httpsrv's internals: the bounded worker pool that runs
 * blocking handlers, and the register of open connections that enforces the
 * per-request receive deadline. Not for use outside httpsrv.c.
 */
#ifndef SG_HTTPSRV_POOL_H
#define SG_HTTPSRV_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* A task is run once by a worker thread: run(task). The caller owns task. */
struct sg_workq;

/* At most max_threads tasks run at once and max_queued wait; threads start
 * on demand and stay. Returns NULL on out of memory. */
struct sg_workq *sg_workq_new(unsigned max_threads, unsigned max_queued, void (*run)(void *));

/* Reserve a place (running or queued) for one task: 0, or -EBUSY when the
 * pool and its queue are full or the pool is stopping. A reservation must be
 * followed by exactly one sg_workq_push(). */
int sg_workq_reserve(struct sg_workq *q);

/* Queue a task for a reservation taken before. */
void sg_workq_push(struct sg_workq *q, void *task);

/* Tasks reserved, queued or running. */
unsigned sg_workq_pending(struct sg_workq *q);

/* Refuse new reservations, let the queued tasks finish, join the threads and
 * free. NULL is a no-op. */
void sg_workq_free(struct sg_workq *q);

/* One open connection, as the deadline sweeper sees it. */
struct sg_conn_rec {
    struct sg_conn_rec *prev, *next;
    int fd;
    uint64_t since_ms; /* when the current request started arriving */
    int busy;          /* handled or answering: the receive deadline does not apply */
    int cut;           /* already shut down by the sweeper */
};

struct sg_conn_reg {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct sg_conn_rec head; /* list sentinel */
    atomic_uint open;
    uint64_t deadline_ms;
    atomic_uint_fast64_t cut_total;
    pthread_t thread;
    int started, stop;
};

/* Start the sweeper: every connection still receiving a request deadline_ms
 * after it started is shut down (the event loop then closes it). */
int sg_conn_reg_init(struct sg_conn_reg *r, uint64_t deadline_ms);
void sg_conn_reg_destroy(struct sg_conn_reg *r);

/* A new connection on fd; NULL on out of memory (it is then not tracked). */
struct sg_conn_rec *sg_conn_reg_add(struct sg_conn_reg *r, int fd);
/* The connection is closing (before its fd is closed). NULL is a no-op. */
void sg_conn_reg_remove(struct sg_conn_reg *r, struct sg_conn_rec *c);
/* busy = 1: a request is complete and being handled or answered; busy = 0:
 * waiting for the next request, whose deadline starts now. */
void sg_conn_reg_mark(struct sg_conn_reg *r, struct sg_conn_rec *c, int busy);

#endif
