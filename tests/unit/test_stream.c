/* Unit tests for streamed output and cancel: the gateway's parser of the
 * executor's event stream (gw_sse), the executor's reading of the runner's
 * stream frames (job_feed with hooks), the executor's and the gateway's job
 * tables (exec_jobs, gw_jobtab), and httpsrv's streamed answers. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec_jobs.h"
#include "gw_jobtab.h"
#include "gw_sse.h"
#include "httpsrv.h"
#include "job.h"
#include "sg_time.h"

struct seen {
    char log[4096];
    int n, stop_at;
};

static int collect(void *ud, const char *event, const char *data, size_t len)
{
    struct seen *s = ud;
    size_t at = strlen(s->log);
    snprintf(s->log + at, sizeof(s->log) - at, "%s=%.*s|", event ? event : "#", (int)len,
             data ? data : "");
    if (data)
        cr_assert_eq(data[len], '\0', "data is NUL-terminated");
    return ++s->n == s->stop_at ? -ECANCELED : 0;
}

static const char STREAM[] = ": hb\n\nevent: stdout\ndata: {\"text\":\"a\\n\"}\n\n"
                             "event: result\ndata: {\"status\":\"success\"}\n\n";

Test(sse, parses_the_executor_stream_in_any_pieces)
{
    for (size_t step = 1; step <= sizeof(STREAM); step++) {
        struct gw_sse p;
        struct seen s = {0};
        gw_sse_init(&p, 1024);
        for (size_t off = 0; off < sizeof(STREAM) - 1; off += step) {
            size_t n = sizeof(STREAM) - 1 - off < step ? sizeof(STREAM) - 1 - off : step;
            cr_assert_eq(gw_sse_feed(&p, STREAM + off, n, collect, &s), 0, "step %zu", step);
        }
        cr_assert_str_eq(s.log, "#=|stdout={\"text\":\"a\\n\"}|result={\"status\":\"success\"}|");
        cr_assert(gw_sse_idle(&p));
        gw_sse_free(&p);
    }
}

static int feed_all(const char *text, size_t cap, struct seen *s)
{
    struct gw_sse p;
    gw_sse_init(&p, cap);
    int r = gw_sse_feed(&p, text, strlen(text), collect, s);
    int again = gw_sse_feed(&p, "\n", 1, collect, s);
    if (r < 0)
        cr_assert_eq(again, -EPROTO, "a failed parser stays failed");
    gw_sse_free(&p);
    return r;
}

Test(sse, refuses_what_the_executor_never_writes)
{
    static const char *const bad[] = {
        "event: stdout\n\n",                         /* a name without data */
        "data: 1\ndata: 2\n\n",                      /* two data lines */
        "event: a\nevent: b\ndata: 1\n\n",           /* two names */
        "event: Stdout\ndata: 1\n\n",                /* not [a-z] */
        "event: averyveryverylongname\ndata: 1\n\n", /* over the name cap */
        "id: 3\n\n",                                 /* a field sandgate does not use */
        "data:1\n\n",                                /* no space after the colon */
        "data: a\r\n\n",                             /* CR */
        "event: stdout\n: hb\ndata: 1\n\n",          /* a comment inside an event */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct seen s = {0};
        cr_expect_eq(feed_all(bad[i], 64, &s), -EPROTO, "input %zu", i);
    }
}

Test(sse, caps_an_event_and_passes_the_callbacks_verdict)
{
    struct seen s = {0};
    cr_assert_eq(feed_all("data: 0123456789\n\n", 8, &s), -E2BIG);
    cr_assert_eq(s.n, 0);
    struct seen t = {.stop_at = 1};
    cr_assert_eq(feed_all("data: 1\n\ndata: 2\n\n", 64, &t), -ECANCELED);
    cr_assert_str_eq(t.log, "message=1|");
    struct gw_sse p;
    gw_sse_init(&p, 64);
    cr_assert_eq(gw_sse_feed(&p, "event: stdout\ndata: {}", 22, collect, &s), 0);
    cr_assert_not(gw_sse_idle(&p), "half an event is not the end");
    gw_sse_free(&p);
}

/* --- the executor's side: frames inside the attach stream --- */

struct frames {
    char text[256];
    int n, fail;
};

static int on_frame(void *ud, const char *name, json_t *text)
{
    struct frames *f = ud;
    size_t at = strlen(f->text);
    snprintf(f->text + at, sizeof(f->text) - at, "%s:%s|", name, json_string_value(text));
    f->n++;
    return f->fail ? -EPIPE : 0;
}

/* One attach frame (stream 1 = stdout) holding line. */
static size_t attach_frame(const char *line, char *out)
{
    size_t n = strlen(line);
    unsigned char h[8] = {1,
                          0,
                          0,
                          0,
                          (unsigned char)(n >> 24),
                          (unsigned char)(n >> 16),
                          (unsigned char)(n >> 8),
                          (unsigned char)n};
    memcpy(out, h, 8);
    memcpy(out + 8, line, n);
    return n + 8;
}

#define NONCE "0123456789abcdef0123"

Test(job_frames, frames_go_to_the_hook_and_never_end_the_job)
{
    struct frames f = {0};
    struct job_hooks h = {.cancel_fd = -1, .client_fd = -1, .frame = on_frame, .ud = &f};
    struct job_io io;
    job_io_init(&io, 1 << 16, NONCE);
    io.hooks = &h;
    struct attach_parser p = {0};
    char buf[1024];
    const char *lines[] = {
        "\n{\"sandgate_runner\":1,\"nonce\":\"" NONCE
        "\",\"stream\":\"stdout\",\"text\":\"hi\\n\"}\n",
        /* a forged frame without the nonce, and one with a bad stream name: ignored */
        "{\"sandgate_runner\":1,\"nonce\":\"xxxxxxxxxxxxxxxxxxxx\",\"stream\":\"stdout\",\"text\":"
        "\"f\"}\n",
        "{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",\"stream\":\"result\",\"text\":\"f\"}\n",
        "{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",\"stream\":\"stderr\",\"text\":\"e\"}\n",
    };
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(job_feed(&io, &p, buf, attach_frame(lines[i], buf)), 0, "line %zu", i);
    cr_assert_str_eq(f.text, "stdout:hi\n|stderr:e|");
    cr_assert_null(io.result);
    size_t n =
        attach_frame("{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",\"outcome\":\"ok\"}\n", buf);
    cr_assert_eq(job_feed(&io, &p, buf, n), 1, "the result line still ends the job");
    cr_assert_str_eq(json_string_value(json_object_get(io.result, "outcome")), "ok");
    job_io_free(&io);
}

Test(job_frames, a_failing_hook_means_the_client_went)
{
    struct frames f = {.fail = 1};
    struct job_hooks h = {.cancel_fd = -1, .client_fd = -1, .frame = on_frame, .ud = &f};
    struct job_io io;
    job_io_init(&io, 1 << 16, NONCE);
    io.hooks = &h;
    struct attach_parser p = {0};
    char buf[512];
    size_t n = attach_frame("{\"sandgate_runner\":1,\"nonce\":\"" NONCE
                            "\",\"stream\":\"stdout\",\"text\":\"x\"}\n",
                            buf);
    cr_assert_eq(job_feed(&io, &p, buf, n), -ECONNRESET);
    job_io_free(&io);
}

static void count_gone(void *ud)
{
    ((struct frames *)ud)->n += 100;
}

Test(job_frames, with_client_gone_a_hang_up_is_told_once_and_the_result_still_ends_it)
{
    struct frames f = {.fail = 1};
    struct job_hooks h = {
        .cancel_fd = -1, .client_fd = -1, .frame = on_frame, .client_gone = count_gone, .ud = &f};
    struct job_io io;
    job_io_init(&io, 1 << 16, NONCE);
    io.hooks = &h;
    struct attach_parser p = {0};
    char buf[1024];
    const char *frame =
        "{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",\"stream\":\"stdout\",\"text\":\"x\"}\n";
    cr_assert_eq(job_feed(&io, &p, buf, attach_frame(frame, buf)), 0, "the cell goes on");
    cr_assert_eq(job_feed(&io, &p, buf, attach_frame(frame, buf)), 0);
    cr_assert_eq(f.n, 101, "one frame tried, the client's going told once, no frame after");
    cr_assert(io.client_left);
    size_t n =
        attach_frame("{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",\"outcome\":\"ok\"}\n", buf);
    cr_assert_eq(job_feed(&io, &p, buf, n), 1, "the cell's result is still read");
    job_io_free(&io);
}

/* --- job tables --- */

Test(exec_jobs, cancel_signals_the_running_job_or_waits_for_it)
{
    struct exec_jobs *t = NULL;
    cr_assert_eq(exec_jobs_new(2, &t), 0);
    struct exec_job_slot *a = exec_jobs_add(t, "job-a");
    struct exec_job_slot *b = exec_jobs_add(t, "job-b");
    cr_assert(a && b);
    cr_assert_null(exec_jobs_add(t, "job-c"), "the table is bounded");
    struct pollfd pf = {.fd = exec_job_cancel_fd(a), .events = POLLIN};
    cr_assert_eq(poll(&pf, 1, 0), 0);
    cr_assert_eq(exec_jobs_cancel(t, "job-a"), 1);
    cr_assert_eq(poll(&pf, 1, 0), 1, "the job's read loop wakes");
    cr_assert(exec_job_cancelled(a));
    cr_assert_not(exec_job_cancelled(b));
    exec_jobs_remove(t, a);
    /* a cancel before the job arrives is kept for it */
    cr_assert_eq(exec_jobs_cancel(t, "job-late"), 0);
    struct exec_job_slot *late = exec_jobs_add(t, "job-late");
    cr_assert(exec_job_cancelled(late));
    exec_jobs_remove(t, late);
    struct exec_job_slot *again = exec_jobs_add(t, "job-late");
    cr_assert_not(exec_job_cancelled(again), "used once");
    pf.fd = exec_job_cancel_fd(again);
    cr_assert_eq(poll(&pf, 1, 0), 0, "a reused slot starts unsignalled");
    exec_jobs_free(t);
}

Test(gw_jobtab, tenant_scoped_states_and_the_executor_handshake)
{
    struct gw_jobtab *t = gw_jobtab_new(1);
    char exec[GW_URL_MAX];
    cr_assert_eq(gw_jobtab_add(t, "j1", "a"), 0);
    cr_assert_eq(gw_jobtab_add(t, "j2", "a"), -ENOSPC);
    cr_assert_eq(gw_jobtab_cancel(t, "j1", "b", exec), GW_JOB_UNKNOWN, "another tenant's");
    cr_assert_not(gw_jobtab_cancel_asked(t, "j1"));
    cr_assert_eq(gw_jobtab_cancel(t, "j1", "a", exec), GW_JOB_RUNNING);
    cr_assert_str_eq(exec, "", "no executor yet");
    cr_assert_eq(gw_jobtab_set_executor(t, "j1", "http://127.0.0.1:1"), 1,
                 "the cancel came first: the router forwards it");
    cr_assert_eq(gw_jobtab_cancel(t, "j1", "a", exec), GW_JOB_RUNNING);
    cr_assert_str_eq(exec, "http://127.0.0.1:1");
    gw_jobtab_end(t, "j1");
    cr_assert_eq(gw_jobtab_cancel(t, "j1", "a", exec), GW_JOB_ENDED);
    cr_assert_eq(gw_jobtab_cancel(t, "j1", "b", exec), GW_JOB_UNKNOWN);
    cr_assert_eq(gw_jobtab_cancel(t, "nope", "a", exec), GW_JOB_UNKNOWN);
    cr_assert_eq(gw_jobtab_add(t, "j2", "a"), 0, "the slot is free again");
    gw_jobtab_free(t);
}

/* --- httpsrv: streamed answers on a real loopback server --- */

static atomic_int step;         /* the test and the handler take turns */
static atomic_int saw_gone;     /* the handler saw the client go */
static atomic_int write_failed; /* and a write after that failed */
static atomic_int req_intact;   /* method and url readable after the hang-up, headers gone */

static void wait_step(int want)
{
    for (int i = 0; i < 5000 && atomic_load(&step) < want; i++)
        usleep(1000);
    cr_assert_geq(atomic_load(&step), want, "step %d never came", want);
}

static void streaming_handler(void *ctx, const struct sg_http_request *req,
                              struct sg_http_response *resp)
{
    (void)ctx;
    struct sg_http_response head = {.status = 200};
    sg_http_add_header(&head, "X-Test", "stream");
    struct sg_http_stream *st = sg_http_stream_begin(req, &head);
    resp->status = 500; /* ignored: the stream answers */
    if (!st)
        return;
    sg_http_stream_write(st, "first", 5);
    atomic_store(&step, 1);
    if (strcmp(req->url, "/hangup") == 0) {
        uint64_t until = sg_time_mono_ns() + 5000000000u;
        while (!sg_http_stream_gone(st) && sg_time_mono_ns() < until)
            usleep(1000);
        atomic_store(&saw_gone, sg_http_stream_gone(st));
        usleep(200000); /* let libmicrohttpd close the connection and free its memory */
        atomic_store(&req_intact, strcmp(req->method, "POST") == 0 &&
                                      strcmp(req->url, "/hangup") == 0 &&
                                      sg_http_header(req, "Host") == NULL);
        for (int i = 0; i < 100 && !atomic_load(&write_failed); i++) {
            atomic_store(&write_failed, sg_http_stream_write(st, "more", 4) == -EPIPE);
            usleep(10000);
        }
    } else if (strcmp(req->url, "/big") == 0) {
        /* one write three times the stream's buffer, then a marker */
        size_t n = 3 * SG_HTTP_STREAM_BUF_MAX;
        char *big = malloc(n);
        cr_assert(big);
        memset(big, 'b', n);
        atomic_store(&write_failed, sg_http_stream_write(st, big, n) != 0);
        free(big);
        sg_http_stream_write(st, "END", 3);
    } else {
        wait_step(2); /* the client has read the first piece */
        sg_http_stream_write(st, "second", 6);
    }
    sg_http_stream_end(st);
    atomic_store(&step, 3);
}

static int connect_and_send(uint16_t port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[256];
    int n = snprintf(req, sizeof(req),
                     "POST %s HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n",
                     path);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    return fd;
}

/* Read until needle shows up in what was read (or EOF / 5 s). */
static int read_until(int fd, char *buf, size_t cap, size_t *len, const char *needle)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (!strstr(buf, needle) && *len < cap - 1 && poll(&p, 1, 5000) == 1) {
        ssize_t r = read(fd, buf + *len, cap - 1 - *len);
        if (r <= 0)
            break;
        *len += (size_t)r;
        buf[*len] = '\0';
    }
    return strstr(buf, needle) != NULL;
}

static struct sg_httpsrv *stream_server(void)
{
    struct sg_httpsrv_config cfg = {.bind_addr = "127.0.0.1", .max_body = 16, .workers = 2};
    struct sg_httpsrv *srv = NULL;
    cr_assert_eq(sg_httpsrv_start(&cfg, &(struct sg_http_handlers){.handle = streaming_handler},
                                  NULL, &srv, NULL),
                 0);
    atomic_store(&step, 0);
    return srv;
}

Test(httpsrv_stream, the_answer_starts_before_the_handler_ends)
{
    struct sg_httpsrv *srv = stream_server();
    int fd = connect_and_send(sg_httpsrv_port(srv), "/pieces");
    char buf[4096] = "";
    size_t len = 0;
    cr_assert(read_until(fd, buf, sizeof(buf), &len, "first"), "%s", buf);
    cr_assert_eq(atomic_load(&step), 1, "the handler is still running");
    cr_assert(strstr(buf, "200 OK") && strstr(buf, "X-Test: stream") &&
                  strstr(buf, "Content-Type: text/event-stream") &&
                  strstr(buf, "Transfer-Encoding: chunked"),
              "%s", buf);
    atomic_store(&step, 2);
    cr_assert(read_until(fd, buf, sizeof(buf), &len, "0\r\n\r\n"), "the end: %s", buf);
    cr_assert(strstr(buf, "second"), "%s", buf);
    close(fd);
    sg_httpsrv_stop(srv);
}

Test(httpsrv_stream, a_client_that_hangs_up_is_seen_and_writes_fail)
{
    struct sg_httpsrv *srv = stream_server();
    int fd = connect_and_send(sg_httpsrv_port(srv), "/hangup");
    char buf[4096] = "";
    size_t len = 0;
    cr_assert(read_until(fd, buf, sizeof(buf), &len, "first"), "%s", buf);
    uint64_t t0 = sg_time_mono_ns();
    close(fd);
    wait_step(3);
    cr_assert(atomic_load(&saw_gone), "the handler never saw the hang-up");
    cr_assert(atomic_load(&write_failed), "writes after the hang-up kept succeeding");
    cr_assert(atomic_load(&req_intact), "the request's method and url outlive the connection");
    cr_assert_lt(sg_time_mono_ns() - t0, 3000000000u);
    sg_httpsrv_stop(srv); /* under ASan: nothing freed twice or used after free */
}

/* A write larger than the stream's buffer (a result event carrying
 * max_output_bytes of output and artifacts) goes out whole, in pieces as
 * the client reads: it was refused and the stream ended without it. */
Test(httpsrv_stream, a_write_larger_than_the_buffer_reaches_the_client)
{
    struct sg_httpsrv *srv = stream_server();
    atomic_store(&write_failed, 0);
    int fd = connect_and_send(sg_httpsrv_port(srv), "/big");
    size_t cap = 4 * SG_HTTP_STREAM_BUF_MAX, len = 0, bs = 0;
    char *buf = calloc(1, cap);
    cr_assert(buf);
    cr_assert(read_until(fd, buf, cap, &len, "END"), "read %zu bytes", len);
    for (size_t i = 0; i < len; i++)
        bs += buf[i] == 'b';
    cr_assert_geq(bs, 3 * SG_HTTP_STREAM_BUF_MAX, "only %zu of the bytes arrived", bs);
    cr_assert_not(atomic_load(&write_failed));
    free(buf);
    close(fd);
    wait_step(3);
    sg_httpsrv_stop(srv);
}
