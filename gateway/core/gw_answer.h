/* gw_answer.h - an executor's answer as it arrives, counted in the gateway's
 * memory budget (membudget.h) before it grows.
 *
 * The gateway holds an executor's answer several times over while a front
 * door re-shapes it: as received, parsed (jansson), in the door's own object
 * and as the text sent to the client. Each arriving chunk is therefore
 * reserved GW_ANSWER_COPIES times over, in steps of GW_ANSWER_STEP answer
 * bytes, beyond what the caller already paid for (a job's reservation
 * includes GW_JOB_MEMORY_ANSWER). A refused reservation stops the append
 * (-EBUSY, refused set): the transfer is aborted and the caller answers
 * its door's busy answer. Not thread-safe: one answer, one thread.
 */
#ifndef SG_GW_ANSWER_H
#define SG_GW_ANSWER_H

#include <stddef.h>

#include "buf.h"

struct sg_membudget;

/* Copies of an answer the gateway may hold at once (read, parsed, the
 * door's object, the text it sends). */
#define GW_ANSWER_COPIES 4u
/* Answer bytes reserved at a time (times GW_ANSWER_COPIES). */
#define GW_ANSWER_STEP (256u * 1024u)

struct gw_answer {
    struct sg_buf buf;
    struct sg_membudget *budget; /* NULL: not counted */
    size_t paid;                 /* budget bytes the caller reserved for it already */
    size_t reserved;             /* budget bytes reserved here (owed back) */
    int refused;                 /* a reservation failed: the answer is incomplete */
    size_t refused_at;           /* the answer's length had the append been taken */
};

/* An empty answer of at most cap bytes, counted in budget (may be NULL)
 * beyond paid bytes of budget reserved by the caller. */
void gw_answer_init(struct gw_answer *a, size_t cap, struct sg_membudget *budget, size_t paid);

/* Append n bytes, reserving first what they need. 0, -EBUSY (the budget is
 * full: nothing appended, a->refused set), or sg_buf_append's -E2BIG/-ENOMEM. */
int gw_answer_append(struct gw_answer *a, const void *data, size_t n);

/* Room for a buffer held beside the answer while it arrives (a stream
 * parser's): grows *held, the budget bytes the caller holds for it, to
 * cover bytes, in GW_ANSWER_STEP steps. 0, or -EBUSY with the answer marked
 * refused at refused_at bytes. The caller releases *held from a->budget
 * (nothing is held without a budget). */
int gw_answer_reserve_beside(struct gw_answer *a, size_t *held, size_t bytes, size_t refused_at);

/* The bytes (NUL-terminated; caller frees) and, in *ret_reserved, the budget
 * bytes the caller now owes back with sg_membudget_release. a is empty after. */
char *gw_answer_steal(struct gw_answer *a, size_t *ret_len, size_t *ret_reserved);

/* Free what is left and release its reservation. */
void gw_answer_free(struct gw_answer *a);

#endif
