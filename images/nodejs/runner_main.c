/* sandgate-runner: the main process (PID 1) of a Node.js sandbox container,
 * the protocol-holding side of executors/PROTOCOL.md.
 *
 * It starts the interpreter (the child: `node ... runner.js`) at once, so
 * interpreter start-up happens before the job exists, then reads the one job
 * line, writes the program into the workspace, hands the child only the
 * arguments, watches it, and writes the one nonce-stamped result line the
 * moment the child's report is complete. Only this process ever holds the
 * nonce or the container's real stdout, and it makes itself non-dumpable, so
 * the program (same uid) can neither read the nonce from its memory nor
 * forge the line. Why a small C process and not a second node: see
 * images/nodejs/README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "runner_job.h"
#include "runner_result.h"
#include "runner_session.h"
#include "runner_watch.h"

#define EXIT_SETUP 70
#define EXIT_NO_JOB 3
#define READ_CHUNK 65536
#define CHILD_ENV_MAX 10
#define ENV_ENTRY_MAX 4096

static void usage(FILE *f)
{
    fprintf(f, "usage: sandgate-runner [--workspace DIR] [--main-file NAME] [--identity-split]\n"
               "                       -- CHILD [ARG...]\n"
               "\n"
               "The main process of a sandgate sandbox container (executors/PROTOCOL.md).\n"
               "Starts CHILD at once (fd 0 /dev/null, 1/2 output pipes, 3 the job's\n"
               "arguments, 4 its one-line report), then reads one JSON job line from\n"
               "stdin, writes the code to DIR/NAME and the input files to DIR, hands the\n"
               "arguments to CHILD and writes one result line to stdout.\n"
               "\n"
               "  --workspace DIR   the program's directory (default /workspace)\n"
               "  --main-file NAME  the program's file name (default main.js)\n"
               "  --identity-split  (as root) the child in its own PID and mount namespace\n"
               "                    and view, dropping itself to uid/gid 65534 before fd 5\n"
               "  -h, --help        this text\n"
               "\n"
               "Environment: SANDGATE_MAX_JOB_BYTES, SANDGATE_MAX_INPUT_FILES,\n"
               "SANDGATE_MAX_INPUT_BYTES, SANDGATE_ARTIFACT_MAX_FILES,\n"
               "SANDGATE_ARTIFACT_MAX_BYTES, SANDGATE_ARTIFACT_MAX_TOTAL; PATH,\n"
               "SANDGATE_PREIMPORT, SANDGATE_EGRESS_PROXY and SANDGATE_TEST_GUARD_OFF\n"
               "(tests only) are passed on to CHILD.\n"
               "\n"
               "With --identity-split the runner checks in /proc that CHILD dropped to\n"
               "uid/gid 65534 with no capability before it hands over a job.\n");
}

static int parse_args(int argc, char **argv, struct runner_cfg *cfg, char ***ret_child)
{
    static const struct option opts[] = {
        {"workspace", required_argument, NULL, 'w'},
        {"main-file", required_argument, NULL, 'm'},
        {"identity-split", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'w')
            cfg->workspace = optarg;
        else if (c == 'm')
            cfg->main_file = optarg;
        else if (c == 's')
            cfg->split = 1;
        else if (c == 'h') {
            usage(stdout);
            exit(0);
        } else
            return -EINVAL;
    }
    if (optind >= argc || !cfg->workspace[0] ||
        !runner_name_ok(cfg->main_file, strlen(cfg->main_file), ""))
        return -EINVAL;
    *ret_child = argv + optind;
    return 0;
}

/* The child's whole environment: nothing of the runner's but these. */
static void child_env(const struct runner_cfg *cfg, char env[][ENV_ENTRY_MAX], char **ret_envp)
{
    const char *path = getenv("PATH");
    int n = 0;
    snprintf(env[n++], ENV_ENTRY_MAX, "PATH=%s", path ? path : "/usr/bin:/bin");
    snprintf(env[n++], ENV_ENTRY_MAX, "LANG=C.UTF-8");
    snprintf(env[n++], ENV_ENTRY_MAX, "HOME=/tmp");
    snprintf(env[n++], ENV_ENTRY_MAX, "TMPDIR=/tmp");
    snprintf(env[n++], ENV_ENTRY_MAX, "SANDGATE_PREIMPORT=%s", cfg->preimport);
    /* a networked sandbox's proxy (README, "Network"): runner.js points a
     * networked job's HTTP clients at it */
    const char *proxy = getenv("SANDGATE_EGRESS_PROXY");
    if (proxy && strlen(proxy) < ENV_ENTRY_MAX - sizeof("SANDGATE_EGRESS_PROXY="))
        snprintf(env[n++], ENV_ENTRY_MAX, "SANDGATE_EGRESS_PROXY=%s", proxy);
    /* tests only (the executor's --test-guard-off): runner.js leaves its
     * in-process layer out; the filter, identity, view and this parent stay */
    if (cfg->split) /* runner.js drops itself to the job's identity before the job */
        snprintf(env[n++], ENV_ENTRY_MAX, "SANDGATE_IDENTITY_SPLIT=1");
    const char *off = getenv("SANDGATE_TEST_GUARD_OFF");
    if (off && strcmp(off, "1") == 0)
        snprintf(env[n++], ENV_ENTRY_MAX, "SANDGATE_TEST_GUARD_OFF=1");
    for (int i = 0; i < n; i++)
        ret_envp[i] = env[i];
    ret_envp[n] = NULL;
}

/* One line from stdin, at most cfg->max_job bytes, without its newline.
 * Returns 0 (*ret_line NULL: EOF before any byte), -E2BIG or -ENOMEM. */
static int read_job_line(const struct runner_cfg *cfg, struct sg_buf *ret_line)
{
    static char chunk[READ_CHUNK];
    sg_buf_init(ret_line, cfg->max_job);
    for (;;) {
        ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        const char *nl = memchr(chunk, '\n', (size_t)n);
        size_t take = nl ? (size_t)(nl - chunk) : (size_t)n;
        int r = sg_buf_append(ret_line, chunk, take);
        if (r < 0 || nl)
            return r;
    }
}

/* Once the child has pre-imported (it closes its end of the ready pipe, or
 * dies), say so on stdout: the executor's pool keeps a pre-importing sandbox
 * out of its idle list until this line, which its job reader ignores (no
 * nonce). A job that arrives first simply goes ahead. */
static void report_ready(struct runner_child *child)
{
    int *ready_r = &child->ready_r;
    static const char line[] = "{\"sandgate_runner_ready\":1}\n";
    struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                          {.fd = *ready_r, .events = POLLIN}};
    int n;
    do
        n = poll(p, 2, -1);
    while (n < 0 && errno == EINTR);
    if (n > 0 && p[1].revents) {
        close(*ready_r);
        *ready_r = -1;
        /* the identity check off the job's path; a failure is the job's
         * runner_error (serve() checks again) */
        struct sg_error err = {0};
        runner_child_verify(child, &err);
        ssize_t w = write(STDOUT_FILENO, line, sizeof(line) - 1); /* short line: one write */
        (void)w; /* a lost ready line only costs the pool its wait */
    }
    /* else the job came first: runner_child_verify() waits for the EOF */
}

static void send_frame(void *ud, const char *name, const char *data, size_t len)
{
    const struct runner_job *job = ud;
    int r = runner_stream_write(job->nonce, name, data, len);
    if (r < 0)
        fprintf(stderr, "runner: cannot write a stream frame: %s\n", strerror(-r));
}

static int answer(json_t *result, const char *nonce)
{
    int r = result ? runner_result_write(result, nonce) : -ENOMEM;
    json_decref(result);
    if (r < 0)
        fprintf(stderr, "runner: cannot write the result: %s\n", strerror(-r));
    return r < 0 ? EXIT_SETUP : 0;
}

/* Everything from the job line on; returns the exit status. */
static int serve(const struct runner_cfg *cfg, struct runner_child *child, int sigfd)
{
    struct sg_buf line;
    struct runner_job job = {0};
    struct sg_error err = {0};
    report_ready(child);
    int r = read_job_line(cfg, &line);
    if (r == 0 && line.len == 0) {
        fprintf(stderr, "runner: stdin closed before a job arrived\n");
        sg_buf_free(&line);
        return EXIT_NO_JOB;
    }
    json_t *root = r == 0 ? json_loadb(line.data, line.len, 0, NULL) : NULL;
    if (json_is_true(json_object_get(root, "session"))) {
        /* a session: the start line's nonce, then the session's own protocol */
        const char *nonce = json_string_value(json_object_get(root, "nonce"));
        int st =
            nonce && runner_nonce_ok(nonce, strlen(nonce))
                ? runner_session_serve(cfg, child, sigfd, root, nonce)
                : answer(runner_result_failed("bad_job", "'nonce' is missing or malformed"), "");
        json_decref(root);
        sg_buf_free(&line);
        return st;
    }
    json_decref(root);
    if (r == -E2BIG)
        sg_error_set(&err, r, "job line longer than %zu bytes", cfg->max_job);
    else if (r == 0)
        r = runner_job_parse(cfg, line.data, line.len, &job, &err);
    sg_buf_free(&line);
    if (r == 0)
        r = runner_job_write(cfg, &job, &err);
    json_t *result;
    if (r == -ENOMEM || (r < 0 && r != -EINVAL && r != -E2BIG && r != -EEXIST)) {
        result = runner_result_failed("runner_error", err.msg[0] ? err.msg : strerror(-r));
    } else if (r < 0) {
        result = runner_result_failed("bad_job", err.msg);
    } else if ((r = runner_child_verify(child, &err)) < 0) {
        result = runner_result_failed("runner_error", err.msg);
    } else {
        struct runner_watch w;
        int streamed = job.stream && job.nonce[0];
        runner_watch_run(child, sigfd, job.payload_json, strlen(job.payload_json), job.max_output,
                         job.timeout_ms, streamed ? send_frame : NULL, &job, &w);
        runner_child_kill(child);
        w.sigsys_type = job.sigsys_type;
        result = runner_result_from_watch(cfg, &w, job.max_output);
        runner_watch_free(&w);
    }
    runner_child_kill(child);
    int status = answer(result, job.nonce);
    runner_job_free(&job);
    return status;
}

int main(int argc, char **argv)
{
    struct runner_cfg cfg;
    char **child_argv = NULL;
    runner_cfg_from_env(&cfg);
    if (parse_args(argc, argv, &cfg, &child_argv) < 0) {
        usage(stderr);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int sigfd = runner_sigchld_fd();
    char env[CHILD_ENV_MAX][ENV_ENTRY_MAX];
    char *envp[CHILD_ENV_MAX + 1];
    child_env(&cfg, env, envp);
    struct runner_child child = {.pid = -1};
    struct sg_error err = {0};
    /* --identity-split (an image labelled org.sandgate.identity=split, started
     * as root): the job gets its own uid, PID and mount namespace
     * (images/nodejs/README.md). Refused unless this process is root. */
    if (cfg.split && geteuid() != 0) {
        fprintf(stderr, "runner: --identity-split needs uid 0 (the executor starts a split "
                        "image as root)\n");
        return EXIT_SETUP;
    }
    if (sigfd < 0 ||
        runner_child_spawn(child_argv, envp, cfg.workspace, cfg.split, &child, &err) < 0) {
        fprintf(stderr, "runner: cannot start the child: %s\n",
                sigfd < 0 ? strerror(-sigfd) : err.msg);
        return EXIT_SETUP;
    }
    /* Whether or not the program runs as another uid: without this a program
     * of the same uid could read the nonce from /proc/1/mem or ptrace this
     * process. Better no result than a forgeable one. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        fprintf(stderr, "runner: prctl(PR_SET_DUMPABLE, 0): %s\n", strerror(errno));
        runner_child_kill(&child);
        return EXIT_SETUP;
    }
    int status = serve(&cfg, &child, sigfd);
    if (status == EXIT_NO_JOB)
        runner_child_kill(&child);
    return status;
}
