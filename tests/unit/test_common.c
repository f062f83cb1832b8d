/* Unit tests for common/: capped buffers, strict base64, sha256, logging
 * helpers and the capped HTTP server. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "buf.h"
#include "histogram.h"
#include "json_nesting.h"
#include "httpsrv.h"
#include "log.h"
#include "readfile.h"
#include "sg_cond.h"
#include "sg_error.h"
#include "sg_file_name.h"
#include "sg_parse.h"
#include "sg_random.h"
#include "sg_token.h"
#include "sha256.h"

Test(buf, append_within_cap_and_nul_terminated)
{
    struct sg_buf b;
    sg_buf_init(&b, 8);
    cr_assert_eq(sg_buf_append(&b, "abcd", 4), 0);
    cr_assert_eq(sg_buf_append(&b, "efgh", 4), 0);
    cr_assert_eq(b.len, 8);
    cr_assert_str_eq(b.data, "abcdefgh");
    sg_buf_free(&b);
}

Test(buf, append_past_cap_fails_and_leaves_buffer_unchanged)
{
    struct sg_buf b;
    sg_buf_init(&b, 5);
    cr_assert_eq(sg_buf_append(&b, "abc", 3), 0);
    cr_assert_eq(sg_buf_append(&b, "def", 3), -E2BIG);
    cr_assert_eq(b.len, 3);
    cr_assert_str_eq(b.data, "abc");
    cr_assert_eq(sg_buf_printf(&b, "%s", "xyz"), -E2BIG);
    sg_buf_free(&b);
}

Test(buf, printf_large_and_steal)
{
    struct sg_buf b;
    sg_buf_init(&b, 0);
    char big[2000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_eq(sg_buf_printf(&b, "<%s>", big), 0);
    cr_assert_eq(b.len, 2001);
    size_t n = 0;
    char *s = sg_buf_steal(&b, &n);
    cr_assert_eq(n, 2001);
    cr_assert_eq(s[0], '<');
    cr_assert_eq(b.data, NULL);
    free(s);
    sg_buf_free(&b);
    sg_buf_free(NULL);
}

static void check_decode(const char *in, const char *want)
{
    unsigned char *out = NULL;
    size_t n = 0;
    struct sg_error err = {0};
    cr_assert_eq(sg_b64_decode(in, strlen(in), 1024, &out, &n, &err), 0, "%s: %s", in, err.msg);
    cr_assert_eq(n, strlen(want));
    cr_assert_eq(memcmp(out, want, n), 0);
    free(out);
}

static int decode_rc(const char *in, size_t max)
{
    unsigned char *out = NULL;
    size_t n = 0;
    int r = sg_b64_decode(in, strlen(in), max, &out, &n, NULL);
    free(out);
    return r;
}

Test(b64, decodes_rfc4648_vectors)
{
    check_decode("", "");
    check_decode("Zg==", "f");
    check_decode("Zm8=", "fo");
    check_decode("Zm9v", "foo");
    check_decode("Zm9vYg==", "foob");
    check_decode("Zm9vYmE=", "fooba");
    check_decode("Zm9vYmFy", "foobar");
    check_decode("Zm9v\nYmFy\n", "foobar"); /* whitespace is skipped */
}

Test(b64, rejects_malformed_input)
{
    cr_assert_eq(decode_rc("Zm9", 100), -EINVAL);      /* length */
    cr_assert_eq(decode_rc("Zm9v!mFy", 100), -EINVAL); /* alphabet */
    cr_assert_eq(decode_rc("Z===", 100), -EINVAL);     /* padding too early */
    cr_assert_eq(decode_rc("Zg==Zm9v", 100), -EINVAL); /* data after padding */
    cr_assert_eq(decode_rc("Zm-v", 100), -EINVAL);     /* url-safe alphabet is not standard */
}

Test(b64, enforces_decoded_cap)
{
    cr_assert_eq(decode_rc("Zm9vYmFy", 5), -E2BIG);
    cr_assert_eq(decode_rc("Zm9vYmFy", 6), 0);
}

Test(b64, encode_roundtrip)
{
    const unsigned char data[] = {0, 1, 2, 250, 251, 252, 253};
    for (size_t len = 0; len <= sizeof(data); len++) {
        char *enc = NULL;
        size_t elen = 0;
        cr_assert_eq(sg_b64_encode(data, len, &enc, &elen), 0);
        cr_assert_eq(elen % 4, 0);
        unsigned char *dec = NULL;
        size_t dlen = 0;
        cr_assert_eq(sg_b64_decode(enc, elen, 64, &dec, &dlen, NULL), 0);
        cr_assert_eq(dlen, len);
        cr_assert_eq(memcmp(dec, data, len), 0);
        free(enc);
        free(dec);
    }
}

Test(sha256, known_vectors)
{
    char hex[SG_SHA256_HEX_LEN + 1];
    sg_sha256_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sg_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(log, quote_escapes_control_bytes_and_quotes)
{
    char out[64];
    sg_log_quote("a\"b\\c\nd", out, sizeof(out));
    cr_assert_str_eq(out, "a\\\"b\\\\c\\x0ad");
    sg_log_quote("0123456789", out, 8);
    cr_assert(strlen(out) < 8);
}

Test(log, parse_level)
{
    enum sg_log_level l;
    cr_assert_eq(sg_log_parse_level("warn", &l), 0);
    cr_assert_eq(l, SG_LOG_WARN);
    cr_assert_eq(sg_log_parse_level("loud", &l), -EINVAL);
}

Test(error, set_formats_and_returns_code)
{
    struct sg_error err;
    cr_assert_eq(sg_error_set(&err, -EINVAL, "bad %s", "thing"), -EINVAL);
    cr_assert_str_eq(err.msg, "bad thing");
    cr_assert_eq(sg_error_set(NULL, -ENOMEM, "x"), -ENOMEM);
    sg_error_clear(&err);
    cr_assert_str_eq(err.msg, "");
}

Test(histogram, bounds_inclusive_cumulative_render)
{
    static const uint64_t bounds[] = {1000, 2000};
    struct sg_histogram h;
    sg_histogram_init(&h, bounds, 2);
    sg_histogram_observe_us(&h, 1000); /* on the bound: first bucket */
    sg_histogram_observe_us(&h, 1001);
    sg_histogram_observe_us(&h, 5000); /* past every bound: +Inf only */
    struct sg_buf b;
    sg_buf_init(&b, 4096);
    cr_assert_eq(sg_histogram_render(&h, "t_seconds", "Test.", &b), 0);
    cr_assert_str_eq(b.data, "# HELP t_seconds Test.\n# TYPE t_seconds histogram\n"
                             "t_seconds_bucket{le=\"0.001\"} 1\n"
                             "t_seconds_bucket{le=\"0.002\"} 2\n"
                             "t_seconds_bucket{le=\"+Inf\"} 3\n"
                             "t_seconds_sum 0.007001\nt_seconds_count 3\n");
    sg_buf_free(&b);
}

Test(json_nesting, containers_count_scalars_do_not)
{
    json_t *flat = json_loads("{\"a\": 1}", 0, NULL);
    json_t *three = json_loads("{\"a\": [[1]]}", 0, NULL);
    json_t *empty3 = json_loads("[[[]]]", 0, NULL);
    json_t *scalar = json_integer(7);
    cr_assert_eq(sg_json_nesting_exceeds(scalar, 0), 0);
    json_decref(scalar);
    cr_assert_eq(sg_json_nesting_exceeds(flat, 1), 0);
    cr_assert_eq(sg_json_nesting_exceeds(flat, 0), 1);
    cr_assert_eq(sg_json_nesting_exceeds(three, 3), 0);
    cr_assert_eq(sg_json_nesting_exceeds(three, 2), 1);
    cr_assert_eq(sg_json_nesting_exceeds(empty3, 3), 0);
    cr_assert_eq(sg_json_nesting_exceeds(empty3, 2), 1);
    json_decref(flat);
    json_decref(three);
    json_decref(empty3);
}

/* --- httpsrv: a real server on a loopback ephemeral port --- */

static void echo_handler(void *ctx, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    (void)ctx;
    char *body = NULL;
    if (asprintf(&body, "{\"method\":\"%s\",\"url\":\"%s\",\"len\":%zu}", req->method, req->url,
                 req->body_len) < 0)
        return;
    resp->body = body;
    sg_http_add_header(resp, "X-Test", "yes");
}

static char *raw_request(uint16_t port, const char *req)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    size_t len = strlen(req);
    cr_assert_eq(write(fd, req, len), (ssize_t)len);
    static char out[8192];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(out) - 1 && (r = read(fd, out + n, sizeof(out) - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd);
    return out;
}

static struct sg_httpsrv *start_echo(void)
{
    struct sg_httpsrv_config cfg = {.bind_addr = "127.0.0.1", .port = 0, .max_body = 16};
    struct sg_httpsrv *srv = NULL;
    struct sg_error err = {0};
    cr_assert_eq(sg_httpsrv_start(&cfg, &(struct sg_http_handlers){.handle = echo_handler}, NULL,
                                  &srv, &err),
                 0, "%s", err.msg);
    return srv;
}

Test(httpsrv, serves_body_and_headers)
{
    struct sg_httpsrv *srv = start_echo();
    char *resp =
        raw_request(sg_httpsrv_port(srv), "POST /v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                                          "Connection: close\r\n\r\nhello");
    cr_assert(strstr(resp, "200 OK"), "%s", resp);
    cr_assert(strstr(resp, "X-Test: yes"), "%s", resp);
    cr_assert(strstr(resp, "\"len\":5"), "%s", resp);
    sg_httpsrv_stop(srv);
}

Test(httpsrv, body_over_cap_gets_413_without_calling_handler)
{
    struct sg_httpsrv_config cfg = {.bind_addr = "127.0.0.1", .port = 0, .max_body = 4};
    struct sg_httpsrv *srv = NULL;
    cr_assert_eq(sg_httpsrv_start(&cfg, &(struct sg_http_handlers){.handle = echo_handler}, NULL,
                                  &srv, NULL),
                 0);
    /* declared too large */
    char *resp =
        raw_request(sg_httpsrv_port(srv), "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                                          "Connection: close\r\n\r\nhello");
    cr_assert(strstr(resp, "413"), "%s", resp);
    cr_assert(strstr(resp, "body_too_large"), "%s", resp);
    /* chunked, no declared length */
    resp = raw_request(sg_httpsrv_port(srv),
                       "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
                       "Connection: close\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n");
    cr_assert(strstr(resp, "413"), "%s", resp);
    sg_httpsrv_stop(srv);
    sg_httpsrv_stop(NULL);
}

Test(httpsrv, rejects_non_ip_bind_address)
{
    struct sg_httpsrv_config cfg = {.bind_addr = "localhost", .port = 0, .max_body = 4};
    struct sg_httpsrv *srv = NULL;
    struct sg_error err = {0};
    cr_assert_lt(sg_httpsrv_start(&cfg, &(struct sg_http_handlers){.handle = echo_handler}, NULL,
                                  &srv, &err),
                 0);
    cr_assert(strstr(err.msg, "localhost"));
}

/* A handler that blocks until the test releases it (an upstream call). */
static atomic_int gate_open, gate_entered;

static void gated_handler(void *ctx, const struct sg_http_request *req,
                          struct sg_http_response *resp)
{
    if (strcmp(req->method, "POST") == 0) {
        atomic_fetch_add(&gate_entered, 1);
        while (!atomic_load(&gate_open))
            usleep(1000);
    }
    echo_handler(ctx, req, resp);
}

static void *post_in_background(void *arg)
{
    raw_request(*(uint16_t *)arg, "POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
                                  "Connection: close\r\n\r\n");
    return NULL;
}

Test(httpsrv, a_full_worker_pool_refuses_at_once_and_gets_still_answer)
{
    struct sg_httpsrv_config cfg = {.bind_addr = "127.0.0.1", .max_body = 16, .workers = 1};
    struct sg_httpsrv *srv = NULL;
    cr_assert_eq(sg_httpsrv_start(&cfg, &(struct sg_http_handlers){.handle = gated_handler}, NULL,
                                  &srv, NULL),
                 0);
    uint16_t port = sg_httpsrv_port(srv);
    pthread_t t;
    pthread_create(&t, NULL, post_in_background, &port);
    while (atomic_load(&gate_entered) == 0)
        usleep(1000);
    /* the one worker is blocked: another POST is refused, a GET is served */
    char *resp = raw_request(port, "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
                                   "Connection: close\r\n\r\n");
    cr_assert(strstr(resp, "503"), "%s", resp);
    cr_assert(strstr(resp, "server_busy"), "%s", resp);
    cr_assert(strstr(resp, "Retry-After: 1"), "%s", resp);
    resp = raw_request(port, "GET /h HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    cr_assert(strstr(resp, "200 OK"), "%s", resp);
    atomic_store(&gate_open, 1);
    pthread_join(t, NULL);
    sg_httpsrv_stop(srv);
}

Test(sg_parse, durations)
{
    static const struct {
        const char *text;
        uint64_t bare, ms;
    } ok[] = {
        {"10s", 1000, 10000},   {"1m", 1000, 60000},       {"1m30s", 1000, 90000},
        {"1h", 1, 3600000},     {"1h1m1s1ms", 1, 3661001}, {"1500ms", 1000, 1500},
        {"1500MS", 1000, 1500}, {"2s500ms", 1, 2500},      {"90", 1000, 90000},
        {"90", 1, 90},          {"\t 5s ", 1, 5000},       {"0", 1000, 0},
        {"0s", 1, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 7;
        struct sg_error e = {0};
        cr_expect_eq(sg_parse_duration_ms(ok[i].text, ok[i].bare, &v, &e), 0, "'%s': %s",
                     ok[i].text, e.msg);
        cr_expect_eq(v, ok[i].ms, "'%s' -> %llu", ok[i].text, (unsigned long long)v);
    }
    static const char *const bad[] = {"",     " ",    "s",     "ms",    "-1",   "+1s",
                                      "1.5s", "1m1m", "30s1m", "1ms1s", "1m30", "10x",
                                      "10 s", "1d",   "0x10",  "1e3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 7;
        struct sg_error e = {0};
        cr_expect_eq(sg_parse_duration_ms(bad[i], 1000, &v, &e), -EINVAL, "'%s'", bad[i]);
        cr_expect_eq(v, 7, "'%s' wrote the result", bad[i]);
        cr_expect(strstr(e.msg, "is not a duration"), "'%s': %s", bad[i], e.msg);
    }
    uint64_t v;
    struct sg_error e = {0};
    cr_expect_eq(sg_parse_duration_ms("99999999999999999999", 1, &v, &e), -ERANGE);
    cr_expect(strstr(e.msg, "too large"), "%s", e.msg);
    cr_expect_eq(sg_parse_duration_ms("18446744073709551615", 1000, &v, NULL), -ERANGE);
    cr_expect_eq(sg_parse_duration_ms("5124095576030431h", 1, &v, NULL), -ERANGE);
    cr_expect_eq(sg_parse_duration_ms("5124095576030431h1h", 1, &v, NULL), -ERANGE);
    cr_expect_eq(sg_parse_duration_ms("18446744073709551615ms", 1, &v, NULL), 0);
    cr_expect_eq(v, UINT64_MAX);
}

Test(sg_parse, sizes)
{
    static const struct {
        const char *text;
        uint64_t bare, bytes;
    } ok[] = {
        {"256m", 1, 256ull << 20},
        {"1g", 1, 1ull << 30},
        {"1G", 1, 1ull << 30},
        {"512k", 1, 512ull << 10},
        {"512kb", 1, 512ull << 10},
        {"64MiB", 1, 64ull << 20},
        {"100b", 1, 100},
        {"100B", 1, 100},
        {"268435456", 1, 268435456},
        {"256", SG_MIB, 256ull << 20},
        {" 1g\t", 1, 1ull << 30},
        {"0", 1, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 7;
        struct sg_error e = {0};
        cr_expect_eq(sg_parse_size_bytes(ok[i].text, ok[i].bare, &v, &e), 0, "'%s': %s", ok[i].text,
                     e.msg);
        cr_expect_eq(v, ok[i].bytes, "'%s' -> %llu", ok[i].text, (unsigned long long)v);
    }
    static const char *const bad[] = {"",   "m",   "-1m",  "+1m", "1.5g", "256x", "256mm",
                                      "1t", "1bb", "1kbb", "1mi", "1 m",  "0x10", "1e3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 7;
        struct sg_error e = {0};
        cr_expect_eq(sg_parse_size_bytes(bad[i], 1, &v, &e), -EINVAL, "'%s'", bad[i]);
        cr_expect_eq(v, 7, "'%s' wrote the result", bad[i]);
        cr_expect(strstr(e.msg, "is not a size"), "'%s': %s", bad[i], e.msg);
    }
    uint64_t v;
    cr_expect_eq(sg_parse_size_bytes("17179869184g", 1, &v, NULL), -ERANGE);
    cr_expect_eq(sg_parse_size_bytes("17179869183g", 1, &v, NULL), 0);
    cr_expect_eq(sg_parse_size_bytes("18446744073709551616", 1, &v, NULL), -ERANGE);
    cr_expect_eq(sg_parse_size_mib("1048577", 1, &v, NULL), 0);
    cr_expect_eq(v, 2, "bytes round up to whole MiB");
    cr_expect_eq(sg_parse_size_mib("512k", 1, &v, NULL), 0);
    cr_expect_eq(v, 1);
    cr_expect_eq(sg_parse_size_mib("1g", 1, &v, NULL), 0);
    cr_expect_eq(v, 1024);
    cr_expect_eq(sg_parse_size_mib("0", 1, &v, NULL), 0);
    cr_expect_eq(v, 0);
}

Test(sg_parse, integers_and_booleans)
{
    uint64_t v = 7;
    cr_expect_eq(sg_parse_u64("42", &v, NULL), 0);
    cr_expect_eq(v, 42);
    cr_expect_eq(sg_parse_u64("18446744073709551615", &v, NULL), 0);
    cr_expect_eq(v, UINT64_MAX);
    cr_expect_eq(sg_parse_u64("18446744073709551616", &v, NULL), -ERANGE);
    static const char *const bad[] = {"", "-1", "+1", "1s", "0x1", "1 2", "1.0"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(sg_parse_u64(bad[i], &v, NULL), -EINVAL, "'%s'", bad[i]);
    static const char *const yes[] = {"true", "TRUE", "1", "yes", "Yes", "on", " on "};
    static const char *const no[] = {"false", "False", "0", "no", "NO", "off"};
    static const char *const neither[] = {"", "maybe", "2", "truee", "y", "n", "of"};
    bool b;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        cr_expect(sg_parse_bool(yes[i], &b, NULL) == 0 && b, "'%s'", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        cr_expect(sg_parse_bool(no[i], &b, NULL) == 0 && !b, "'%s'", no[i]);
    for (size_t i = 0; i < sizeof(neither) / sizeof(neither[0]); i++) {
        struct sg_error e = {0};
        cr_expect_eq(sg_parse_bool(neither[i], &b, &e), -EINVAL, "'%s'", neither[i]);
        cr_expect(strstr(e.msg, "is not a boolean"), "%s", e.msg);
    }
}

Test(sg_random, hex_is_fresh_and_bounded)
{
    char a[33], b[33];
    cr_assert_eq(sg_random_hex(a, 16), 0);
    cr_assert_eq(sg_random_hex(b, 16), 0);
    cr_assert_eq(strlen(a), 32);
    cr_assert_eq(strspn(a, "0123456789abcdef"), 32);
    cr_assert_str_neq(a, b);
    char big[2 * SG_RANDOM_BYTES_MAX + 3];
    cr_assert_eq(sg_random_hex(big, SG_RANDOM_BYTES_MAX), 0);
    cr_assert_eq(strlen(big), 2 * SG_RANDOM_BYTES_MAX);
    cr_assert_eq(sg_random_hex(big, SG_RANDOM_BYTES_MAX + 1), -EINVAL);
    cr_assert_eq(sg_random_hex(big, 0), -EINVAL);
}

Test(sg_file_name, one_rule)
{
    static const char *const ok[] = {"data.csv", "A_b-9", "a.b.c", "x", "-x", "_"};
    static const char *const bad[] = {"",    ".",    "..",   ".env",        "../x", "a/b", "a..b",
                                      "a b", "a\\b", "a\nb", "caf\xc3\xa9", "a:b",  "a*b", "~"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        cr_expect(sg_file_name_ok(ok[i], strlen(ok[i])), "'%s'", ok[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_not(sg_file_name_ok(bad[i], strlen(bad[i])), "'%s'", bad[i]);
    cr_expect_not(sg_file_name_ok("a\0b", 3), "an embedded NUL");
    char name[SG_FILE_NAME_MAX + 1];
    memset(name, 'a', sizeof(name));
    cr_expect(sg_file_name_ok(name, SG_FILE_NAME_MAX));
    cr_expect_not(sg_file_name_ok(name, SG_FILE_NAME_MAX + 1));
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

Test(sg_token, first_line_trimmed_printable)
{
    char path[] = "/tmp/sg-unit-token-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char tok[SG_TOKEN_MAX];
    static const struct {
        const char *data, *token; /* token NULL: refused */
    } cases[] = {
        {"abc-123\n", "abc-123"},
        {"  abc-123 \n second line\n", "abc-123"},
        {"abc\r\n", "abc"},
        {"\tabc", "abc"},
        {"\n", NULL},
        {"", NULL},
        {"   \nabc\n", NULL},
        {"a b\n", NULL},
        {"caf\xc3\xa9\n", NULL},
        {"a\x01b", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sg_error e = {0};
        write_file(path, cases[i].data, strlen(cases[i].data));
        int r = sg_token_file_read(path, tok, &e);
        if (!cases[i].token) {
            cr_expect_eq(r, -EINVAL, "case %zu", i);
            cr_expect(strstr(e.msg, path), "case %zu: %s", i, e.msg);
            continue;
        }
        cr_expect_eq(r, 0, "case %zu: %s", i, e.msg);
        cr_expect_str_eq(tok, cases[i].token, "case %zu", i);
    }
    char longest[SG_TOKEN_MAX + 1];
    memset(longest, 'k', sizeof(longest));
    write_file(path, longest, SG_TOKEN_MAX - 1);
    cr_expect_eq(sg_token_file_read(path, tok, NULL), 0);
    cr_expect_eq(strlen(tok), SG_TOKEN_MAX - 1);
    write_file(path, longest, SG_TOKEN_MAX);
    cr_expect_eq(sg_token_file_read(path, tok, NULL), -EINVAL);
    unlink(path);
    cr_expect_eq(sg_token_file_read(path, tok, NULL), -ENOENT);
    cr_expect_eq(sg_token_file_read("/tmp", tok, NULL), -EINVAL, "not a regular file");
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

Test(sg_cond, timed_wait_runs_on_the_monotonic_clock)
{
    struct timespec ts;
    sg_cond_deadline(3000000000u + 5, &ts);
    cr_assert_eq(ts.tv_sec, 3);
    cr_assert_eq(ts.tv_nsec, 5);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cond;
    cr_assert_eq(sg_cond_init_mono(&cond), 0);
    uint64_t t0 = mono_ns();
    /* 50 ms ahead on the monotonic clock. A condition on the realtime clock
     * would read this as 1970 plus the uptime, decades ago, and return at
     * once: the elapsed time below tells the clocks apart. */
    sg_cond_deadline(t0 + 50000000u, &ts);
    pthread_mutex_lock(&mu);
    int r;
    do
        r = pthread_cond_timedwait(&cond, &mu, &ts);
    while (r == 0);
    pthread_mutex_unlock(&mu);
    cr_assert_eq(r, ETIMEDOUT);
    cr_assert_geq(mono_ns() - t0, 50000000u, "the wait ended before its deadline");
    pthread_cond_destroy(&cond);
}

Test(sg_file_name, reserved_names)
{
    const char *reserved[] = {"main.py", "main.js", "artifacts"};
    const char *free_[] = {"main.pyc", "Main.py", "main.py.csv", "artifacts.txt", "main", "js"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        cr_expect(sg_file_name_reserved(reserved[i], strlen(reserved[i])), "'%s'", reserved[i]);
    for (size_t i = 0; i < sizeof(free_) / sizeof(free_[0]); i++)
        cr_expect_not(sg_file_name_reserved(free_[i], strlen(free_[i])), "'%s'", free_[i]);
    cr_expect(sg_file_name_reserved("main.pyX", 7), "the first len bytes are the name");
}

/* One GET on a new connection: the bytes of answer read (0 when the
 * connection was refused or closed unanswered). */
static ssize_t get_once(uint16_t port)
{
    static const char req[] = "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ssize_t got = 0, r;
    char buf[512];
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && write(fd, req, sizeof(req) - 1) > 0)
        while ((r = read(fd, buf, sizeof(buf))) > 0)
            got += r;
    close(fd);
    return got;
}

/* Clients connecting in a loop, each sending one request, until told to stop. */
struct hammer {
    uint16_t port;
    atomic_int stop;
};

static void *hammer_main(void *arg)
{
    struct hammer *h = arg;
    while (!atomic_load(&h->stop))
        get_once(h->port);
    return NULL;
}

/* The daemon's event threads are busy with connections while the server
 * quiesces: with MHD_quiesce_daemon() the caller and those threads
 * raced to take it out of an epoll set, and the loser aborted the process.
 * After quiesce no new connection is answered; stop is clean every time. */
Test(httpsrv, quiesce_under_load_does_not_abort, .timeout = 120)
{
    for (int i = 0; i < 60; i++) {
        struct sg_httpsrv *srv = start_echo();
        struct hammer h = {.port = sg_httpsrv_port(srv)};
        pthread_t t[3];
        for (int k = 0; k < 3; k++)
            pthread_create(&t[k], NULL, hammer_main, &h);
        struct timespec nap = {0, (long)(1 + i % 7) * 1000 * 1000};
        nanosleep(&nap, NULL);
        sg_httpsrv_quiesce(srv);
        cr_expect_eq(get_once(h.port), 0, "round %d", i);
        sg_httpsrv_stop(srv);
        atomic_store(&h.stop, 1);
        for (int k = 0; k < 3; k++)
            pthread_join(t[k], NULL);
    }
}

/* Quiesce, then stop, many times: after quiesce new connections get no
 * answer, and stop is clean (quiesce_under_load_does_not_abort provokes
 * the race that made libmicrohttpd abort). */
Test(httpsrv, quiesce_then_stop_does_not_abort)
{
    for (int i = 0; i < 40; i++) {
        struct sg_httpsrv *srv = start_echo();
        uint16_t port = sg_httpsrv_port(srv);
        char *resp = raw_request(port, "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
        cr_assert(strstr(resp, "200 OK"), "%s", resp);
        sg_httpsrv_quiesce(srv);
        /* Not served, not queued: closed at once. */
        cr_expect_eq(get_once(port), 0);
        sg_httpsrv_stop(srv);
    }
}
