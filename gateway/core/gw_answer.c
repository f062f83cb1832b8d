/* gw_answer.c - an executor's answer counted in the memory budget (gw_answer.h). */
#include "gw_answer.h"

#include <errno.h>

#include "membudget.h"

void gw_answer_init(struct gw_answer *a, size_t cap, struct sg_membudget *budget, size_t paid)
{
    sg_buf_init(&a->buf, cap);
    a->budget = budget;
    a->paid = paid;
    a->reserved = 0;
    a->refused = 0;
    a->refused_at = 0;
}

/* Budget bytes an answer of len bytes needs beyond what was paid, rounded up
 * to whole steps. */
static size_t needed(const struct gw_answer *a, size_t len)
{
    size_t want = len * GW_ANSWER_COPIES;
    if (want <= a->paid)
        return 0;
    const size_t step = (size_t)GW_ANSWER_STEP * GW_ANSWER_COPIES;
    return (want - a->paid + step - 1) / step * step;
}

/* Grow *held to need (a->budget is set); a refusal marks the answer. */
static int reserve_to(struct gw_answer *a, size_t *held, size_t need, size_t refused_at)
{
    if (need <= *held)
        return 0;
    if (!sg_membudget_reserve(a->budget, need - *held)) {
        a->refused = 1;
        a->refused_at = refused_at;
        return -EBUSY;
    }
    *held = need;
    return 0;
}

int gw_answer_append(struct gw_answer *a, const void *data, size_t n)
{
    if (a->budget && n) {
        if (n > a->buf.cap || a->buf.len > a->buf.cap - n)
            return -E2BIG;
        if (reserve_to(a, &a->reserved, needed(a, a->buf.len + n), a->buf.len + n) < 0)
            return -EBUSY;
    }
    return sg_buf_append(&a->buf, data, n);
}

int gw_answer_reserve_beside(struct gw_answer *a, size_t *held, size_t bytes, size_t refused_at)
{
    if (!a->budget)
        return 0;
    const size_t step = GW_ANSWER_STEP;
    return reserve_to(a, held, (bytes + step - 1) / step * step, refused_at);
}

char *gw_answer_steal(struct gw_answer *a, size_t *ret_len, size_t *ret_reserved)
{
    *ret_reserved = a->reserved;
    a->reserved = 0;
    return sg_buf_steal(&a->buf, ret_len);
}

void gw_answer_free(struct gw_answer *a)
{
    sg_buf_free(&a->buf);
    sg_membudget_release(a->budget, a->reserved);
    a->reserved = 0;
}
