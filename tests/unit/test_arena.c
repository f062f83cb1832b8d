/* The bump arena used by the analyzers: alignment, copies, the hard cap. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"

Test(arena, aligned_copies_and_large_requests)
{
    struct sg_arena a;
    sg_arena_init(&a, 1 << 20);
    char *s = sg_arena_strndup(&a, "hello world", 5);
    cr_assert_str_eq(s, "hello");
    void *p = sg_arena_alloc(&a, 3);
    cr_expect_eq((uintptr_t)p % _Alignof(max_align_t), 0);
    char *big = sg_arena_alloc(&a, 100000); /* larger than a chunk: a chunk of its own */
    cr_assert(big);
    memset(big, 'x', 100000);
    cr_expect_str_eq(s, "hello");
    cr_expect_eq(a.full, 0);
    sg_arena_free(&a);
    sg_arena_free(NULL);
}

Test(arena, cap_refuses_and_marks_full)
{
    struct sg_arena a;
    sg_arena_init(&a, 64);
    cr_assert(sg_arena_alloc(&a, 32));
    cr_expect_null(sg_arena_alloc(&a, 64));
    cr_expect_eq(a.full, 1);
    cr_expect_null(sg_arena_alloc(&a, SIZE_MAX));
    sg_arena_free(&a);
}
