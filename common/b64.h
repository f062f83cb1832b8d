/* b64.h - strict standard base64 (RFC 4648 section 4).
 *
 * Decoding is strict: only the standard alphabet, '=' padding only at the end,
 * length a multiple of 4 after removing ASCII whitespace (which is skipped, as
 * Python's base64.b64decode does for the inputs RAGFlow sends). Anything else
 * is -EINVAL with the offset of the first bad byte in err.
 */
#ifndef SG_B64_H
#define SG_B64_H

#include <stddef.h>

#include "sg_error.h"

/* Decode in[0..len) into a new buffer (NUL-terminated, caller frees with
 * free()). Fails with -E2BIG if the decoded size would exceed max_out. */
int sg_b64_decode(const char *in, size_t len, size_t max_out, unsigned char **ret_out,
                  size_t *ret_len, struct sg_error *err);

/* Encode in[0..len) into a new NUL-terminated string (caller frees with free()). */
int sg_b64_encode(const unsigned char *in, size_t len, char **ret_out, size_t *ret_len);

#endif
