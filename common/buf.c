#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_buf_init(struct sg_buf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap ? cap : SG_BUF_DEFAULT_CAP;
}

static int buf_reserve(struct sg_buf *b, size_t need)
{
    if (need + 1 <= b->alloc)
        return 0;
    size_t n = b->alloc ? b->alloc : 256;
    while (n < need + 1)
        n *= 2;
    char *p = realloc(b->data, n);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->alloc = n;
    return 0;
}

int sg_buf_presize(struct sg_buf *b, size_t n)
{
    if (n == 0 || n - 1 > b->cap)
        return -E2BIG;
    if (n <= b->alloc)
        return 0;
    char *p = realloc(b->data, n);
    if (!p)
        return -ENOMEM;
    if (!b->data)
        p[0] = '\0';
    b->data = p;
    b->alloc = n;
    return 0;
}

int sg_buf_append(struct sg_buf *b, const void *data, size_t n)
{
    if (n > b->cap || b->len > b->cap - n)
        return -E2BIG;
    int r = buf_reserve(b, b->len + n);
    if (r < 0)
        return r;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int sg_buf_printf(struct sg_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n < sizeof(small))
        return sg_buf_append(b, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big)
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int r = sg_buf_append(b, big, (size_t)n);
    free(big);
    return r;
}

char *sg_buf_steal(struct sg_buf *b, size_t *ret_len)
{
    char *d = b->data;
    if (!d)
        d = calloc(1, 1);
    if (ret_len)
        *ret_len = d ? b->len : 0;
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    return d;
}

void sg_buf_reset(struct sg_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void sg_buf_free(struct sg_buf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
}
