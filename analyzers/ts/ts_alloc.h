/* ts_alloc.h - tree-sitter's allocator: per-thread tracking and a memory
 * and time budget for one parse.
 *
 * Why: tree-sitter 0.20.7's error recovery can allocate without bound after
 * the last byte is read - 3 KB of Python `/ * x` (blanks removed) repeated
 * takes 0.5 GB and 2 s, 15 KB several GB - in a phase that checks neither
 * the parse timeout nor the cancellation flag, and its default allocator
 * exit()s the process when malloc fails. Every tree-sitter allocation goes through this module
 * (installed before main by a constructor): each block carries a header
 * linking it into its thread's list. sg_ts_alloc_run() runs a parse with a
 * cap on the bytes the thread's tree-sitter blocks may hold and a deadline;
 * an allocation past either abandons the parse (longjmp back to
 * sg_ts_alloc_run) and frees every tree-sitter block the thread holds.
 *
 * Contract: tree-sitter objects (parsers, trees, cursors) are confined to
 * the thread that made them; after sg_ts_alloc_run() returned an error,
 * every tree-sitter object of the calling thread is gone (free memory) and
 * must be forgotten, never deleted.
 */
#ifndef SG_TS_ALLOC_H
#define SG_TS_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* The budget of one parse: a fixed part plus a part per source byte. An
 * ordinary parse holds about 50 bytes per source byte (tree and stack). */
#define SG_TS_MEMORY_BASE (16u << 20)
#define SG_TS_MEMORY_PER_BYTE 256u
/* Allocations between two looks at the clock. */
#define SG_TS_CLOCK_EVERY 256u

/* Run fn(arg) while this thread's tree-sitter blocks may grow by at most
 * max_bytes, until deadline_us (monotonic microseconds, as
 * sg_time_mono_us()). Returns 0 when fn returned, -ENOSPC when the memory
 * cap, -ETIMEDOUT when the deadline, -ENOMEM when malloc itself stopped it
 * (see the contract above). Not reentrant. */
int sg_ts_alloc_run(size_t max_bytes, uint64_t deadline_us, void (*fn)(void *), void *arg);

/* calloc and free for the grammars' external scanners (analyzers/build.mk
 * compiles them with calloc/free renamed to these), so their state is
 * tracked like tree-sitter's own blocks. */
void *sg_grammar_calloc(size_t count, size_t size);
void sg_grammar_free(void *p);

/* Bytes the calling thread's tree-sitter blocks hold now (tests). */
size_t sg_ts_alloc_live(void);

#endif
