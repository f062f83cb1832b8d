#include "b64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int sg_b64_decode(const char *in, size_t len, size_t max_out, unsigned char **ret_out,
                  size_t *ret_len, struct sg_error *err)
{
    size_t sig = 0;
    for (size_t i = 0; i < len; i++)
        if (!is_space((unsigned char)in[i]))
            sig++;
    if (sig % 4 != 0)
        return sg_error_set(err, -EINVAL, "base64 length %zu is not a multiple of 4", sig);
    if (sig / 4 * 3 > max_out + 2)
        return sg_error_set(err, -E2BIG, "decoded data exceeds %zu bytes", max_out);
    unsigned char *out = malloc(sig / 4 * 3 + 1);
    if (!out)
        return sg_error_set(err, -ENOMEM, "out of memory");
    size_t o = 0, seen = 0, pad = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (is_space(c))
            continue;
        seen++;
        int v;
        if (c == '=') {
            /* padding only in the last two positions of the final quantum */
            if (seen + 1 < sig) {
                free(out);
                return sg_error_set(err, -EINVAL, "misplaced '=' at offset %zu", i);
            }
            pad++;
            v = 0;
        } else {
            v = b64_value(c);
            if (v < 0 || pad) {
                free(out);
                return sg_error_set(err, -EINVAL, "invalid base64 byte at offset %zu", i);
            }
        }
        acc = (acc << 6) | (uint32_t)v;
        if (seen % 4 == 0) {
            out[o++] = (unsigned char)(acc >> 16);
            out[o++] = (unsigned char)(acc >> 8);
            out[o++] = (unsigned char)acc;
            acc = 0;
        }
    }
    o -= pad;
    if (o > max_out) {
        free(out);
        return sg_error_set(err, -E2BIG, "decoded data exceeds %zu bytes", max_out);
    }
    out[o] = '\0';
    *ret_out = out;
    *ret_len = o;
    return 0;
}

int sg_b64_encode(const unsigned char *in, size_t len, char **ret_out, size_t *ret_len)
{
    size_t n = (len + 2) / 3 * 4;
    char *out = malloc(n + 1);
    if (!out)
        return -ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        out[o++] = alphabet[(v >> 18) & 63];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    *ret_out = out;
    if (ret_len)
        *ret_len = o;
    return 0;
}
