/* sg_parse.h - the value grammars of sandgate's configuration, one definition
 * for the gateway and the executors (both read the same compose variables).
 *
 * Numbers are unsigned decimal digits only: no sign, no fraction, no base
 * prefix; overflow is an error. Surrounding spaces and tabs are ignored (as
 * RAGFlow strips its variables); letters are case-insensitive.
 *
 *   duration  a bare number, in the unit the caller names, or one or more
 *             <number><unit> parts with units h, m, s, ms, largest first, each
 *             at most once: "10s", "1m", "1m30s", "1500ms", "1h", "2s500ms".
 *             RAGFlow's SANDBOX_TIMEOUT documents s, m and 1m30s.
 *   size      a bare number, in the unit the caller names, or <number><unit>
 *             with unit b, k, m or g (powers of 1024), optionally followed by
 *             "b" or "ib": "256m", "1g", "512k", "512kb", "64MiB", "268435456".
 *             RAGFlow passes SANDBOX_MAX_MEMORY to Docker, where a bare number
 *             counts bytes.
 *   boolean   true/false, 1/0, yes/no, on/off.
 *
 * Every function returns 0 or a negative errno code (-EINVAL for text that
 * does not match, -ERANGE for overflow) and then fills err with a message
 * that quotes the text; the caller prefixes the variable's name. Nothing is
 * written to *ret on failure. No heap memory.
 */
#ifndef SG_PARSE_H
#define SG_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "sg_error.h"

#define SG_MIB (1024u * 1024u)

/* The range both daemons accept for RAGFlow's SANDBOX_TIMEOUT and
 * SANDBOX_MAX_MEMORY (and the matching keys), so neither starts with a value
 * the other refuses. */
#define SG_TIMEOUT_MS_MIN 100u
#define SG_TIMEOUT_MS_MAX 3600000u
#define SG_MEMORY_MB_MIN 32u
#define SG_MEMORY_MB_MAX 65536u

/* Unsigned decimal integer. */
int sg_parse_u64(const char *s, uint64_t *ret, struct sg_error *err);

/* Duration in milliseconds; a bare number counts bare_unit_ms each (1000 for
 * RAGFlow's seconds, 1 for sandgate's *_MS keys). */
int sg_parse_duration_ms(const char *s, uint64_t bare_unit_ms, uint64_t *ret_ms,
                         struct sg_error *err);

/* Size in bytes; a bare number counts bare_unit bytes each (1 for Docker's
 * and RAGFlow's bytes, SG_MIB for sandgate's *_MB flags). */
int sg_parse_size_bytes(const char *s, uint64_t bare_unit, uint64_t *ret_bytes,
                        struct sg_error *err);

/* Size as sg_parse_size_bytes, in MiB rounded up ("33554433" is 33). */
int sg_parse_size_mib(const char *s, uint64_t bare_unit, uint64_t *ret_mib, struct sg_error *err);

/* Boolean. */
int sg_parse_bool(const char *s, bool *ret, struct sg_error *err);

#endif
