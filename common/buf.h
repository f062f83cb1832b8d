/* buf.h - a growable byte buffer with a hard cap.
 *
 * Every buffer filled from outside input has a cap; appending past it fails
 * with -E2BIG and leaves the buffer unchanged, so callers can answer 413 or
 * classify "output too large" instead of growing without bound.
 * The data is always NUL-terminated (not counted in len) for convenience.
 */
#ifndef SG_BUF_H
#define SG_BUF_H

#include <stddef.h>

struct sg_buf {
    char *data; /* owned; NULL until the first append */
    size_t len;
    size_t alloc;
    size_t cap; /* maximum len; 0 means SG_BUF_DEFAULT_CAP */
};

#define SG_BUF_DEFAULT_CAP (16u * 1024u * 1024u)

/* Initialise an empty buffer that will hold at most cap bytes. */
void sg_buf_init(struct sg_buf *b, size_t cap);

/* Append n bytes. Returns 0, -E2BIG (cap exceeded; nothing appended) or -ENOMEM. */
int sg_buf_append(struct sg_buf *b, const void *data, size_t n);

/* Make the allocation hold at least n bytes (the NUL included) without
 * changing the contents, so appends up to n - 1 bytes in all never
 * reallocate. 0, -E2BIG (n - 1 over the cap) or -ENOMEM. */
int sg_buf_presize(struct sg_buf *b, size_t n);

/* Append a printf-formatted string; same returns as sg_buf_append. */
int sg_buf_printf(struct sg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Take ownership of the data (caller frees with free()); the buffer is reset. */
char *sg_buf_steal(struct sg_buf *b, size_t *ret_len);

/* Empty the buffer, keeping its allocation and cap. */
void sg_buf_reset(struct sg_buf *b);

/* Release the data; the buffer may be reused after sg_buf_init. NULL is a no-op. */
void sg_buf_free(struct sg_buf *b);

#endif
