/* attach.h - the hijacked attach stream of a container.
 *
 * attach_open() connects to dockerd's unix socket, sends
 * POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1 with
 * "Upgrade: tcp", and expects 101 (or 200 from engines that do not upgrade).
 * From then on the socket is raw: bytes written go to the container's stdin;
 * bytes read are Docker's multiplexed frames (Tty=false): an 8-byte header
 * {stream, 0, 0, 0, size32be} followed by size payload bytes.
 * Attach happens BEFORE the container starts so no output is lost.
 *
 * The frame parser and the response-head parser are pure functions over
 * untrusted bytes (fuzzed in tests/fuzz/fuzz_attach_frames.c).
 */
#ifndef SG_EXEC_ATTACH_H
#define SG_EXEC_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sg_error.h"

#define ATTACH_HEAD_MAX 4096u /* HTTP response head of the upgrade */
#define ATTACH_STDIN 0
#define ATTACH_STDOUT 1
#define ATTACH_STDERR 2
#define ATTACH_SYSERR 3 /* newer engines report stream errors on 3 */

/* Frame parser state; zero-initialise before the first feed. */
struct attach_parser {
    unsigned char hdr[8];
    unsigned hdr_len;
    uint32_t remaining; /* payload bytes left in the current frame */
    uint8_t stream;
};

/* Called for each payload chunk (a frame may arrive in several chunks). A
 * negative return stops parsing and is returned by attach_parse(). */
typedef int (*attach_sink)(void *ctx, int stream, const char *data, size_t len);

/* Feed len bytes. Returns 0, -EPROTO on a malformed header (unknown stream,
 * non-zero padding), or the sink's negative return. */
int attach_parse(struct attach_parser *p, const void *data, size_t len, attach_sink sink,
                 void *ctx);

/* Parse an HTTP response head "HTTP/1.x NNN ...\r\n...\r\n\r\n" (head_len
 * bytes, ending with the blank line): the status code, or -EPROTO. */
int attach_parse_status(const char *head, size_t head_len, int *ret_status);

/* Connect and hijack the attach stream of container id. Returns the socket
 * (caller closes) positioned at the first frame byte. */
int attach_open(const char *socket_path, const char *id, int timeout_ms, int *ret_fd,
                struct sg_error *err);

/* Write all of data before deadline (attach_now_ms() milliseconds). 0, -ETIMEDOUT or -errno. */
int attach_write_all(int fd, const void *data, size_t len, int64_t deadline_ms);

/* Write j as compact JSON and a '\n' while it is encoded (json_out_dump:
 * no whole copy of the line is built; a file's base64 is written from the
 * JSON value itself). The bytes are exactly json_dumps(j, JSON_COMPACT) and
 * '\n'. Every write is attach_write_all() under the one deadline: a reader
 * that stops reading makes it -ETIMEDOUT. 0, -ETIMEDOUT, -ENOMEM, -EINVAL (j
 * cannot be encoded) or -errno. */
int attach_write_json(int fd, const json_t *j, int64_t deadline_ms);

/* sg_time_mono_ns() in milliseconds (double for sub-ms precision): the
 * executors' view of the one monotonic clock. */
double attach_now_ms(void);

#endif
