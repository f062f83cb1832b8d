/* A job written to the sandbox's stream as it is encoded (json_out.h,
 * attach_write_json): the bytes are json_dumps()'s and a '\n', whatever the
 * pace of the reader; a reader that stops makes the write time out at its
 * deadline; a sink's failure stops the dump with its error. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "buf.h"
#include "json_out.h"

#define BIG (3u << 20)

/* A job-like value: a long base64-like string (longer than a chunk and the
 * socket's buffer), short strings with escapes, numbers, nesting. */
static json_t *sample(void)
{
    char *big = malloc(BIG + 1);
    cr_assert(big);
    for (size_t i = 0; i < BIG; i++)
        big[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i * 7 % 64];
    big[BIG] = '\0';
    json_t *files = json_object();
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof(name), "f%d.txt", i);
        json_object_set_new(files, name, json_string("a\"b\\c\n\u00e9/\x01"));
    }
    json_object_set_new(files, "big.bin", json_string(big));
    free(big);
    return json_pack("{s:s,s:s,s:o,s:{s:[i,f,b,n]}}", "nonce", "n0nce", "code",
                     "def main():\n\treturn 1\n", "files", files, "arguments", "a", 1, 2.5, 1);
}

struct reader {
    int fd;
    unsigned pause_every; /* bytes between 1 ms pauses (0: none) */
    size_t stop_after;    /* stop reading after this many bytes (0: never) */
    struct sg_buf got;
};

static void *read_all(void *arg)
{
    struct reader *r = arg;
    char chunk[4096];
    size_t since = 0;
    for (;;) {
        if (r->stop_after && r->got.len >= r->stop_after)
            return NULL;
        ssize_t n = read(r->fd, chunk, sizeof(chunk));
        if (n <= 0)
            return NULL;
        sg_buf_append(&r->got, chunk, (size_t)n);
        since += (size_t)n;
        if (r->pause_every && since >= r->pause_every) {
            since = 0;
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
        }
    }
}

/* A socket pair whose far end r reads on its own thread; the near end in
 * sv[0]. */
static pthread_t start_reader(struct reader *r, int sv[2])
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    r->fd = sv[1];
    sg_buf_init(&r->got, 2 * BIG);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, read_all, r), 0);
    return t;
}

Test(json_out, a_slow_reader_gets_exactly_the_dumped_line)
{
    json_t *j = sample();
    char *want = json_dumps(j, JSON_COMPACT);
    cr_assert(want);
    int sv[2];
    struct reader r = {.pause_every = 256u * 1024u};
    pthread_t t = start_reader(&r, sv);
    int rc = attach_write_json(sv[0], j, (int64_t)attach_now_ms() + 20000);
    close(sv[0]);
    pthread_join(t, NULL);
    cr_assert_eq(rc, 0);
    size_t n = strlen(want);
    cr_assert_eq(r.got.len, n + 1, "%zu bytes, want %zu", r.got.len, n + 1);
    cr_assert(memcmp(r.got.data, want, n) == 0, "byte-identical to json_dumps");
    cr_assert_eq(r.got.data[n], '\n');
    close(sv[1]);
    sg_buf_free(&r.got);
    free(want);
    json_decref(j);
}

Test(json_out, a_reader_that_stops_makes_the_write_time_out)
{
    json_t *j = sample();
    int sv[2];
    struct reader r = {.stop_after = 100u * 1024u};
    pthread_t t = start_reader(&r, sv);
    double t0 = attach_now_ms();
    int rc = attach_write_json(sv[0], j, (int64_t)t0 + 300);
    double took = attach_now_ms() - t0;
    pthread_join(t, NULL);
    cr_assert_eq(rc, -ETIMEDOUT, "rc %d", rc);
    cr_assert(took >= 290 && took < 5000, "took %.0f ms", took);
    close(sv[0]);
    close(sv[1]);
    sg_buf_free(&r.got);
    json_decref(j);
}

struct counting {
    struct sg_buf out;
    size_t calls, largest, fail_at;
};

static int count_sink(void *ctx, const char *data, size_t len)
{
    struct counting *c = ctx;
    if (c->fail_at && c->calls + 1 == c->fail_at)
        return -EPIPE;
    c->calls++;
    if (len > c->largest)
        c->largest = len;
    return sg_buf_append(&c->out, data, len);
}

Test(json_out, pieces_are_gathered_and_a_long_string_passes_through)
{
    json_t *j = sample();
    char *want = json_dumps(j, JSON_COMPACT);
    struct counting c = {0};
    sg_buf_init(&c.out, 2 * BIG);
    cr_assert_eq(json_out_dump(j, JSON_COMPACT, "\n\n", count_sink, &c), 0);
    size_t n = strlen(want);
    cr_assert_eq(c.out.len, n + 2);
    cr_assert(memcmp(c.out.data, want, n) == 0 && memcmp(c.out.data + n, "\n\n", 2) == 0);
    cr_assert_eq(c.largest, BIG, "the long string in one piece, from the value itself");
    cr_assert_lt(c.calls, 8, "small pieces gathered: %zu calls", c.calls);
    sg_buf_free(&c.out);
    free(want);
    json_decref(j);
}

Test(json_out, a_failing_sink_stops_the_dump_with_its_error)
{
    json_t *j = sample();
    struct counting c = {.fail_at = 2};
    sg_buf_init(&c.out, 2 * BIG);
    cr_assert_eq(json_out_dump(j, JSON_COMPACT, NULL, count_sink, &c), -EPIPE);
    cr_assert_eq(c.calls, 1);
    cr_assert_eq(json_out_dump(NULL, JSON_COMPACT, NULL, count_sink, &c), -EINVAL);
    sg_buf_free(&c.out);
    json_decref(j);
}

Test(json_out, exact_buffer_is_json_dumps)
{
    json_t *j = sample();
    char *want = json_dumps(j, JSON_COMPACT);
    size_t len = 0;
    char *got = json_out_exact(j, JSON_COMPACT, &len);
    cr_assert_not_null(got);
    cr_assert_eq(len, strlen(want));
    cr_assert_str_eq(got, want);
    cr_assert_null(json_out_exact(NULL, JSON_COMPACT, &len));
    free(got);
    free(want);
    json_decref(j);
}
