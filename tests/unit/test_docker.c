/* Unit tests of the executor's parsers of engine output: the attach stream's
 * frames, the upgrade reply, the Engine API replies, the job stream (result
 * line with nonce), the container spec and the seccomp probe profile. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "exec_config.h"
#include "docker.h"
#include "job.h"
#include "membudget.h"
#include "sandbox.h"
#include "seccomp.h"

struct collected {
    char out[256], err[256];
    size_t nout, nerr;
    int calls;
};

static int collect(void *ctx, int stream, const char *data, size_t len)
{
    struct collected *c = ctx;
    char *dst = stream == ATTACH_STDOUT ? c->out : c->err;
    size_t *n = stream == ATTACH_STDOUT ? &c->nout : &c->nerr;
    cr_assert(*n + len < sizeof(c->out));
    memcpy(dst + *n, data, len);
    *n += len;
    c->calls++;
    return 0;
}

static size_t frame(unsigned char *buf, int stream, const char *payload)
{
    size_t n = strlen(payload);
    unsigned char hdr[8] = {(unsigned char)stream,
                            0,
                            0,
                            0,
                            (unsigned char)(n >> 24),
                            (unsigned char)(n >> 16),
                            (unsigned char)(n >> 8),
                            (unsigned char)n};
    memcpy(buf, hdr, 8);
    memcpy(buf + 8, payload, n);
    return 8 + n;
}

Test(attach, frames_split_anywhere_give_the_same_streams)
{
    unsigned char buf[256];
    size_t n = frame(buf, 1, "hello ");
    n += frame(buf + n, 2, "diag");
    n += frame(buf + n, 1, "");
    n += frame(buf + n, 1, "world");
    for (size_t step = 1; step <= n; step++) {
        struct attach_parser p = {0};
        struct collected c = {0};
        for (size_t off = 0; off < n; off += step) {
            size_t len = off + step <= n ? step : n - off;
            cr_assert_eq(attach_parse(&p, buf + off, len, collect, &c), 0);
        }
        cr_assert_eq(c.nout, 11, "step %zu", step);
        cr_assert_arr_eq(c.out, "hello world", 11);
        cr_assert_arr_eq(c.err, "diag", 4);
    }
}

Test(attach, malformed_headers_rejected)
{
    unsigned char bad_stream[8] = {4, 0, 0, 0, 0, 0, 0, 1};
    unsigned char bad_pad[8] = {1, 0, 7, 0, 0, 0, 0, 1};
    struct attach_parser p = {0};
    struct collected c = {0};
    cr_assert_eq(attach_parse(&p, bad_stream, 8, collect, &c), -EPROTO);
    struct attach_parser q = {0};
    cr_assert_eq(attach_parse(&q, bad_pad, 8, collect, &c), -EPROTO);
}

static int stop_sink(void *ctx, int stream, const char *data, size_t len)
{
    (void)ctx, (void)stream, (void)data, (void)len;
    return -ECANCELED;
}

Test(attach, sink_error_stops_parsing)
{
    unsigned char buf[64];
    size_t n = frame(buf, 1, "x");
    struct attach_parser p = {0};
    cr_assert_eq(attach_parse(&p, buf, n, stop_sink, NULL), -ECANCELED);
}

Test(attach, upgrade_status_line)
{
    int s = 0;
    const char ok[] = "HTTP/1.1 101 UPGRADED\r\nUpgrade: tcp\r\n\r\n";
    cr_assert_eq(attach_parse_status(ok, sizeof(ok) - 1, &s), 0);
    cr_assert_eq(s, 101);
    cr_assert_eq(attach_parse_status("HTTP/1.0 200\r\n\r\n", 16, &s), 0);
    cr_assert_eq(s, 200);
    cr_assert_eq(attach_parse_status("HTTP/2 101 x\r\n\r\n", 16, &s), -EPROTO);
    cr_assert_eq(attach_parse_status("HTTP/1.1 1O1 x\r\n\r\n", 18, &s), -EPROTO);
    cr_assert_eq(attach_parse_status("HTTP/1.1 1011x\r\n", 16, &s), -EPROTO);
    cr_assert_eq(attach_parse_status("HTTP", 4, &s), -EPROTO);
}

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

Test(docker, parse_create_and_ids)
{
    char id[DOCKER_ID_LEN + 1];
    const char *ok = "{\"Id\":\"" ID64 "\",\"Warnings\":[]}";
    cr_assert_eq(docker_parse_create(ok, strlen(ok), id), 0);
    cr_assert_str_eq(id, ID64);
    const char *bad[] = {
        "{\"Id\":\"../../etc\"}",
        "{\"Id\":5}",
        "[]",
        "{",
        "",
        "{\"Id\":\"" ID64 "0\"}",
        "{\"Id\":\"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(docker_parse_create(bad[i], strlen(bad[i]), id), -EPROTO, "%s", bad[i]);
    cr_assert(docker_id_valid(ID64));
    cr_assert_not(docker_id_valid("abc"));
}

Test(docker, parse_inspect_state)
{
    struct docker_state st;
    const char *oom = "{\"State\":{\"Status\":\"exited\",\"Running\":false,\"OOMKilled\":true,"
                      "\"ExitCode\":137,\"Error\":\"\"}}";
    cr_assert_eq(docker_parse_inspect(oom, strlen(oom), &st), 0);
    cr_assert(st.oom_killed);
    cr_assert_not(st.running);
    cr_assert_eq(st.exit_code, 137);
    cr_assert_str_eq(st.status, "exited");
    const char *bad[] = {"{\"State\":{\"ExitCode\":\"x\"}}", "{\"State\":[]}", "{}",
                         "{\"State\":{\"ExitCode\":99999999999}}"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(docker_parse_inspect(bad[i], strlen(bad[i]), &st), -EPROTO);
}

Test(docker, parse_oom_events)
{
    const char *id = "4f1c0e0d6a9b7c3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e";
    char other[] = "4f1c0e0d6a9b7c3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9f";
    char text[1024];
    /* The current shape (Action, Actor.ID) after a line that is not JSON. */
    snprintf(text, sizeof(text),
             "garbage\n{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"ID\":\"%s\"}}\n"
             "{\"Type\":\"container\",\"Action\":\"oom\",\"Actor\":{\"ID\":\"%s\"}}\n",
             id, id);
    cr_assert(docker_parse_oom_events(text, strlen(text), id));
    cr_assert_not(docker_parse_oom_events(text, strlen(text), other));
    /* The old shape (status, id), last line without a newline. */
    snprintf(text, sizeof(text), "{\"status\":\"oom\",\"id\":\"%s\"}", id);
    cr_assert(docker_parse_oom_events(text, strlen(text), id));
    /* Only the die event: no OOM. Empty and NULL bodies: none. */
    snprintf(text, sizeof(text), "{\"Action\":\"die\",\"Actor\":{\"ID\":\"%s\"}}\n", id);
    cr_assert_not(docker_parse_oom_events(text, strlen(text), id));
    cr_assert_not(docker_parse_oom_events("", 0, id));
    cr_assert_not(docker_parse_oom_events(NULL, 0, id));
    /* An "oom" that is not a string, or an id that is not one. */
    const char *odd = "{\"Action\":[\"oom\"],\"Actor\":{\"ID\":7}}\n";
    cr_assert_not(docker_parse_oom_events(odd, strlen(odd), id));
}

Test(docker, parse_wait_runtimes_list_message)
{
    int code = 0;
    cr_assert_eq(docker_parse_wait("{\"StatusCode\":2}", 16, &code), 0);
    cr_assert_eq(code, 2);
    bool found = false;
    const char *info = "{\"Runtimes\":{\"runc\":{},\"runsc\":{\"path\":\"/usr/bin/runsc\"}}}";
    cr_assert_eq(docker_parse_runtimes(info, strlen(info), "runsc", &found), 0);
    cr_assert(found);
    cr_assert_eq(docker_parse_runtimes(info, strlen(info), "kata", &found), 0);
    cr_assert_not(found);
    cr_assert_eq(docker_parse_runtimes("{}", 2, "runsc", &found), -EPROTO);
    char(*ids)[DOCKER_ID_LEN + 1] = NULL;
    size_t n = 0;
    const char *list = "[{\"Id\":\"" ID64 "\"},{\"Id\":\"" ID64 "\"}]";
    cr_assert_eq(docker_parse_list(list, strlen(list), &ids, &n), 0);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(ids[1], ID64);
    free(ids);
    const char *badlist = "[{\"Id\":\"" ID64 "\"},{\"Id\":\"nope\"}]";
    cr_assert_eq(docker_parse_list(badlist, strlen(badlist), &ids, &n), -EPROTO);
    char msg[16];
    const char *m = "{\"message\":\"no such container: abcdef\"}";
    docker_parse_message(m, strlen(m), msg, sizeof(msg));
    cr_assert_str_eq(msg, "no such contain");
    docker_parse_message("garbage", 7, msg, sizeof(msg));
    cr_assert_str_eq(msg, "");
}

static struct exec_config test_config(void)
{
    struct exec_config c;
    const char *args[] = {"x",          "--language", "python",      "--seccomp", "none",
                          "--instance", "unit-1",     "--memory-mb", "300",       "--pids-limit",
                          "150",        "--cpus",     "0.5"};
    char *argv[14] = {0};
    for (int i = 0; i < 13; i++)
        argv[i] = strdup(args[i]); /* getopt wants char * */
    cr_assert_eq(exec_config_parse(13, argv, &c, NULL), 0);
    for (int i = 0; i < 13; i++)
        free(argv[i]);
    return c;
}

Test(sandbox, create_body_carries_every_security_setting)
{
    struct exec_config c = test_config();
    char *body = NULL;
    cr_assert_eq(
        sandbox_create_body(&c, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}", NULL, &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    json_t *hc = json_object_get(j, "HostConfig");
    cr_assert_str_eq(json_string_value(json_object_get(j, "User")), "65534:65534");
    cr_assert(json_is_true(json_object_get(j, "OpenStdin")));
    cr_assert(json_is_false(json_object_get(j, "Tty")));
    cr_assert(json_is_true(json_object_get(j, "NetworkDisabled")));
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(j, "Labels"), EXEC_LABEL_KEY)), "unit-1");
    cr_assert_str_eq(json_string_value(json_object_get(hc, "Runtime")), "runsc");
    cr_assert_str_eq(json_string_value(json_object_get(hc, "NetworkMode")), "none");
    cr_assert(json_is_true(json_object_get(hc, "ReadonlyRootfs")));
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "ALL");
    cr_assert_eq(json_integer_value(json_object_get(hc, "Memory")), 300LL << 20);
    cr_assert_eq(json_integer_value(json_object_get(hc, "MemorySwap")), 300LL << 20);
    cr_assert_eq(json_integer_value(json_object_get(hc, "NanoCpus")), 500000000LL);
    cr_assert_eq(json_integer_value(json_object_get(hc, "PidsLimit")), 150);
    json_t *so = json_object_get(hc, "SecurityOpt");
    cr_assert_str_eq(json_string_value(json_array_get(so, 0)), "no-new-privileges:true");
    cr_assert_str_eq(json_string_value(json_array_get(so, 1)),
                     "seccomp={\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
    json_t *tmpfs = json_object_get(hc, "Tmpfs");
    cr_assert(strstr(json_string_value(json_object_get(tmpfs, "/workspace")), "size=64m"));
    cr_assert(strstr(json_string_value(json_object_get(tmpfs, "/tmp")), "uid=65534"));
    json_t *ul = json_object_get(hc, "Ulimits");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ul, 0), "Name")), "nofile");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ul, 1), "Name")), "fsize");
    cr_assert_null(json_object_get(j, "Entrypoint"));
    json_decref(j);
    free(body);
}

static bool env_has(json_t *spec, const char *kv)
{
    json_t *env = json_object_get(spec, "Env"), *v;
    size_t i;
    json_array_foreach(env, i, v) if (strcmp(json_string_value(v), kv) == 0) return true;
    return false;
}

Test(sandbox, guard_off_only_from_the_executors_own_flag)
{
    struct exec_config c = test_config();
    cr_assert(!c.test_guard_off);
    char *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    cr_assert(!env_has(j, EXEC_TEST_GUARD_OFF_ENV));
    json_decref(j);
    free(body);
    /* no environment variable sets it */
    setenv("SANDGATE_TEST_GUARD_OFF", "1", 1);
    c = test_config();
    unsetenv("SANDGATE_TEST_GUARD_OFF");
    cr_assert(!c.test_guard_off);
    char *argv[] = {strdup("x"), strdup("--language"), strdup("python"), strdup("--test-guard-off"),
                    NULL};
    cr_assert_eq(exec_config_parse(4, argv, &c, NULL), 0);
    for (int i = 0; i < 4; i++)
        free(argv[i]);
    cr_assert(c.test_guard_off);
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &body, NULL), 0);
    j = json_loads(body, 0, NULL);
    cr_assert(env_has(j, EXEC_TEST_GUARD_OFF_ENV));
    json_decref(j);
    free(body);
}

Test(sandbox, split_identity_image_runs_the_runner_as_root_with_five_caps)
{
    struct exec_config c = test_config();
    char *body = NULL;
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    cr_assert_null(json_object_get(json_object_get(j, "HostConfig"), "CapAdd"));
    json_decref(j);
    free(body);
    c.identity_split = true;
    cr_assert_eq(sandbox_create_body(&c, NULL, NULL, &body, NULL), 0);
    j = json_loads(body, 0, NULL);
    json_t *hc = json_object_get(j, "HostConfig"), *add = json_object_get(hc, "CapAdd");
    cr_assert_str_eq(json_string_value(json_object_get(j, "User")), "0:0");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "ALL");
    cr_assert_eq(json_array_size(add), 5);
    const char *want[] = {"SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "KILL"};
    for (size_t i = 0; i < 5; i++)
        cr_assert_str_eq(json_string_value(json_array_get(add, i)), want[i]);
    cr_assert(json_is_true(json_object_get(hc, "ReadonlyRootfs")));
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(hc, "SecurityOpt"), 0)),
                     "no-new-privileges:true");
    json_decref(j);
    free(body);
}

Test(docker, image_identity_label)
{
    bool split = true;
    const char *yes = "{\"Config\":{\"Labels\":{\"org.sandgate.identity\":\"split\"}}}";
    const char *other = "{\"Config\":{\"Labels\":{\"org.sandgate.identity\":\"same\"}}}";
    cr_assert_eq(docker_parse_image_split(yes, strlen(yes), &split), 0);
    cr_assert(split);
    cr_assert_eq(docker_parse_image_split(other, strlen(other), &split), 0);
    cr_assert(!split);
    const char *none = "{\"Config\":{\"Labels\":null}}";
    cr_assert_eq(docker_parse_image_split(none, strlen(none), &split), 0);
    cr_assert(!split);
    cr_assert_eq(docker_parse_image_split("[", 1, &split), -EPROTO);
}

Test(sandbox, no_profile_means_unconfined_not_dockers_default)
{
    struct exec_config c = test_config();
    char *body = NULL;
    const char *const argv[] = {"mkdir", "/tmp/x", NULL};
    cr_assert_eq(sandbox_create_body(&c, NULL, argv, &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    json_t *so = json_object_get(json_object_get(j, "HostConfig"), "SecurityOpt");
    cr_assert_str_eq(json_string_value(json_array_get(so, 1)), "seccomp=unconfined");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "Entrypoint"), 0)),
                     "mkdir");
    json_decref(j);
    free(body);
}

Test(seccomp, probe_profile_denies_mkdir_everywhere)
{
    const char *profile =
        "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\",\"mkdir\"],"
        "\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"mkdirat\"],\"action\":\"SCMP_ACT_ALLOW\"}]}";
    char *out = NULL;
    cr_assert_eq(seccomp_probe_profile(profile, &out, NULL), 0);
    json_t *j = json_loads(out, 0, NULL);
    json_t *sys = json_object_get(j, "syscalls");
    cr_assert_eq(json_array_size(sys), 2, "the mkdirat-only rule is gone: %s", out);
    json_t *first = json_object_get(json_array_get(sys, 0), "names");
    cr_assert_eq(json_array_size(first), 1);
    cr_assert_str_eq(json_string_value(json_array_get(first, 0)), "read");
    json_t *probe = json_array_get(sys, 1);
    cr_assert_str_eq(json_string_value(json_object_get(probe, "action")), "SCMP_ACT_ERRNO");
    cr_assert_eq(json_integer_value(json_object_get(probe, "errnoRet")), EPERM);
    json_decref(j);
    free(out);
    cr_assert_eq(seccomp_probe_profile("[1]", &out, NULL), -EINVAL);
}

Test(seccomp, probe_verdict)
{
    cr_assert(seccomp_probe_denied(1, "mkdir: cannot create directory '/tmp/x': Operation not "
                                      "permitted\n"));
    cr_assert_not(seccomp_probe_denied(0, ""));
    cr_assert_not(seccomp_probe_denied(1, "mkdir: cannot create directory: Read-only file "
                                          "system"));
    cr_assert_not(seccomp_probe_denied(1, NULL));
}

Test(seccomp, shipped_profile_loads)
{
    char *json = NULL;
    cr_assert_eq(seccomp_load("images/seccomp/sandbox.json", &json, NULL), 0);
    cr_assert(strstr(json, "\"ptrace\""));
    free(json);
    cr_assert_lt(seccomp_load("/nonexistent/profile.json", &json, NULL), 0);
}

#define NONCE "0123456789abcdef0123456789abcdef"

static int feed_frames(struct job_io *io, const char *const *chunks)
{
    struct attach_parser p = {0};
    unsigned char buf[1024];
    int r = 0;
    for (size_t i = 0; chunks[i] && r == 0; i++) {
        size_t n = frame(buf, 1, chunks[i]);
        r = job_feed(io, &p, buf, n);
    }
    return r;
}

Test(job, result_is_the_line_with_the_nonce)
{
    struct job_io io;
    job_io_init(&io, 4096, NONCE);
    const char *chunks[] = {"partial line from someone\n\n",
                            "{\"sandgate_runner\":1,\"nonce\":\"forged\",\"outcome\":\"ok\"}\n",
                            "not json " NONCE "\n",
                            "\n{\"sandgate_runner\":1,\"nonce\":\"" NONCE "\",",
                            "\"outcome\":\"ok\"}\nignored after",
                            NULL};
    cr_assert_eq(feed_frames(&io, chunks), 1);
    cr_assert_str_eq(json_string_value(json_object_get(io.result, "nonce")), NONCE);
    job_io_free(&io);
}

Test(job, stdout_cap_and_stderr_kept_apart)
{
    struct job_io io;
    job_io_init(&io, 16, NONCE);
    struct attach_parser p = {0};
    unsigned char buf[256];
    size_t n = frame(buf, 2, "runner diag");
    cr_assert_eq(job_feed(&io, &p, buf, n), 0);
    cr_assert_str_eq(io.diag.data, "runner diag");
    n = frame(buf, 1, "0123456789\n0123456789");
    cr_assert_eq(job_feed(&io, &p, buf, n), -E2BIG);
    job_io_free(&io);
}

/* 10 KiB of stdout without a line end, as one attach frame into io. */
static int feed_10k(struct job_io *io, struct attach_parser *p)
{
    static char text[10 * 1024 + 1];
    static unsigned char buf[10 * 1024 + 8];
    memset(text, 'x', sizeof(text) - 1);
    return job_feed(io, p, buf, frame(buf, 1, text));
}

Test(job, result_line_growth_is_reserved_in_the_budget_before_it_grows)
{
    struct sg_membudget b;
    /* room for the line's 16 KiB allocation, not for its next doubling */
    sg_membudget_init(&b, JOB_LINE_MEMORY_COPIES * 32 * 1024 - 1);
    struct job_hooks hooks = {.cancel_fd = -1, .client_fd = -1, .budget = &b};
    struct job_io io;
    job_io_init(&io, 1u << 20, NONCE);
    io.hooks = &hooks;
    struct attach_parser p = {0};
    cr_assert_eq(feed_10k(&io, &p), 0);
    struct sg_membudget_stats st;
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.used, JOB_LINE_MEMORY_COPIES * io.line.alloc,
                 "the allocation, JOB_LINE_MEMORY_COPIES times");
    cr_assert_eq(io.line.alloc, 16384u);
    /* the next doubling (32 KiB, as many times) does not fit: the output ends */
    cr_assert_eq(feed_10k(&io, &p), -E2BIG);
    cr_assert(io.budget_refused);
    cr_assert_eq(io.line.alloc, 16384u, "the buffer did not grow");
    job_io_free(&io);
    sg_membudget_get_stats(&b, &st);
    cr_assert_eq(st.used, 0, "released with the job's buffers");
    /* without a budget the same output is read */
    job_io_init(&io, 1u << 20, NONCE);
    struct attach_parser p2 = {0};
    cr_assert_eq(feed_10k(&io, &p2), 0);
    cr_assert_eq(feed_10k(&io, &p2), 0);
    job_io_free(&io);
}

Test(job, result_cap_grows_with_output_and_artifacts)
{
    cr_assert_gt(job_result_cap(1 << 20, 0), 12u << 20);
    cr_assert_gt(job_result_cap(1024, 3000), job_result_cap(1024, 0) + 3000);
}
