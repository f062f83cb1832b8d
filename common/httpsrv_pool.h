/* httpsrv_pool.h - httpsrv's internals: the bounded worker pool that runs
 * blocking handlers. Not for use outside httpsrv.c.
 */
#ifndef SG_HTTPSRV_POOL_H
#define SG_HTTPSRV_POOL_H

#include <pthread.h>

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

#endif
