/* diff_common.h - the shared body of the differential fuzz targets
 * (diff_python.c, diff_javascript.c).
 *
 * Each input the analyzer accepts under the default policy (so tree-sitter
 * parsed it without ERROR or MISSING nodes) is summarised from tree-sitter's
 * tree - identifiers, attribute names, calls, string literals, regexes, the
 * structure the policy's rules are about - and sent with the source to an
 * oracle: a long-lived interpreter process of the language's real runtime
 * (CPython's compile() and ast; V8's vm.compileFunction, as the Node runner
 * compiles main.js, and acorn for the structure), started once from the
 * command in $DIFF_ORACLE. Inputs travel in batches of DIFF_BATCH so the
 * pipe round trip is paid once per batch. The oracle answers, per input,
 * "same", "runtime-rejects" (the job could not run: harmless), "oracle-rejects"
 * (the runtime compiles it but the structure parser does not: counted, not
 * a finding) or "differs" with a detail: a finding, written to
 * $DIFF_FINDINGS/<hash> (source) and <hash>.txt (the detail). A finding is
 * not a crash: fuzzing goes on, and run-fuzz-diff.sh fails at the end when
 * any was written. An oracle that dies is started again once per batch; if
 * the fresh one dies on the same batch too, the batch is kept as
 * $DIFF_FINDINGS/oracle-crash-NN and the target aborts.
 *
 * Wire format, both ways: frames of a 4-byte little-endian length and that
 * many bytes. Request per input: the source frame, then the summary frame
 * (JSON). Reply per input: one frame of JSON {"verdict": ..., "detail": ...}.
 */
#ifndef SG_FUZZ_DIFF_COMMON_H
#define SG_FUZZ_DIFF_COMMON_H

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze.h"
#include "policy.h"
#include "ts_util.h"

/* Inputs per round trip to the oracle. */
#define DIFF_BATCH 64
/* Findings written per run: one family yields thousands of variants. */
#define DIFF_FINDINGS_MAX 500 /* $DIFF_FINDINGS_MAX overrides */
/* Longest summary or reply frame the harness accepts from the oracle. */
#define DIFF_FRAME_MAX (1u << 20)

struct diff_item {
    uint8_t *src;
    size_t len;
    char *summary;
};

static struct diff_state {
    struct sg_policy *policy;
    FILE *to, *from;
    pid_t pid;
    const char *findings;
    const char *cmd; /* $DIFF_ORACLE */
    int verbose;
    struct diff_item batch[DIFF_BATCH];
    size_t n;
    unsigned long sent, same, runtime_rejects, oracle_rejects, differs, written, written_max,
        restarts;
} diff;

static _Noreturn void diff_die(const char *what)
{
    fprintf(stderr, "diff: %s\n", what);
    abort();
}

/* 0, or -1 when the oracle's pipe is closed (it died). */
static int diff_write_frame(const void *p, size_t n)
{
    uint8_t h[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    return fwrite(h, 1, 4, diff.to) == 4 && (!n || fwrite(p, 1, n, diff.to) == n) ? 0 : -1;
}

/* A reply (caller frees), or NULL when the oracle died. */
static char *diff_read_frame(void)
{
    uint8_t h[4];
    if (fread(h, 1, 4, diff.from) != 4)
        return NULL;
    size_t n = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
    if (n > DIFF_FRAME_MAX)
        diff_die("oracle frame too large");
    char *p = malloc(n + 1);
    if (!p)
        diff_die("out of memory");
    if (fread(p, 1, n, diff.from) != n) {
        free(p);
        return NULL;
    }
    p[n] = '\0';
    return p;
}

static void diff_finding(const struct diff_item *it, const char *detail)
{
    if (diff.written >= diff.written_max)
        return;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < it->len; i++)
        h = (h ^ it->src[i]) * 1099511628211ull;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%016llx", diff.findings, (unsigned long long)h);
    FILE *f = fopen(path, "wb");
    if (!f)
        diff_die("cannot write a finding (is $DIFF_FINDINGS a directory?)");
    fwrite(it->src, 1, it->len, f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/%016llx.txt", diff.findings, (unsigned long long)h);
    if ((f = fopen(path, "w"))) {
        fprintf(f, "%s\n", detail);
        fclose(f);
    }
    diff.written++;
}

static void diff_spawn(void);
static void diff_stop(void);

/* Send the batch and read one reply per input into replies[]; 0, or -1
 * when the oracle died on the way (replies read so far are freed). */
static int diff_exchange(char **replies)
{
    for (size_t i = 0; i < diff.n; i++)
        if (diff_write_frame(diff.batch[i].src, diff.batch[i].len) < 0 ||
            diff_write_frame(diff.batch[i].summary, strlen(diff.batch[i].summary)) < 0)
            return -1;
    if (fflush(diff.to) != 0)
        return -1;
    for (size_t i = 0; i < diff.n; i++) {
        if (!(replies[i] = diff_read_frame())) {
            while (i > 0)
                free(replies[--i]);
            return -1;
        }
    }
    return 0;
}

/* The oracle died on this batch twice: keep the batch for a replay
 * (DIFF_VERBOSE=1 with the runtime at hand says which input) and stop. */
static _Noreturn void diff_oracle_crashed(void)
{
    char path[4096];
    for (size_t i = 0; i < diff.n; i++) {
        snprintf(path, sizeof(path), "%s/oracle-crash-%02zu", diff.findings, i);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(diff.batch[i].src, 1, diff.batch[i].len, f);
            fclose(f);
        }
    }
    fprintf(stderr, "diff: the oracle died twice on one batch, kept as %s/oracle-crash-*\n",
            diff.findings);
    abort();
}

static void diff_judge(size_t i, const char *reply)
{
    json_t *j = json_loads(reply, 0, NULL);
    const char *v = j ? json_string_value(json_object_get(j, "verdict")) : NULL;
    const char *d = j ? json_string_value(json_object_get(j, "detail")) : NULL;
    if (!v)
        diff_die("oracle reply is not {\"verdict\": ...}");
    if (diff.verbose) /* DIFF_VERBOSE=1: every verdict, for replaying seeds */
        fprintf(stderr, "diff: %s %s | %.*s\n", v, d ? d : "",
                (int)(diff.batch[i].len < 200 ? diff.batch[i].len : 200), diff.batch[i].src);
    if (strcmp(v, "same") == 0)
        diff.same++;
    else if (strcmp(v, "runtime-rejects") == 0)
        diff.runtime_rejects++;
    else if (strcmp(v, "oracle-rejects") == 0)
        diff.oracle_rejects++;
    else if (strcmp(v, "differs") == 0) {
        diff.differs++;
        diff_finding(&diff.batch[i], d ? d : "");
    } else
        diff_die("oracle verdict unknown");
    json_decref(j);
}

static void diff_flush(void)
{
    char *replies[DIFF_BATCH];
    if (diff_exchange(replies) < 0) {
        /* a transient death (the container runtime, the host's memory) is
         * survived once; the same batch killing a fresh oracle is kept */
        diff_stop();
        fprintf(stderr, "diff: the oracle died, starting it again (%lu restarts)\n",
                ++diff.restarts);
        diff_spawn();
        if (diff_exchange(replies) < 0)
            diff_oracle_crashed();
    }
    for (size_t i = 0; i < diff.n; i++) {
        diff_judge(i, replies[i]);
        free(replies[i]);
        free(diff.batch[i].src);
        free(diff.batch[i].summary);
    }
    diff.sent += diff.n;
    diff.n = 0;
}

/* Close the oracle's pipes and reap it; its exit status is reported when
 * it was not a clean exit. */
static void diff_stop(void)
{
    fclose(diff.to);
    fclose(diff.from);
    diff.to = diff.from = NULL;
    int st = 0;
    if (waitpid(diff.pid, &st, 0) == diff.pid && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        fprintf(stderr, "diff: the oracle ended with %s %d\n",
                WIFSIGNALED(st) ? "signal" : "status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

static void diff_atexit(void)
{
    if (!diff.to)
        return;
    if (diff.n)
        diff_flush();
    fprintf(stderr,
            "diff: compared=%lu same=%lu runtime_rejects=%lu oracle_rejects=%lu differs=%lu "
            "findings_written=%lu oracle_restarts=%lu\n",
            diff.sent, diff.same, diff.runtime_rejects, diff.oracle_rejects, diff.differs,
            diff.written, diff.restarts);
    diff_stop();
}

/* Start the oracle: $DIFF_ORACLE through /bin/sh, stdin and stdout piped. */
static void diff_spawn(void)
{
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0)
        diff_die("pipe");
    diff.pid = fork();
    if (diff.pid < 0)
        diff_die("fork");
    if (diff.pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        execl("/bin/sh", "sh", "-c", diff.cmd, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    diff.to = fdopen(in[1], "wb");
    diff.from = fdopen(out[0], "rb");
    if (!diff.to || !diff.from)
        diff_die("fdopen");
}

/* Load the default policy, start the oracle, remember where findings go. */
static void diff_init(const char *default_findings)
{
    const char *dir = getenv("SANDGATE_POLICY_DIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/default.json", dir && *dir ? dir : "policies");
    struct sg_error err = {0};
    if (sg_policy_load_file(path, &diff.policy, &err) < 0) {
        fprintf(stderr, "diff: cannot load %s: %s\n", path, err.msg);
        abort();
    }
    const char *cmd = getenv("DIFF_ORACLE");
    if (!cmd || !*cmd)
        diff_die("set DIFF_ORACLE to the oracle command (tests/run-fuzz-diff.sh does)");
    const char *max = getenv("DIFF_FINDINGS_MAX");
    diff.written_max = max && *max ? strtoul(max, NULL, 10) : DIFF_FINDINGS_MAX;
    diff.verbose = getenv("DIFF_VERBOSE") && *getenv("DIFF_VERBOSE") == '1';
    diff.findings = getenv("DIFF_FINDINGS");
    if (!diff.findings || !*diff.findings)
        diff.findings = default_findings;
    mkdir(diff.findings, 0755);
    signal(SIGPIPE, SIG_IGN);
    diff.cmd = cmd;
    diff_spawn();
    atexit(diff_atexit);
}

/* Queue src with its tree-sitter summary when the analyzer accepts it. */
static void diff_one(enum sg_lang lang, const TSLanguage *ts, const uint8_t *data, size_t size,
                     json_t *(*summarise)(TSNode root, const char *src))
{
    struct sg_analysis a;
    struct sg_error err = {0};
    if (sg_analyze(diff.policy, lang, (const char *)data, size, &a, &err) < 0)
        abort(); /* an internal failure: never for any input */
    int accepted = a.accepted;
    sg_analysis_free(&a);
    TSTree *tree = NULL;
    if (accepted && sg_ts_parse(ts, (const char *)data, size, &tree) == 0) {
        json_t *s = summarise(ts_tree_root_node(tree), (const char *)data);
        char *text = s ? json_dumps(s, JSON_COMPACT) : NULL;
        json_decref(s);
        uint8_t *copy = malloc(size ? size : 1);
        if (!text || !copy)
            diff_die("out of memory");
        memcpy(copy, data, size);
        diff.batch[diff.n++] = (struct diff_item){.src = copy, .len = size, .summary = text};
        if (diff.n == DIFF_BATCH)
            diff_flush();
    }
    if (tree)
        ts_tree_delete(tree);
    sg_ts_parsers_release(); /* as fuzz_analyze_common.h: balanced mallocs per input */
}

/* Append the text of n to the JSON array arr. */
static void diff_push_text(json_t *arr, TSNode n, const char *src)
{
    uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    json_array_append_new(arr, json_stringn(src + b, e - b));
}

#endif
