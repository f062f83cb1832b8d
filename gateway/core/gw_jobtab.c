#include "gw_jobtab.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    int used;
    int cancel; /* a cancel was asked */
    char id[GW_JOBTAB_ID_MAX + 1];
    char tenant[GW_JOBTAB_TENANT_MAX + 1];
    char executor[GW_URL_MAX];
};

struct ended {
    char id[GW_JOBTAB_ID_MAX + 1];
    char tenant[GW_JOBTAB_TENANT_MAX + 1];
};

struct gw_jobtab {
    pthread_mutex_t lock;
    size_t n;
    struct entry *run;
    struct ended *ended; /* ring of GW_JOBTAB_ENDED_MAX */
    size_t ended_next;
};

struct gw_jobtab *gw_jobtab_new(size_t max)
{
    struct gw_jobtab *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->n = max ? max : 1;
    t->run = calloc(t->n, sizeof(*t->run));
    t->ended = calloc(GW_JOBTAB_ENDED_MAX, sizeof(*t->ended));
    if (!t->run || !t->ended) {
        gw_jobtab_free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void gw_jobtab_free(struct gw_jobtab *t)
{
    if (!t)
        return;
    if (t->run && t->ended)
        pthread_mutex_destroy(&t->lock);
    free(t->run);
    free(t->ended);
    free(t);
}

/* Locked: the running entry of id, or NULL. */
static struct entry *find(struct gw_jobtab *t, const char *id)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->run[i].used && strcmp(t->run[i].id, id) == 0)
            return &t->run[i];
    return NULL;
}

int gw_jobtab_add(struct gw_jobtab *t, const char *id, const char *tenant)
{
    int r = -ENOSPC;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        struct entry *e = &t->run[i];
        if (e->used)
            continue;
        *e = (struct entry){.used = 1};
        snprintf(e->id, sizeof(e->id), "%s", id);
        snprintf(e->tenant, sizeof(e->tenant), "%s", tenant);
        r = 0;
        break;
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}

int gw_jobtab_set_executor(struct gw_jobtab *t, const char *id, const char *executor)
{
    pthread_mutex_lock(&t->lock);
    struct entry *e = find(t, id);
    int cancel = e && e->cancel;
    if (e)
        snprintf(e->executor, sizeof(e->executor), "%s", executor);
    pthread_mutex_unlock(&t->lock);
    return cancel;
}

int gw_jobtab_cancel_asked(struct gw_jobtab *t, const char *id)
{
    pthread_mutex_lock(&t->lock);
    struct entry *e = find(t, id);
    int cancel = e && e->cancel;
    pthread_mutex_unlock(&t->lock);
    return cancel;
}

void gw_jobtab_end(struct gw_jobtab *t, const char *id)
{
    pthread_mutex_lock(&t->lock);
    struct entry *e = find(t, id);
    if (e) {
        struct ended *d = &t->ended[t->ended_next++ % GW_JOBTAB_ENDED_MAX];
        memcpy(d->id, e->id, sizeof(d->id));
        memcpy(d->tenant, e->tenant, sizeof(d->tenant));
        e->used = 0;
    }
    pthread_mutex_unlock(&t->lock);
}

enum gw_jobtab_state gw_jobtab_cancel(struct gw_jobtab *t, const char *id, const char *tenant,
                                      char ret_executor[GW_URL_MAX])
{
    enum gw_jobtab_state st = GW_JOB_UNKNOWN;
    ret_executor[0] = '\0';
    pthread_mutex_lock(&t->lock);
    struct entry *e = find(t, id);
    if (e && strcmp(e->tenant, tenant) == 0) {
        e->cancel = 1;
        memcpy(ret_executor, e->executor, GW_URL_MAX);
        st = GW_JOB_RUNNING;
    }
    for (size_t i = 0; !e && i < GW_JOBTAB_ENDED_MAX; i++)
        if (strcmp(t->ended[i].id, id) == 0 && strcmp(t->ended[i].tenant, tenant) == 0) {
            st = GW_JOB_ENDED;
            break;
        }
    pthread_mutex_unlock(&t->lock);
    return st;
}
