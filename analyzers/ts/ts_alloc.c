/* ts_alloc.c - tree-sitter's allocator with per-thread tracking and a
 * budget per parse (ts_alloc.h).
 *
 * Each block is [struct blk][payload]; the header links it into the list
 * of the thread that allocated it, so an abandoned parse can free all of
 * its thread's tree-sitter memory without asking tree-sitter (whose state
 * is inconsistent at that point). Blocks are thread-confined: freeing one
 * from another thread is a programming error and aborts.
 */
#include "ts_alloc.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "sg_time.h"

struct ts_thread;

struct blk {
    struct blk *prev, *next;
    size_t size; /* payload bytes */
    struct ts_thread *owner;
};

struct ts_thread {
    struct blk head; /* list sentinel */
    size_t live;     /* payload bytes of the blocks in the list */
    size_t limit;    /* 0: no budget (outside sg_ts_alloc_run) */
    uint64_t deadline;
    unsigned tick;
    int code; /* why the run was abandoned */
    jmp_buf *escape;
};

static _Thread_local struct ts_thread self_state;

static struct ts_thread *self(void)
{
    struct ts_thread *t = &self_state;
    if (!t->head.next)
        t->head.next = t->head.prev = &t->head;
    return t;
}

static _Noreturn void fail(const char *what)
{
    fprintf(stderr, "sandgate: tree-sitter allocator: %s\n", what);
    abort();
}

static _Noreturn void escape(struct ts_thread *t, int code)
{
    t->code = code;
    longjmp(*t->escape, 1);
}

/* Before adding bytes: stop the run past its memory cap or deadline. */
static void check(struct ts_thread *t, size_t add)
{
    if (!t->limit)
        return;
    if (t->live > t->limit || add > t->limit - t->live)
        escape(t, -ENOSPC);
    if (++t->tick % SG_TS_CLOCK_EVERY == 0 && sg_time_mono_us() > t->deadline)
        escape(t, -ETIMEDOUT);
}

static struct blk *header(void *p, struct ts_thread *t)
{
    struct blk *b = (struct blk *)p - 1;
    if (b->owner != t)
        fail("block freed or resized by a thread that did not allocate it");
    return b;
}

static void *ts_alloc_malloc(size_t n)
{
    struct ts_thread *t = self();
    check(t, n);
    struct blk *b = n <= SIZE_MAX - sizeof(*b) ? malloc(sizeof(*b) + n) : NULL;
    if (!b) {
        if (t->limit)
            escape(t, -ENOMEM);
        fail("out of memory"); /* tree-sitter itself would exit() here */
    }
    *b = (struct blk){.prev = &t->head, .next = t->head.next, .size = n, .owner = t};
    t->head.next->prev = b;
    t->head.next = b;
    t->live += n;
    return b + 1;
}

static void *ts_alloc_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        fail("calloc size overflow");
    void *p = ts_alloc_malloc(count * size);
    memset(p, 0, count * size);
    return p;
}

static void *ts_alloc_realloc(void *p, size_t n)
{
    if (!p)
        return ts_alloc_malloc(n);
    struct ts_thread *t = self();
    struct blk *b = header(p, t);
    check(t, n > b->size ? n - b->size : 0);
    struct blk *nb = n <= SIZE_MAX - sizeof(*b) ? realloc(b, sizeof(*b) + n) : NULL;
    if (!nb) {
        if (t->limit)
            escape(t, -ENOMEM); /* b is still linked and freed with the rest */
        fail("out of memory");
    }
    nb->prev->next = nb; /* the neighbours pointed at the old address */
    nb->next->prev = nb;
    t->live = t->live - nb->size + n;
    nb->size = n;
    return nb + 1;
}

static void ts_alloc_free(void *p)
{
    if (!p)
        return;
    struct ts_thread *t = self();
    struct blk *b = header(p, t);
    b->prev->next = b->next;
    b->next->prev = b->prev;
    t->live -= b->size;
    free(b);
}

/* Before main: no tree-sitter object exists yet, so every block it ever
 * frees was allocated here. */
__attribute__((constructor)) static void ts_alloc_install(void)
{
    ts_set_allocator(ts_alloc_malloc, ts_alloc_calloc, ts_alloc_realloc, ts_alloc_free);
}

static void free_all(struct ts_thread *t)
{
    for (struct blk *b = t->head.next, *next; b != &t->head; b = next) {
        next = b->next;
        free(b);
    }
    t->head.next = t->head.prev = &t->head;
    t->live = 0;
}

int sg_ts_alloc_run(size_t max_bytes, uint64_t deadline_us, void (*fn)(void *), void *arg)
{
    struct ts_thread *t = self();
    jmp_buf env;
    t->limit = max_bytes > SIZE_MAX - t->live ? SIZE_MAX : t->live + max_bytes;
    t->deadline = deadline_us;
    t->tick = 0;
    t->escape = &env;
    if (setjmp(env) == 0) {
        fn(arg);
        t->limit = 0;
        t->escape = NULL;
        return 0;
    }
    t->limit = 0;
    t->escape = NULL;
    free_all(t);
    return t->code;
}

void *sg_grammar_calloc(size_t count, size_t size)
{
    return ts_alloc_calloc(count, size);
}

void sg_grammar_free(void *p)
{
    ts_alloc_free(p);
}

size_t sg_ts_alloc_live(void)
{
    return self()->live;
}
