/* arena.h - a bump allocator for short-lived analysis data.
 *
 * An analysis allocates many small strings (normalised names, resolved
 * dotted paths) that all die together; an arena turns each into a pointer
 * bump and frees them in one go. The arena has a hard cap on the bytes it
 * hands out, so hostile input cannot grow it without bound.
 */
#ifndef SG_ARENA_H
#define SG_ARENA_H

#include <stddef.h>

struct sg_arena_chunk;

struct sg_arena {
    struct sg_arena_chunk *head; /* owned; newest chunk first */
    size_t used;                 /* bytes handed out */
    size_t cap;                  /* maximum of `used` */
    int full;                    /* an allocation was refused for the cap */
};

/* An empty arena that hands out at most cap bytes. */
void sg_arena_init(struct sg_arena *a, size_t cap);

/* n bytes aligned for any scalar type; NULL when out of memory or past the
 * cap (then `full` is set). Valid until sg_arena_free(). */
void *sg_arena_alloc(struct sg_arena *a, size_t n);

/* A NUL-terminated copy of s[0..n), or NULL as sg_arena_alloc. */
char *sg_arena_strndup(struct sg_arena *a, const char *s, size_t n);

/* Release every chunk; the struct itself is the caller's. NULL is a no-op. */
void sg_arena_free(struct sg_arena *a);

#endif
