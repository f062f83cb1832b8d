/* Unit tests for sandgate-runner, the Node.js sandbox's protocol-holding
 * process (images/nodejs/runner_*.c): job line validation, workspace files,
 * outcome classification from the child's report, artifacts, text decoding.
 * The whole runner in a real sandbox: tests/e2e/test_runners.py. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner_job.h"
#include "runner_result.h"
#include "json_raw.h"
#include "runner_watch.h"
#include "sg_file_name.h"

static struct runner_cfg test_cfg(void)
{
    struct runner_cfg cfg;
    runner_cfg_from_env(&cfg);
    return cfg;
}

static int parse(const struct runner_cfg *cfg, const char *line, struct runner_job *job,
                 struct sg_error *err)
{
    return runner_job_parse(cfg, line, strlen(line), job, err);
}

Test(node_runner, names)
{
    cr_assert(runner_name_ok("data.csv", 8, "main.js"));
    cr_assert(runner_name_ok("helper.js", 9, "main.js"));
    const char *bad[] = {"",     "../x",    "a/b",       ".env", "..",
                         "x..y", "main.js", "artifacts", "a b",  "caf\xc3\xa9"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_not(runner_name_ok(bad[i], strlen(bad[i]), "main.js"), "%s", bad[i]);
    cr_assert_not(runner_name_ok("a\0b", 3, "main.js"));
    char longname[SG_FILE_NAME_MAX + 2];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cr_assert_not(runner_name_ok(longname, strlen(longname), "main.js"));
    cr_assert(runner_name_ok(longname, SG_FILE_NAME_MAX, "main.js"));
}

Test(node_runner, minimal_job_defaults)
{
    struct runner_cfg cfg = test_cfg();
    struct runner_job job;
    cr_assert_eq(parse(&cfg, "{\"code\": \"function main() {}\"}", &job, NULL), 0);
    cr_assert_str_eq(job.nonce, "");
    cr_assert_str_eq(job.code, "function main() {}");
    cr_assert_str_eq(job.payload_json, "{\"arguments\":{},\"runtime\":null}");
    cr_assert_eq(job.timeout_ms, RUNNER_DEFAULT_TIMEOUT_MS);
    cr_assert_eq(job.max_output, RUNNER_DEFAULT_MAX_OUTPUT);
    cr_assert_eq(job.n_files, 0);
    runner_job_free(&job);
    runner_job_free(NULL);
}

Test(node_runner, script_mode_goes_to_the_child)
{
    struct runner_cfg cfg = test_cfg();
    struct runner_job job;
    struct sg_error e;
    cr_assert_eq(parse(&cfg, "{\"code\": \"console.log(1)\", \"mode\": \"script\"}", &job, NULL),
                 0);
    cr_assert_str_eq(job.payload_json, "{\"arguments\":{},\"runtime\":null,\"mode\":\"script\"}");
    runner_job_free(&job);
    cr_assert_eq(parse(&cfg, "{\"code\": \"1\", \"mode\": \"main\"}", &job, NULL), 0);
    cr_assert_str_eq(job.payload_json, "{\"arguments\":{},\"runtime\":null}");
    runner_job_free(&job);
    cr_assert_eq(parse(&cfg, "{\"code\": \"1\", \"mode\": \"repl\"}", &job, &e), -EINVAL);
    runner_job_free(&job);
}

Test(node_runner, full_job_and_clamps)
{
    struct runner_cfg cfg = test_cfg();
    struct runner_job job;
    struct sg_error err = {0};
    const char *line =
        "{\"nonce\": \"abcdefABCDEF0123\", \"code\": \"x\", \"arguments\": {\"a\": [1, 2]},"
        " \"files\": {\"d.csv\": \"YSxiCg==\"},"
        " \"limits\": {\"timeout_ms\": 999999999, \"max_output_bytes\": 7}}";
    cr_assert_eq(parse(&cfg, line, &job, &err), 0, "%s", err.msg);
    cr_assert_str_eq(job.nonce, "abcdefABCDEF0123");
    cr_assert_str_eq(job.payload_json, "{\"arguments\":{\"a\":[1,2]},\"runtime\":null}");
    cr_assert_eq(job.timeout_ms, RUNNER_MAX_TIMEOUT_MS);
    cr_assert_eq(job.max_output, 7);
    cr_assert_eq(job.n_files, 1);
    cr_assert_str_eq(job.files[0].name, "d.csv");
    cr_assert_eq(job.files[0].len, 4);
    cr_assert_eq(memcmp(job.files[0].data, "a,b\n", 4), 0);
    runner_job_free(&job);
}

Test(node_runner, bad_jobs_are_einval_with_a_reason)
{
    struct runner_cfg cfg = test_cfg();
    static const struct {
        const char *line, *reason;
    } cases[] = {
        {"not json", "not valid JSON"},
        {"[1]", "JSON object"},
        {"{\"code\": 5}", "'code'"},
        {"{\"code\": \"\", \"arguments\": []}", "'arguments'"},
        {"{\"code\": \"\", \"limits\": 3}", "'limits'"},
        {"{\"code\": \"\", \"limits\": {\"timeout_ms\": -1}}", "limits.timeout_ms"},
        {"{\"code\": \"\", \"limits\": {\"max_output_bytes\": 1.5}}", "limits.max_output_bytes"},
        {"{\"code\": \"\", \"nonce\": \"short\"}", "'nonce'"},
        {"{\"code\": \"\", \"nonce\": \"abcdefabcdefabc-\"}", "'nonce'"},
        {"{\"code\": \"\", \"files\": []}", "'files'"},
        {"{\"code\": \"\", \"files\": {\"../x\": \"\"}}", "refused file name"},
        {"{\"code\": \"\", \"files\": {\"main.js\": \"\"}}", "refused file name"},
        {"{\"code\": \"\", \"files\": {\"a\": 1}}", "base64 string"},
        {"{\"code\": \"\", \"files\": {\"a\": \"abc\"}}", "not valid base64"},
        {"{\"code\": \"a\", \"code\": \"b\"}", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct runner_job job;
        struct sg_error err = {0};
        cr_assert_eq(parse(&cfg, cases[i].line, &job, &err), -EINVAL, "%s", cases[i].line);
        cr_assert(strstr(err.msg, cases[i].reason), "%s: %s", cases[i].line, err.msg);
        runner_job_free(&job);
    }
}

Test(node_runner, bad_job_keeps_a_good_nonce)
{
    struct runner_cfg cfg = test_cfg();
    struct runner_job job;
    cr_assert_eq(parse(&cfg, "{\"nonce\": \"0123456789abcdef\", \"code\": 1}", &job, NULL),
                 -EINVAL);
    cr_assert_str_eq(job.nonce, "0123456789abcdef");
    runner_job_free(&job);
}

Test(node_runner, input_file_caps)
{
    struct runner_cfg cfg = test_cfg();
    cfg.max_files = 1;
    struct runner_job job;
    struct sg_error err = {0};
    cr_assert_eq(parse(&cfg, "{\"code\": \"\", \"files\": {\"a\": \"\", \"b\": \"\"}}", &job, &err),
                 -EINVAL);
    cr_assert(strstr(err.msg, "too many input files"), "%s", err.msg);
    runner_job_free(&job);
    cfg = test_cfg();
    cfg.max_files_bytes = 5;
    cr_assert_eq(
        parse(&cfg, "{\"code\": \"\", \"files\": {\"a\": \"YWFh\", \"b\": \"YmJi\"}}", &job, &err),
        -EINVAL);
    cr_assert(strstr(err.msg, "larger than 5 bytes"), "%s", err.msg);
    runner_job_free(&job);
}

static char *make_workspace(void)
{
    char *dir = strdup("/tmp/sg-node-runner-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_tree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(node_runner, workspace_written_once)
{
    struct runner_cfg cfg = test_cfg();
    char *dir = make_workspace();
    cfg.workspace = dir;
    struct runner_job job;
    cr_assert_eq(parse(&cfg, "{\"code\": \"x = 1\", \"files\": {\"d.txt\": \"aGk=\"}}", &job, NULL),
                 0);
    struct sg_error err = {0};
    cr_assert_eq(runner_job_write(&cfg, &job, &err), 0, "%s", err.msg);
    char path[512];
    struct stat st;
    snprintf(path, sizeof(path), "%s/main.js", dir);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 5);
    cr_assert_eq(st.st_mode & 0777, 0600);
    snprintf(path, sizeof(path), "%s/artifacts", dir);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    /* A second write finds main.js there: never overwritten. */
    cr_assert_eq(runner_job_write(&cfg, &job, &err), -EEXIST);
    cr_assert(strstr(err.msg, "given twice"), "%s", err.msg);
    runner_job_free(&job);
    remove_tree(dir);
    cfg.workspace = dir; /* now gone: the sandbox is unusable */
    cr_assert_eq(parse(&cfg, "{\"code\": \"\"}", &job, NULL), 0);
    cr_assert_eq(runner_job_write(&cfg, &job, &err), -ENOENT);
    cr_assert(strstr(err.msg, "cannot open"), "%s", err.msg);
    runner_job_free(&job);
    free(dir);
}

Test(node_runner, text_replaces_invalid_utf8)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xff"
         "A",
         "\xef\xbf\xbd"
         "A"},
        {"\xc0\x80", "\xef\xbf\xbd\xef\xbf\xbd"},                                 /* overlong NUL */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                 /* surrogate */
        {"\xe2\x82", "\xef\xbf\xbd\xef\xbf\xbd"},                                 /* cut short */
        {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* > U+10FFFF */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = runner_text(cases[i].in, strlen(cases[i].in));
        cr_assert_not_null(j, "case %zu", i);
        cr_assert_str_eq(json_string_value(j), cases[i].out, "case %zu", i);
        json_decref(j);
    }
    json_t *nul = runner_text("a\0b", 3);
    cr_assert_eq(json_string_length(nul), 3);
    json_decref(nul);
}

/* A watch as runner_watch_run() leaves it, with the child's report. */
static void fake_watch(struct runner_watch *w, const char *report, const char *out)
{
    *w = (struct runner_watch){.stop = RUNNER_REPORTED, .elapsed_ms = 1.2345, .max_rss_kb = 10};
    sg_buf_init(&w->out, 1 << 20);
    sg_buf_init(&w->err, 1 << 20);
    sg_buf_init(&w->res, 1 << 20);
    cr_assert_eq(sg_buf_append(&w->res, report, strlen(report)), 0);
    cr_assert_eq(sg_buf_append(&w->out, out, strlen(out)), 0);
}

static json_t *classify(const char *report, int stop, int status)
{
    struct runner_cfg cfg = test_cfg();
    cfg.workspace = "/nonexistent-sandgate-workspace";
    struct runner_watch w;
    fake_watch(&w, report, "hi\n");
    if (stop) {
        w.stop = stop;
        w.limit_hit = "stderr";
    }
    w.status = status;
    json_t *r = runner_result_from_watch(&cfg, &w, 1000);
    runner_watch_free(&w);
    cr_assert_not_null(r);
    return r;
}

static const char *str(json_t *r, const char *key)
{
    return json_string_value(json_object_get(r, key));
}

static json_int_t num(json_t *r, const char *key)
{
    return json_integer_value(json_object_get(r, key));
}

Test(node_runner, report_ok_with_value)
{
    json_t *r = classify("{\"outcome\":\"ok\",\"present\":true,\"max_rss_kb\":99,"
                         "\"value_json\":\"{\\\"a\\\":\\\"\\\\u0000\\\"}\"}\n",
                         0, 0);
    cr_assert_str_eq(str(r, "outcome"), "ok");
    cr_assert_eq(num(r, "exit_code"), 0);
    cr_assert_str_eq(str(r, "stdout"), "hi\n");
    /* the parent's figure (wait4), never the report's */
    cr_assert_eq(num(r, "memory_used_kb"), 10);
    json_t *value = json_object_get(json_object_get(r, "result"), "value");
    cr_assert_eq(json_string_length(json_object_get(value, "a")), 1);
    cr_assert(json_is_null(json_object_get(r, "message")));
    cr_assert_float_eq(json_real_value(json_object_get(r, "time_used_ms")), 1.235, 1e-9);
    json_decref(r);
}

Test(node_runner, report_exception_and_no_main)
{
    json_t *r = classify("{\"outcome\":\"exception\",\"message\":\"TypeError: x\"}\n", 0, 0);
    cr_assert_str_eq(str(r, "outcome"), "exception");
    cr_assert_eq(num(r, "exit_code"), 1);
    cr_assert_str_eq(str(r, "message"), "TypeError: x");
    cr_assert(json_is_false(json_object_get(json_object_get(r, "result"), "present")));
    json_decref(r);
    r = classify("{\"outcome\":\"no_main\",\"message\":\"none\"}\n", 0, 0);
    cr_assert_str_eq(str(r, "outcome"), "no_main");
    cr_assert_eq(num(r, "exit_code"), 1);
    json_decref(r);
}

Test(node_runner, unusable_reports_are_the_programs_exception)
{
    /* the program holds fd 4: NaN, deep nesting, numbers beyond a double,
     * a value not given as text */
    const char *reports[] = {
        "garbage\n",
        "{\"outcome\":\"bad_job\"}\n",
        "[1]\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value\":18446744073709552000}\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value\":NaN}\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"NaN\"}\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"1e400\"}\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"[1,\"}\n",
        "{\"outcome\":\"ok\",\"present\":true,\"value_json\":5}\n",
    };
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
        json_t *r = classify(reports[i], 0, 0);
        cr_assert_str_eq(str(r, "outcome"), "exception", "%s", reports[i]);
        cr_assert_eq(num(r, "exit_code"), 1);
        cr_assert(strstr(str(r, "message"), "unreadable report"), "%s", str(r, "message"));
        json_decref(r);
    }
    char deep[64 + 4 * (SG_JSON_RESULT_DEPTH_MAX + 1)];
    int n = snprintf(deep, sizeof(deep), "{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"");
    for (int i = 0; i <= SG_JSON_RESULT_DEPTH_MAX; i++)
        deep[n++] = '[';
    for (int i = 0; i <= SG_JSON_RESULT_DEPTH_MAX; i++)
        deep[n++] = ']';
    snprintf(deep + n, sizeof(deep) - (size_t)n, "\"}\n");
    json_t *r = classify(deep, 0, 0);
    cr_assert_str_eq(str(r, "outcome"), "exception");
    json_decref(r);
}

Test(node_runner, no_report_classified_by_exit)
{
    json_t *r = classify("", RUNNER_EXITED, 3 << 8);
    cr_assert_str_eq(str(r, "outcome"), "exception");
    cr_assert_eq(num(r, "exit_code"), 3);
    json_decref(r);
    r = classify("", RUNNER_EXITED, 0);
    cr_assert_str_eq(str(r, "outcome"), "ok");
    json_decref(r);
    r = classify("", RUNNER_EXITED, SIGKILL);
    cr_assert_str_eq(str(r, "outcome"), "killed");
    cr_assert_eq(num(r, "exit_code"), -SIGKILL);
    cr_assert_eq(num(r, "signal"), SIGKILL);
    cr_assert_str_eq(str(r, "message"), "the program was killed by signal SIGKILL");
    json_decref(r);
}

/* A watch whose child the kernel filter killed (SIGSYS), reaped. */
static json_t *classify_sigsys(const char *report, const char *type, int sig)
{
    struct runner_cfg cfg = test_cfg();
    cfg.workspace = "/nonexistent-sandgate-workspace";
    struct runner_watch w;
    fake_watch(&w, report, "");
    w.reaped = 1;
    w.status = sig;
    w.sigsys_type = type;
    json_t *r = runner_result_from_watch(&cfg, &w, 1000);
    runner_watch_free(&w);
    cr_assert_not_null(r);
    return r;
}

Test(node_runner, a_filter_kill_is_a_denial_whatever_the_report_said)
{
    const char *forged = "{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"1\"}\n";
    json_t *r = classify_sigsys(forged, "network", SIGSYS);
    cr_assert_str_eq(str(r, "outcome"), "unauthorized");
    json_t *d = json_array_get(json_object_get(r, "denials"), 0);
    cr_assert_str_eq(str(d, "type"), "network");
    cr_assert(strstr(str(r, "message"), "runtime.network: ") == str(r, "message"));
    cr_assert(json_is_false(json_object_get(json_object_get(r, "result"), "present")));
    json_decref(r);
    r = classify_sigsys("", "process", SIGSYS);
    cr_assert_str_eq(str(json_array_get(json_object_get(r, "denials"), 0), "type"), "process");
    json_decref(r);
    /* no run-time policy: a SIGSYS is a signal like another */
    r = classify_sigsys("", NULL, SIGSYS);
    cr_assert_str_eq(str(r, "outcome"), "killed");
    json_decref(r);
    /* another signal after a report: the report stands */
    r = classify_sigsys(forged, "process", SIGKILL);
    cr_assert_str_eq(str(r, "outcome"), "ok");
    json_decref(r);
}

Test(node_runner, a_stuck_exit_is_the_filters_kill)
{
    /* gVisor leaves a child the filter killed a zombie it never reports */
    struct runner_cfg cfg = test_cfg();
    cfg.workspace = "/nonexistent-sandgate-workspace";
    struct runner_watch w;
    fake_watch(&w, "", "");
    w.stop = RUNNER_EXITED;
    w.reaped = 1;
    w.status = SIGKILL; /* what the parent's own kill left */
    w.filter_killed = 1;
    w.sigsys_type = "process";
    json_t *r = runner_result_from_watch(&cfg, &w, 1000);
    runner_watch_free(&w);
    cr_assert_str_eq(str(r, "outcome"), "unauthorized");
    json_decref(r);
}

Test(node_runner, stat_state_and_a_zombie_child)
{
    cr_assert_eq(runner_stat_state("12 (no)de) Z 1 1"), 'Z');
    cr_assert_eq(runner_stat_state("12 (node) S 1"), 'S');
    cr_assert_eq(runner_stat_state("garbage"), '?');
    cr_assert_eq(runner_stat_state("1 (x)"), '?');
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(0);
    int ticks = 0, stuck = 0;
    for (int i = 0; i < 200 && !stuck; i++) { /* a zombie until reaped, here */
        stuck = runner_child_stuck(pid, &ticks);
        if (!stuck)
            usleep(10000);
    }
    cr_assert_eq(stuck, 1);
    cr_assert_eq(ticks, RUNNER_STUCK_CHECKS);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    ticks = 2;
    cr_assert_eq(runner_child_stuck(pid, &ticks), 0); /* gone: no longer a zombie */
    cr_assert_eq(ticks, 0);
    ticks = 0;
    cr_assert_eq(runner_child_stuck(getpid(), &ticks), 0); /* running */
}

Test(node_runner, sigsys_type_follows_the_policy)
{
    /* offline, both refused: a kill says no more than one of the two */
    json_t *rt = json_pack("{s:b,s:b}", "processes", 0, "network", 0);
    cr_assert_str_eq(runner_sigsys_type(rt), "process_or_network");
    json_object_set_new(rt, "processes", json_true());
    cr_assert_str_eq(runner_sigsys_type(rt), "network");
    json_object_set_new(rt, "network", json_true());
    cr_assert_null(runner_sigsys_type(rt));
    /* networked: refused sockets are EPERM, only a process kills */
    json_object_set_new(rt, "processes", json_false());
    cr_assert_str_eq(runner_sigsys_type(rt), "process");
    cr_assert_null(runner_sigsys_type(NULL));
    json_decref(rt);
}

Test(node_runner, job_identity_in_proc_status)
{
    const char *ok = "Name:\tnode\nUid:\t65534\t65534\t65534\t65534\n"
                     "Gid:\t65534\t65534\t65534\t65534\nGroups:\t\n"
                     "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
                     "CapEff:\t0000000000000000\nCapBnd:\t00000000002000e0\n";
    cr_assert_eq(runner_status_is_job(ok), 0);
    char buf[512];
    static const struct {
        const char *from, *to;
    } bad[] = {
        {"Uid:\t65534\t65534\t65534\t65534", "Uid:\t65534\t0\t65534\t65534"},
        {"Uid:\t65534\t65534\t65534\t65534", "Uid:\t65534\t65534\t0\t65534"},
        {"Gid:\t65534\t65534\t65534\t65534", "Gid:\t0\t65534\t65534\t65534"},
        {"Groups:\t", "Groups:\t0 "},
        {"CapPrm:\t0000000000000000", "CapPrm:\t00000000000000c0"},
        {"CapEff:\t0000000000000000", "CapEff:\t0000000000200000"},
        {"CapInh:\t0000000000000000", "CapInh:\t0000000000000001"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *at = strstr(ok, bad[i].from);
        cr_assert_not_null(at);
        snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - ok), ok, bad[i].to,
                 at + strlen(bad[i].from));
        cr_assert_eq(runner_status_is_job(buf), -EPERM, "accepted: %s", buf);
    }
    snprintf(buf, sizeof(buf), "%s", ok);
    *strstr(buf, "Groups:") = 'X'; /* no Groups line at all */
    cr_assert_eq(runner_status_is_job(buf), -EPERM);
    cr_assert_eq(runner_status_is_job("Uid:\t65534\t65534\t65534\t65534\n"), -EPERM);
}

Test(node_runner, as_job_is_a_no_op_without_split)
{
    struct runner_cfg cfg = test_cfg();
    cr_assert_eq(runner_as_job(&cfg, 1), 0);
    cr_assert_eq(geteuid(), getuid());
    cr_assert_eq(runner_as_job(&cfg, 0), 0);
}

Test(node_runner, limits_win_over_a_report)
{
    const char *ok = "{\"outcome\":\"ok\",\"present\":true,\"value\":1}\n";
    json_t *r = classify(ok, RUNNER_TIMEOUT, 0);
    cr_assert_str_eq(str(r, "outcome"), "timeout");
    cr_assert_eq(num(r, "exit_code"), RUNNER_EXIT_TIMEOUT);
    cr_assert(json_is_false(json_object_get(json_object_get(r, "result"), "present")));
    json_decref(r);
    r = classify(ok, RUNNER_OUTPUT_LIMIT, 0);
    cr_assert_str_eq(str(r, "outcome"), "output_limit");
    cr_assert_eq(num(r, "exit_code"), RUNNER_EXIT_OUTPUT);
    cr_assert_str_eq(str(r, "message"), "stderr larger than max_output_bytes (1000)");
    json_decref(r);
}

Test(node_runner, artifacts_within_caps_in_name_order)
{
    struct runner_cfg cfg = test_cfg();
    char *dir = make_workspace();
    cfg.workspace = dir;
    cfg.art_files = 3;
    cfg.art_bytes = 4;
    char sub[512];
    snprintf(sub, sizeof(sub), "%s/artifacts", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    write_file(sub, "b.txt", "bb");
    write_file(sub, "a.PNG", "aa");
    write_file(sub, "big.csv", "12345");
    write_file(sub, "tool.exe", "x");
    write_file(sub, "c.md", "c");
    char link[600];
    snprintf(link, sizeof(link), "%s/link.txt", sub);
    cr_assert_eq(symlink("/etc/passwd", link), 0);
    json_t *r = json_object();
    runner_result_artifacts(&cfg, r);
    json_t *found = json_object_get(r, "artifacts"),
           *skipped = json_object_get(r, "artifacts_skipped");
    cr_assert_eq(json_array_size(found), 3);
    cr_assert_str_eq(str(json_array_get(found, 0), "name"), "a.PNG");
    cr_assert_str_eq(str(json_array_get(found, 0), "mime_type"), "image/png");
    cr_assert_str_eq(str(json_array_get(found, 0), "content_b64"), "YWE=");
    cr_assert_eq(num(json_array_get(found, 0), "size"), 2);
    cr_assert_str_eq(str(json_array_get(found, 1), "name"), "b.txt");
    cr_assert_str_eq(str(json_array_get(found, 2), "name"), "c.md");
    /* Name order: big.csv is too large, link.txt comes after the count is full. */
    cr_assert_eq(json_array_size(skipped), 2);
    cr_assert_str_eq(str(json_array_get(skipped, 0), "name"), "big.csv");
    cr_assert_str_eq(str(json_array_get(skipped, 0), "reason"), "too large");
    cr_assert_str_eq(str(json_array_get(skipped, 1), "name"), "link.txt");
    cr_assert_str_eq(str(json_array_get(skipped, 1), "reason"), "too many artifacts");
    json_decref(r);
    cfg.art_files = 10;
    r = json_object();
    runner_result_artifacts(&cfg, r);
    skipped = json_object_get(r, "artifacts_skipped");
    cr_assert_str_eq(str(json_array_get(skipped, 1), "name"), "link.txt");
    cr_assert_str_eq(str(json_array_get(skipped, 1), "reason"), "not a regular file");
    json_decref(r);
    remove_tree(dir);
    free(dir);
}

Test(node_runner, unknown_memory_is_null)
{
    struct runner_cfg cfg = test_cfg();
    cfg.workspace = "/nonexistent-sandgate-workspace";
    struct runner_watch w;
    fake_watch(&w, "", "");
    w.stop = RUNNER_TIMEOUT;
    w.max_rss_kb = 0;
    json_t *r = runner_result_from_watch(&cfg, &w, 1000);
    runner_watch_free(&w);
    cr_assert(json_is_null(json_object_get(r, "memory_used_kb")));
    json_decref(r);
    r = runner_result_failed("bad_job", "no");
    cr_assert(json_is_null(json_object_get(r, "memory_used_kb")));
    json_decref(r);
}

Test(node_runner, integers_beyond_64_bits_travel_as_text)
{
    json_t *r = classify("{\"outcome\":\"ok\",\"present\":true,"
                         "\"value_json\":\"[100000000000000000000,9223372036854775808,1]\"}\n",
                         0, 0);
    cr_assert_str_eq(str(r, "outcome"), "ok");
    json_t *res = json_object_get(r, "result");
    cr_assert(json_is_true(json_object_get(res, "present")));
    cr_assert_null(json_object_get(res, "value"));
    cr_assert_str_eq(json_string_value(json_object_get(res, "value_json")),
                     "[100000000000000000000,9223372036854775808,1]");
    json_decref(r);
    r = classify("{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"[9223372036854775807]\"}\n",
                 0, 0);
    res = json_object_get(r, "result");
    cr_assert_null(json_object_get(res, "value_json"), "64-bit values stay plain values");
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(res, "value"), 0)),
                 9223372036854775807LL);
    json_decref(r);
}

/* The watch with a real child (sh standing in for node): it reads the token
 * line and the arguments from fd 3 as runner.js does and writes on fd 4. */
static void watch_child(const char *script, struct runner_watch *w, struct runner_child *c)
{
    static int sigfd = -1;
    struct sg_error err = {0};
    static char sh[] = "/bin/sh", dash_c[] = "-c", path[] = "PATH=/usr/bin:/bin";
    char text[1024];
    snprintf(text, sizeof(text), "%s", script);
    char *argv[] = {sh, dash_c, text, NULL};
    char *envp[] = {path, NULL};
    if (sigfd < 0)
        sigfd = runner_sigchld_fd();
    cr_assert_geq(sigfd, 0);
    cr_assert_eq(runner_child_spawn(argv, envp, "/tmp", 0, c, &err), 0, "%s", err.msg);
    cr_assert_eq(strlen(c->token), 2 * RUNNER_TOKEN_BYTES);
    runner_watch_run(c, sigfd, "{\"arguments\":{}}", 16, 1 << 16, 10000, NULL, NULL, w);
    runner_child_kill(c);
}

static void res_is(const struct runner_watch *w, const char *want)
{
    cr_assert_eq(w->res.len, strlen(want), "report %.*s", (int)w->res.len, w->res.data);
    cr_assert(!memcmp(w->res.data, want, w->res.len), "report %.*s", (int)w->res.len, w->res.data);
}

Test(node_runner, only_a_line_carrying_the_token_is_the_report)
{
    /* the program forges a whole line and leaves half of one before the
     * runner's report: neither is taken, the token's line is */
    static const char script[] =
        "read t <&3; read a <&3; test \"$a\" = '{\"arguments\":{}}' || exit 9;"
        "printf '{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"1\"}\\n' >&4;"
        "printf 'partial' >&4;"
        "printf '%s {\"outcome\":\"exception\",\"message\":\"own\"}\\n' \"$t\" >&4; sleep 5";
    struct runner_watch w;
    struct runner_child c;
    watch_child(script, &w, &c);
    cr_assert_eq(w.stop, RUNNER_REPORTED);
    cr_assert(w.reported);
    cr_assert_eq(w.forged_lines, 1);
    res_is(&w, "{\"outcome\":\"exception\",\"message\":\"own\"}\n");
    runner_watch_free(&w);
}

Test(node_runner, forged_lines_alone_are_no_report)
{
    /* a line with a guessed token or none: the child's exit decides */
    static const char script[] =
        "read t <&3;"
        "printf '00000000000000000000000000000000 {\"outcome\":\"ok\"}\\n' >&4;"
        "printf '{\"outcome\":\"ok\"}' >&4; exit 3";
    struct runner_watch w;
    struct runner_child c;
    watch_child(script, &w, &c);
    cr_assert_eq(w.stop, RUNNER_EXITED);
    cr_assert(!w.reported);
    cr_assert_eq(w.forged_lines, 2);
    cr_assert_eq(w.res.len, 0);
    runner_watch_free(&w);
}

Test(node_runner, tokens_differ_per_child)
{
    struct runner_child a, b;
    struct sg_error err = {0};
    static char t[] = "/bin/true";
    char *argv[] = {t, NULL};
    char *envp[] = {NULL};
    cr_assert_eq(runner_child_spawn(argv, envp, "/tmp", 0, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(runner_child_spawn(argv, envp, "/tmp", 0, &b, &err), 0, "%s", err.msg);
    cr_assert_str_neq(a.token, b.token);
    for (struct runner_child *c = &a; c; c = c == &a ? &b : NULL) {
        close(c->job_w);
        close(c->out_r);
        close(c->err_r);
        close(c->res_r);
        waitpid(c->pid, NULL, 0);
    }
}

/* Stream frames are cut at character boundaries (the rest goes later). */
Test(node_runner, utf8_cut_keeps_characters_whole)
{
    cr_assert_eq(runner_utf8_boundary("abc", 3), 3);
    cr_assert_eq(runner_utf8_boundary("a\xC3", 2), 1);
    cr_assert_eq(runner_utf8_boundary("a\xC3\xA9", 3), 3);
    cr_assert_eq(runner_utf8_boundary("a\xE2\x82", 3), 1);
    cr_assert_eq(runner_utf8_boundary("a\xF0\x9F\x98", 4), 1);
    cr_assert_eq(runner_utf8_boundary("a\xF0\x9F\x98\x80", 5), 5);
    cr_assert_eq(runner_utf8_boundary("", 0), 0);
}
