/* json_out.h - JSON values written out without a second whole copy.
 *
 * A large value (a job carrying its input files, an answer carrying its
 * artifacts) is encoded piece by piece into a sink as jansson produces it
 * (json_dump_callback), or into one buffer of exactly its size (never a
 * growing buffer's doubled copy). The bytes are json_dumps(j, flags)'s.
 */
#ifndef SG_EXEC_JSON_OUT_H
#define SG_EXEC_JSON_OUT_H

#include <jansson.h>
#include <stddef.h>

/* Small pieces are gathered into one buffer of this size before they reach
 * the sink; a piece at least this long (a long string without escapes: a
 * file's base64) goes to the sink straight from the value. */
#define JSON_OUT_CHUNK (64u * 1024u)

/* The sink: write len bytes; 0, or a negative errno that stops the dump. */
typedef int (*json_out_sink)(void *ctx, const char *data, size_t len);

/* Encode j (flags as json_dumps) into sink, then tail (NULL: none). 0, the
 * sink's first negative return, -ENOMEM, or -EINVAL when j cannot be
 * encoded. Holds at most JSON_OUT_CHUNK bytes of its own. */
int json_out_dump(const json_t *j, size_t flags, const char *tail, json_out_sink sink, void *ctx);

/* j encoded into one NUL-terminated buffer of exactly its length (two
 * encoding passes, the first only counts). Caller frees; NULL: no memory or
 * j cannot be encoded. *ret_len (optional) gets the length. */
char *json_out_exact(const json_t *j, size_t flags, size_t *ret_len);

#endif
