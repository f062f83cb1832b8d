/* sandgate-check end to end: the built binary (ASan build) run with fork/exec
 * from the repository root; exit codes and the three output formats. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUT_MAX (1024 * 1024)

static const char *check_bin(void)
{
    const char *b = getenv("SANDGATE_BUILD");
    static char path[256];
    snprintf(path, sizeof(path), "%s/sandgate-check", b && *b ? b : "build/asan");
    return path;
}

struct run {
    int status; /* exit code, or 128+signal */
    char out[OUT_MAX];
    char err[8192];
};

static size_t drain(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = '\0';
    return n;
}

/* Run sandgate-check with args (NULL-terminated), feeding in to stdin. */
static void run_check(struct run *r, const char *in, const char *const *args)
{
    const char *argv[32] = {check_bin()};
    int n = 1;
    while (args[n - 1] && n < 31) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    int pin[2], pout[2], perr[2];
    cr_assert(pipe(pin) == 0 && pipe(pout) == 0 && pipe(perr) == 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        close(pin[1]);
        close(pout[0]);
        close(perr[0]);
        char *mut[32]; /* execv's prototype predates const */
        for (int i = 0; i <= n; i++)
            mut[i] = (char *)(uintptr_t)argv[i];
        execv(mut[0], mut);
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    signal(SIGPIPE, SIG_IGN);
    if (in && write(pin[1], in, strlen(in)) < 0)
        cr_log_warn("stdin write failed");
    close(pin[1]);
    /* outputs are small in these tests: drain stdout, then stderr */
    drain(pout[0], r->out, sizeof(r->out));
    drain(perr[0], r->err, sizeof(r->err));
    close(pout[0]);
    close(perr[0]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    cr_assert_neq(r->status, 127, "could not exec %s (build it: make SAN=1 test-bins)", argv[0]);
}

static char tmpdir[64];

static void setup(void)
{
    strcpy(tmpdir, "/tmp/sg-check-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

/* Write content to tmpdir/name; returns the path (static buffer per slot). */
static const char *tmpfile_with(int slot, const char *name, const char *content, size_t len)
{
    static char paths[4][256];
    snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", tmpdir, name);
    FILE *f = fopen(paths[slot], "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(content, 1, len, f), len);
    fclose(f);
    return paths[slot];
}

#define LONE_CR_PY "x = 1\n# a\rimport os\n"

Test(check_cli, help_and_version, .init = setup, .fini = teardown)
{
    static struct run r;
    run_check(&r, NULL, (const char *[]){"--help", NULL});
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "Usage: sandgate-check") && strstr(r.out, "--policies-dir") &&
              strstr(r.out, "Exit status"));
    run_check(&r, NULL, (const char *[]){"--version", NULL});
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "sandgate-check ", 15) == 0, "%s", r.out);
}

Test(check_cli, usage_errors_exit_2, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *const *cases[] = {
        (const char *[]){NULL},
        (const char *[]){"--bogus", "x.py", NULL},
        (const char *[]){"--lang", "ruby", "x.py", NULL},
        (const char *[]){"--format", "xml", "x.py", NULL},
        (const char *[]){"-", NULL}, /* stdin without --lang */
        (const char *[]){"--lang", "python", "-", "-", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        run_check(&r, "", cases[i]);
        cr_assert_eq(r.status, 2, "case %zu: exit %d, stderr %s", i, r.status, r.err);
        cr_assert(strstr(r.err, "sandgate-check: "), "case %zu: %s", i, r.err);
    }
}

Test(check_cli, io_and_language_errors_exit_2, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad.py", LONE_CR_PY, strlen(LONE_CR_PY));
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "/nonexistent/x.py", bad, NULL});
    cr_assert_eq(r.status, 2, "an I/O error wins over a rejection");
    cr_assert(strstr(r.err, "/nonexistent/x.py"), "%s", r.err);
    cr_assert(strstr(r.out, "source.lone-cr"), "the other file is still reported");
    const char *txt = tmpfile_with(1, "notes.txt", "x", 1);
    run_check(&r, NULL, (const char *[]){"--policies-dir", "policies", txt, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--lang"), "%s", r.err);
}

Test(check_cli, policy_errors_exit_2, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad.py", LONE_CR_PY, strlen(LONE_CR_PY));
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--policy", "nosuch", bad, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "no policy named 'nosuch'") && strstr(r.err, "default"), "%s", r.err);
    const char *pol = tmpfile_with(1, "p.json", "{\"name\": \"p\", \"oops\": 1}", 24);
    run_check(&r, NULL, (const char *[]){"--policy", pol, bad, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "oops: unknown key"), "%s", r.err);
    run_check(&r, NULL, (const char *[]){"--policies-dir", "/nonexistent", bad, NULL});
    cr_assert_eq(r.status, 2);
}

Test(check_cli, text_format_rejection_exit_1, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad.py", LONE_CR_PY, strlen(LONE_CR_PY));
    run_check(&r, NULL, (const char *[]){"--policies-dir", "policies", bad, NULL});
    cr_assert_eq(r.status, 1, "stderr: %s", r.err);
    char want[300];
    snprintf(want, sizeof(want), "%s:2:4: error[source.lone-cr]: ", bad);
    cr_assert(strstr(r.out, want), "want '%s' in:\n%s", want, r.out);
    /* the source line (CR cut off), then a caret under column 4 */
    cr_assert(strstr(r.out, "      2 | # a\n        |    ^\n"), "%s", r.out);
    /* stdin with an explicit language; SANDGATE_POLICY_DIR is not needed
     * because ./policies is the fallback from the repository root */
    run_check(&r,
              "a;\xe2\x80\xa8"
              "b;\n",
              (const char *[]){"--lang", "javascript", "-", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.out, "-:1:3: error[source.line-separator]: "), "%s", r.out);
    /* the separator is never echoed raw: U+FFFD stands in for it */
    cr_assert(strstr(r.out, "      1 | a;\xef\xbf\xbd"
                            "b;\n        |   ^\n"),
              "%s", r.out);
}

Test(check_cli, json_format, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad.py", LONE_CR_PY, strlen(LONE_CR_PY));
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--policy", "strict", "--format",
                               "json", bad, NULL});
    cr_assert_eq(r.status, 1);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    cr_assert_not_null(doc, "%s: %s", jerr.text, r.out);
    cr_assert(json_is_array(doc) && json_array_size(doc) == 1);
    json_t *f = json_array_get(doc, 0);
    cr_assert_str_eq(json_string_value(json_object_get(f, "file")), bad);
    cr_assert_str_eq(json_string_value(json_object_get(f, "verdict")), "reject");
    cr_assert_str_eq(json_string_value(json_object_get(f, "language")), "python");
    json_t *pol = json_object_get(f, "policy");
    cr_assert_str_eq(json_string_value(json_object_get(pol, "name")), "strict");
    cr_assert_eq(strlen(json_string_value(json_object_get(pol, "sha256"))), 64);
    json_t *v = json_array_get(json_object_get(f, "violations"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(v, "rule")), "source.lone-cr");
    cr_assert_eq(json_integer_value(json_object_get(v, "line")), 2);
    cr_assert_eq(json_integer_value(json_object_get(v, "column")), 4);
    json_decref(doc);
}

Test(check_cli, sarif_format, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad file.py", "# coding: latin-1\n", 18);
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--format", "sarif", bad, NULL});
    cr_assert_eq(r.status, 1);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    cr_assert_not_null(doc, "%s", jerr.text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "version")), "2.1.0");
    cr_assert(json_is_string(json_object_get(doc, "$schema")));
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    json_t *driver = json_object_get(json_object_get(run, "tool"), "driver");
    cr_assert_str_eq(json_string_value(json_object_get(driver, "name")), "sandgate-check");
    json_t *rules = json_object_get(driver, "rules");
    cr_assert_geq(json_array_size(rules), 19);
    json_t *res = json_array_get(json_object_get(run, "results"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(res, "ruleId")), "source.coding-cookie");
    cr_assert_str_eq(json_string_value(json_object_get(res, "level")), "error");
    json_int_t idx = json_integer_value(json_object_get(res, "ruleIndex"));
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(rules, (size_t)idx), "id")),
                     "source.coding-cookie");
    cr_assert(json_is_string(json_object_get(json_object_get(res, "message"), "text")));
    json_t *loc =
        json_object_get(json_array_get(json_object_get(res, "locations"), 0), "physicalLocation");
    const char *uri =
        json_string_value(json_object_get(json_object_get(loc, "artifactLocation"), "uri"));
    cr_assert(strstr(uri, "bad%20file.py"), "%s", uri);
    json_t *region = json_object_get(loc, "region");
    cr_assert_eq(json_integer_value(json_object_get(region, "startLine")), 1);
    cr_assert_eq(json_integer_value(json_object_get(region, "startColumn")), 11);
    cr_assert_eq(json_integer_value(json_object_get(region, "endLine")), 1);
    cr_assert_eq(json_integer_value(json_object_get(region, "endColumn")), 18);
    json_decref(doc);
}

#define GOOD_JS                                                                                    \
    "const path = require(\"path\");\nmodule.exports = { main: () => path.join(\"a\", \"b\") };\n"

Test(check_cli, accepted_exit_0_and_mixed_exit_1, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *good = tmpfile_with(0, "good.mjs", GOOD_JS, strlen(GOOD_JS));
    run_check(&r, NULL, (const char *[]){"--policies-dir", "policies", good, NULL});
    cr_assert_eq(r.status, 0, "stdout %s stderr %s", r.out, r.err);
    cr_assert_str_eq(r.out, "", "an accepted file prints nothing in text mode");
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--format", "json", good, NULL});
    cr_assert_eq(r.status, 0);
    json_t *doc = json_loads(r.out, 0, NULL);
    json_t *f = json_array_get(doc, 0);
    cr_assert_str_eq(json_string_value(json_object_get(f, "verdict")), "accept");
    cr_assert_str_eq(json_string_value(json_object_get(f, "language")), "nodejs");
    cr_assert_eq(json_array_size(json_object_get(f, "violations")), 0);
    json_decref(doc);
    const char *bad = tmpfile_with(1, "bad.cjs", "require(\"child_process\");\n", 26);
    run_check(&r, NULL, (const char *[]){"--policies-dir", "policies", good, bad, NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.out, "bad.cjs:1:") && !strstr(r.out, "good.mjs"), "%s", r.out);
    /* an empty SARIF run still lists the rules */
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--format", "sarif", good, NULL});
    cr_assert_eq(r.status, 0);
    doc = json_loads(r.out, 0, NULL);
    json_t *run = json_array_get(json_object_get(doc, "runs"), 0);
    cr_assert_eq(json_array_size(json_object_get(run, "results")), 0);
    json_decref(doc);
}

Test(check_cli, policy_dir_from_environment, .init = setup, .fini = teardown)
{
    static struct run r;
    /* a one-policy directory where JavaScript is disabled */
    char *pol = NULL;
    cr_assert(asprintf(&pol,
                       "{\"name\": \"custom\", \"python\": {\"imports\": {\"mode\": \"allow\", "
                       "\"modules\": []}}, \"javascript\": {\"enabled\": false, \"imports\": "
                       "{\"mode\": \"allow\", \"modules\": []}}}") > 0);
    tmpfile_with(0, "custom.json", pol, strlen(pol));
    free(pol);
    const char *js = tmpfile_with(1, "x.js", "1;\n", 3);
    cr_assert_eq(setenv("SANDGATE_POLICY_DIR", tmpdir, 1), 0);
    run_check(&r, NULL, (const char *[]){"--policy", "custom", js, NULL});
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.out, "error[language.disabled]"), "%s", r.out);
    /* --policies-dir wins over the environment */
    run_check(&r, NULL,
              (const char *[]){"--policies-dir", "policies", "--policy", "custom", js, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "no policy named 'custom'"), "%s", r.err);
    unsetenv("SANDGATE_POLICY_DIR");
}

Test(check_cli, oversize_input_is_an_error, .init = setup, .fini = teardown)
{
    static struct run r;
    char path[128];
    snprintf(path, sizeof(path), "%s/big.py", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    /* one byte over the 16 MiB input cap */
    cr_assert_eq(fseek(f, 16 * 1024 * 1024, SEEK_SET), 0);
    fputc('\n', f);
    fclose(f);
    run_check(&r, NULL, (const char *[]){"--policies-dir", "policies", path, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "larger than 16777216 bytes"), "%s", r.err);
}

#define LISTING                                                                                    \
    "{\"language\":\"python\",\"interpreter\":{\"name\":\"CPython\",\"version\":"                  \
    "\"3.11.2\"},\"stdlib_modules\":[\"json\",\"os\"],\"packages\":[{\"name\":"                    \
    "\"numpy\",\"version\":\"1.24.2\",\"modules\":[\"numpy\"]},{\"name\":"                         \
    "\"tabulate\",\"version\":\"0.8.9\",\"modules\":[\"tabulate\"]}],"                             \
    "\"system_packages\":[]}"

static int json_has(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return 1;
    return 0;
}

Test(check_cli, list_modules_with_an_image_listing, .init = setup, .fini = teardown)
{
    static struct run r;
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--list-modules", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "policy default (sha256 "), "%s", r.out);
    cr_assert(strstr(r.out, "python: only these modules"), "%s", r.out);
    cr_assert(strstr(r.out, " pathlib "), "%s", r.out);
    const char *listing = tmpfile_with(0, "py.json", LISTING, strlen(LISTING));
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--list-modules", "--runtime",
                                    listing, "--format", "json", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *doc = json_loads(r.out, 0, NULL);
    cr_assert_not_null(doc, "%s", r.out);
    json_t *py = json_object_get(json_object_get(doc, "languages"), "python");
    cr_assert_str_eq(json_string_value(json_object_get(py, "mode")), "allow");
    cr_assert(json_has(json_object_get(py, "modules"), "json"));
    json_t *rt = json_array_get(json_object_get(py, "runtimes"), 0);
    json_t *ok = json_object_get(rt, "importable");
    cr_assert(json_has(ok, "json") && json_has(ok, "numpy"));
    cr_assert(!json_has(ok, "os") && !json_has(ok, "tabulate"));
    json_t *no = json_array_get(json_object_get(rt, "not_importable"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(no, "module")), "tabulate");
    cr_assert_str_eq(json_string_value(json_object_get(no, "version")), "0.8.9");
    json_decref(doc);
}

#define SET_MANIFEST                                                                               \
    "{\"set\":\"xl\",\"language\":\"python\",\"preimport\":[],\"packages\":[{\"name\":"            \
    "\"sgtiny\",\"version\":\"1.0\",\"kind\":\"wheel\",\"source\":\"w sha256:0\",\"modules\":"     \
    "[\"sgtiny\"]},{\"name\":\"python3-tabulate\",\"version\":\"0.8.9-1\",\"kind\":"               \
    "\"debian\",\"source\":\"apt\",\"modules\":[\"tabulate\"]}]}"

Test(check_cli, list_modules_of_package_sets, .init = setup, .fini = teardown)
{
    static struct run r;
    /* a set image's manifest on its own, and an executor's listing with it */
    const char *set = tmpfile_with(0, "set.json", SET_MANIFEST, strlen(SET_MANIFEST));
    char both[sizeof(LISTING) + sizeof(SET_MANIFEST) + 16];
    snprintf(both, sizeof(both), "%.*s,\"sets\":[%s]}", (int)strlen(LISTING) - 1, LISTING,
             SET_MANIFEST);
    const char *listing = tmpfile_with(1, "rt.json", both, strlen(both));
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--list-modules", "--runtime",
                                    set, "--runtime", listing, "--format", "json", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *doc = json_loads(r.out, 0, NULL);
    json_t *runs =
        json_object_get(json_object_get(json_object_get(doc, "languages"), "python"), "runtimes");
    json_t *alone = json_array_get(runs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(alone, "set")), "xl");
    cr_assert(json_is_null(json_object_get(alone, "interpreter")));
    json_t *no = json_object_get(alone, "not_importable");
    cr_assert_eq(json_array_size(no), 2, "the default policy allows neither: %s", r.out);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(no, 0), "version")), "1.0");
    json_t *in_listing = json_array_get(json_object_get(json_array_get(runs, 1), "sets"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(in_listing, "set")), "xl");
    cr_assert_eq(json_array_size(json_object_get(in_listing, "not_importable")), 2);
    json_decref(doc);
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--list-modules", "--runtime",
                                    listing, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "package set xl ("), "%s", r.out);
    cr_assert(strstr(r.out, "sgtiny [sgtiny 1.0]"), "%s", r.out);
}

Test(check_cli, list_modules_refuses_misuse, .init = setup, .fini = teardown)
{
    static struct run r;
    const char *bad = tmpfile_with(0, "bad.json", "{\"language\": \"ruby\"}", 20);
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--list-modules", "--runtime",
                                    bad, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "not a runtime listing"), "%s", r.err);
    run_check(&r, NULL, (const char *const[]){"--list-modules", "x.py", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "takes no input files"), "%s", r.err);
    run_check(&r, NULL, (const char *const[]){"--runtime", bad, "x.py", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "needs --list-modules"), "%s", r.err);
}

Test(check_cli, a_policy_file_that_extends_finds_its_parent, .init = setup, .fini = teardown)
{
    static struct run r;
    static const char data[] = "{\"name\": \"data\", \"extends\": \"default\", \"python\": "
                               "{\"imports\": {\"modules\": [\"tabulate\"]}}}";
    const char *pol = tmpfile_with(0, "data.json", data, strlen(data));
    const char *src = tmpfile_with(1, "job.py", "import tabulate\n", 16);
    run_check(&r, NULL,
              (const char *const[]){"--policies-dir", "policies", "--policy", pol, src, NULL});
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    run_check(&r, NULL, (const char *const[]){"--policies-dir", "policies", src, NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.out, "by policy 'default' (python.imports.modules)"), "%s", r.out);
}
