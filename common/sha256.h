/* sha256.h - sha256 digests as lowercase hex (OpenSSL libcrypto underneath). */
#ifndef SG_SHA256_H
#define SG_SHA256_H

#include <stddef.h>

#define SG_SHA256_HEX_LEN 64

/* Write the hex digest of data[0..len) into hex (at least 65 bytes, NUL-terminated). */
void sg_sha256_hex(const void *data, size_t len, char hex[SG_SHA256_HEX_LEN + 1]);

#endif
