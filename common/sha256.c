#include "sha256.h"

#include <openssl/sha.h>

void sg_sha256_hex(const void *data, size_t len, char hex[SG_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256(data, len, md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[SG_SHA256_HEX_LEN] = '\0';
}
