/* arena.c - bump allocation in chunks. */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Chunk payload; larger requests get a chunk of their own size. */
#define ARENA_CHUNK_BYTES 16384u

struct sg_arena_chunk {
    struct sg_arena_chunk *next;
    size_t size, off;
    alignas(max_align_t) unsigned char data[];
};

void sg_arena_init(struct sg_arena *a, size_t cap)
{
    a->head = NULL;
    a->used = 0;
    a->cap = cap;
    a->full = 0;
}

void *sg_arena_alloc(struct sg_arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    size_t need = (n + align - 1) & ~(align - 1);
    if (need < n || need > a->cap - a->used) {
        a->full = 1;
        return NULL;
    }
    struct sg_arena_chunk *c = a->head;
    if (!c || c->size - c->off < need) {
        size_t size = need > ARENA_CHUNK_BYTES ? need : ARENA_CHUNK_BYTES;
        c = malloc(sizeof(*c) + size);
        if (!c)
            return NULL;
        c->size = size;
        c->off = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->off;
    c->off += need;
    a->used += need;
    return p;
}

char *sg_arena_strndup(struct sg_arena *a, const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = sg_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void sg_arena_free(struct sg_arena *a)
{
    if (!a)
        return;
    while (a->head) {
        struct sg_arena_chunk *n = a->head->next;
        free(a->head);
        a->head = n;
    }
    a->used = 0;
}
