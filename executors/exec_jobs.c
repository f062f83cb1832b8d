#include "exec_jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sg_time.h"

struct exec_job_slot {
    int used;
    int cancelled;
    int fd; /* eventfd */
    char id[EXEC_JOB_ID_MAX + 1];
};

struct early {
    char id[EXEC_JOB_ID_MAX + 1];
    uint64_t until_ns;
};

struct exec_jobs {
    pthread_mutex_t lock;
    unsigned n;
    struct exec_job_slot *slots;
    struct early early[EXEC_JOBS_EARLY_MAX];
    unsigned early_next; /* ring: the oldest is overwritten */
};

int exec_jobs_new(unsigned max, struct exec_jobs **ret)
{
    struct exec_jobs *t = calloc(1, sizeof(*t));
    if (!t || !(t->slots = calloc(max ? max : 1, sizeof(*t->slots)))) {
        free(t);
        return -ENOMEM;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->n = max ? max : 1;
    for (unsigned i = 0; i < t->n; i++)
        t->slots[i].fd = -1;
    for (unsigned i = 0; i < t->n; i++) {
        if ((t->slots[i].fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
            int r = -errno;
            exec_jobs_free(t);
            return r;
        }
    }
    *ret = t;
    return 0;
}

void exec_jobs_free(struct exec_jobs *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->n; i++)
        if (t->slots[i].fd >= 0)
            close(t->slots[i].fd);
    pthread_mutex_destroy(&t->lock);
    free(t->slots);
    free(t);
}

static void signal_slot(struct exec_job_slot *s)
{
    uint64_t one = 1;
    s->cancelled = 1;
    ssize_t n = write(s->fd, &one, sizeof(one)); /* a full counter is signalled anyway */
    (void)n;
}

/* Locked: take the remembered early cancel of id, if any. */
static int take_early(struct exec_jobs *t, const char *id)
{
    uint64_t now = sg_time_mono_ns();
    for (unsigned i = 0; i < EXEC_JOBS_EARLY_MAX; i++) {
        struct early *e = &t->early[i];
        if (e->id[0] && e->until_ns > now && strcmp(e->id, id) == 0) {
            e->id[0] = '\0';
            return 1;
        }
    }
    return 0;
}

struct exec_job_slot *exec_jobs_add(struct exec_jobs *t, const char *job_id)
{
    struct exec_job_slot *s = NULL;
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < t->n && !s; i++)
        if (!t->slots[i].used)
            s = &t->slots[i];
    if (s) {
        uint64_t drop;
        while (read(s->fd, &drop, sizeof(drop)) > 0) /* a stale signal of the slot's last job */
            ;
        s->used = 1;
        s->cancelled = 0;
        snprintf(s->id, sizeof(s->id), "%s", job_id);
        if (take_early(t, job_id))
            signal_slot(s);
    }
    pthread_mutex_unlock(&t->lock);
    return s;
}

int exec_job_cancel_fd(const struct exec_job_slot *s)
{
    return s ? s->fd : -1;
}

int exec_job_cancelled(const struct exec_job_slot *s)
{
    return s && s->cancelled;
}

void exec_jobs_remove(struct exec_jobs *t, struct exec_job_slot *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&t->lock);
    s->used = 0;
    s->id[0] = '\0';
    pthread_mutex_unlock(&t->lock);
}

int exec_jobs_cancel(struct exec_jobs *t, const char *job_id)
{
    int found = 0;
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < t->n; i++) {
        struct exec_job_slot *s = &t->slots[i];
        if (s->used && strcmp(s->id, job_id) == 0) {
            signal_slot(s);
            found = 1;
        }
    }
    if (!found) {
        struct early *e = &t->early[t->early_next++ % EXEC_JOBS_EARLY_MAX];
        snprintf(e->id, sizeof(e->id), "%s", job_id);
        e->until_ns = sg_time_mono_ns() + (uint64_t)EXEC_JOBS_EARLY_MS * 1000000u;
    }
    pthread_mutex_unlock(&t->lock);
    return found;
}
