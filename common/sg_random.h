/* sg_random.h - random hex strings from the kernel CSPRNG (getrandom), one
 * definition for request ids, job ids and the runner-line nonces.
 *
 * Never falls back to a predictable source: a nonce that could be guessed
 * would let sandboxed code forge its result line, so failure is an error the
 * caller handles. No heap memory.
 */
#ifndef SG_RANDOM_H
#define SG_RANDOM_H

#include <stddef.h>

#define SG_RANDOM_BYTES_MAX 64 /* one call's largest request */

/* Write 2 * nbytes lowercase hex digits and a NUL into out (2 * nbytes + 1
 * bytes). nbytes is 1..SG_RANDOM_BYTES_MAX. 0, -EINVAL, or -errno of
 * getrandom (interrupted calls are retried). */
int sg_random_hex(char *out, size_t nbytes);

#endif
