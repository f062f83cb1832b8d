/* check_main.c - sandgate-check: analyse files against a policy, as the
 * gateway would, and report like a compiler (text), as JSON or as SARIF.
 * Exit 0: every file accepted; 1: some file rejected; 2: usage, I/O or
 * policy error (errors win over rejections). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze.h"
#include "check_modules.h"
#include "check_report.h"
#include "policy.h"
#include "readfile.h"

#define CHECK_FILES_MAX 4096                      /* inputs per run */
#define CHECK_INPUT_MAX SG_LIMIT_SOURCE_BYTES_MAX /* bytes per input; policies allow no more */
#define CHECK_DISPLAY_MAX 1024                    /* bytes of a file name as shown */
#define SYSTEM_POLICY_DIR "/usr/share/sandgate/policies"
#define EXIT_ACCEPTED 0
#define EXIT_REJECTED 1
#define EXIT_ERROR 2

enum lang_choice { LANG_AUTO = -1 };

struct options {
    const char *policy; /* NAME or FILE */
    const char *policies_dir;
    int lang; /* enum sg_lang or LANG_AUTO */
    enum check_format format;
    char **files;
    int nfiles;
    int list_modules;                   /* --list-modules */
    char *runtimes[CHECK_LISTINGS_MAX]; /* --runtime FILE */
    int nruntimes;
};

static const char usage_text[] =
    "Usage: sandgate-check [OPTIONS] FILE... | -\n"
    "       sandgate-check --list-modules [--policy P] [--runtime LISTING]... [--format F]\n"
    "\n"
    "Check Python or JavaScript sources against a sandgate policy, exactly as the\n"
    "gateway does before it runs a job: canonicalisation, parsing, policy rules.\n"
    "\n"
    "Options:\n"
    "  --policy NAME|FILE   policy to apply (default: default). A value containing\n"
    "                       '/' or ending in .json is read as a file; otherwise it is\n"
    "                       the \"name\" of a policy in the policies directory.\n"
    "  --policies-dir DIR   where NAME is looked up. Default: $SANDGATE_POLICY_DIR,\n"
    "                       else " SYSTEM_POLICY_DIR " if it exists,\n"
    "                       else ./policies. Every *.json there must be valid.\n"
    "  --lang LANG          python, javascript (aliases: python3, nodejs, node, js)\n"
    "                       or auto (default): .py is Python; .js .mjs .cjs JavaScript.\n"
    "                       Reading standard input (-) needs an explicit language.\n"
    "  --format FMT         text (default): file:line:col: error[RULE]: message,\n"
    "                              then the source line and a caret under the span\n"
    "                       json: [{file, language, verdict, policy{name,sha256},\n"
    "                              violations[], dropped}]\n"
    "                       sarif: SARIF 2.1.0 for code-scanning tools\n"
    "  --list-modules       print what the policy lets a job import, per language,\n"
    "                       instead of checking files (text or json)\n"
    "  --runtime LISTING    with --list-modules: a sandbox image's runtime listing\n"
    "                       (/opt/sandgate/runtime.json, or an executor's GET\n"
    "                       /v1/runtime with its package sets) or a package set's\n"
    "                       manifest (/opt/sandgate/set.json); adds which installed\n"
    "                       modules the policy lets a job import and which it does\n"
    "                       not, set by set. Repeatable (up to 8).\n"
    "  -h, --help           show this help and exit\n"
    "  --version            show the version and exit\n"
    "\n"
    "Each input is at most 16 MiB (the policy's max_source_bytes applies on top).\n"
    "Rules are documented in policies/README.md.\n"
    "\n"
    "Exit status: 0 every file accepted, 1 at least one file rejected,\n"
    "2 usage, I/O or policy error.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int check_inputs(const struct options *o);

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sandgate-check: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'sandgate-check --help'.\n");
    va_end(ap);
    return -EINVAL;
}

/* Returns 0, 1 when --help/--version was handled, or -EINVAL. */
static int parse_args(int argc, char **argv, struct options *o)
{
    enum { OPT_POLICY = 256, OPT_DIR, OPT_LANG, OPT_FORMAT, OPT_VERSION, OPT_LIST, OPT_RUNTIME };
    static const struct option longopts[] = {
        {"policy", required_argument, NULL, OPT_POLICY},
        {"policies-dir", required_argument, NULL, OPT_DIR},
        {"lang", required_argument, NULL, OPT_LANG},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"list-modules", no_argument, NULL, OPT_LIST},
        {"runtime", required_argument, NULL, OPT_RUNTIME},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.policy = "default", .lang = LANG_AUTO};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        enum sg_lang l;
        switch (c) {
        case OPT_POLICY:
            o->policy = optarg;
            break;
        case OPT_DIR:
            o->policies_dir = optarg;
            break;
        case OPT_LANG:
            if (strcmp(optarg, "auto") == 0)
                o->lang = LANG_AUTO;
            else if (sg_lang_from_name(optarg, &l) == 0)
                o->lang = (int)l;
            else
                return usage_error("unknown language '%s'", optarg);
            break;
        case OPT_FORMAT:
            if (check_format_from_name(optarg, &o->format) < 0)
                return usage_error("unknown format '%s' (text, json, sarif)", optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 1;
        case OPT_VERSION:
            printf("sandgate-check %s\n", SG_CHECK_VERSION);
            return 1;
        case OPT_LIST:
            o->list_modules = 1;
            break;
        case OPT_RUNTIME:
            if (o->nruntimes == CHECK_LISTINGS_MAX)
                return usage_error("more than %d --runtime files", CHECK_LISTINGS_MAX);
            o->runtimes[o->nruntimes++] = optarg;
            break;
        default:
            return usage_error("invalid option '%s'", argv[optind - 1]);
        }
    }
    o->files = argv + optind;
    o->nfiles = argc - optind;
    return check_inputs(o);
}

static int check_inputs(const struct options *o)
{
    if (o->nruntimes && !o->list_modules)
        return usage_error("%s", "--runtime needs --list-modules");
    if (o->list_modules)
        return o->nfiles ? usage_error("%s", "--list-modules takes no input files")
               : o->format == CHECK_FORMAT_SARIF
                   ? usage_error("%s", "--list-modules writes text or json")
                   : 0;
    if (o->nfiles == 0)
        return usage_error("%s", "no input files");
    if (o->nfiles > CHECK_FILES_MAX)
        return usage_error("%s", "too many input files (at most 4096)");
    int stdin_count = 0;
    for (int i = 0; i < o->nfiles; i++)
        stdin_count += strcmp(o->files[i], "-") == 0;
    if (stdin_count > 1)
        return usage_error("%s", "standard input (-) given more than once");
    if (stdin_count && o->lang == LANG_AUTO)
        return usage_error("%s", "reading standard input (-) needs --lang python|javascript");
    return 0;
}

static const char *default_policies_dir(void)
{
    const char *env = getenv("SANDGATE_POLICY_DIR");
    struct stat st;
    if (env && *env)
        return env;
    if (stat(SYSTEM_POLICY_DIR, &st) == 0 && S_ISDIR(st.st_mode))
        return SYSTEM_POLICY_DIR;
    return "policies";
}

static int is_policy_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

/* Load the policy; on success *ret_policy is owned either directly
 * (*ret_single) or through *ret_set. */
static int load_policy(const struct options *o, struct sg_policy **ret_single,
                       struct sg_policy_set **ret_set, const struct sg_policy **ret_policy)
{
    struct sg_error err = {0};
    *ret_single = NULL;
    *ret_set = NULL;
    const char *dir = o->policies_dir ? o->policies_dir : default_policies_dir();
    if (is_policy_path(o->policy)) {
        /* a file that extends a parent finds it in the directory; a directory
         * that does not load only matters to such a file */
        struct sg_policy_set *parents = NULL;
        sg_policy_set_load_dir(dir, &parents, NULL);
        int r = sg_policy_load_file_with(o->policy, parents, ret_single, &err);
        sg_policy_set_free(parents);
        if (r < 0)
            goto fail;
        *ret_policy = *ret_single;
        return 0;
    }
    if (sg_policy_set_load_dir(dir, ret_set, &err) < 0)
        goto fail;
    *ret_policy = sg_policy_set_find(*ret_set, o->policy);
    if (*ret_policy)
        return 0;
    fprintf(stderr, "sandgate-check: no policy named '%s' in %s; available:", o->policy, dir);
    for (size_t i = 0; i < (*ret_set)->count; i++)
        fprintf(stderr, " %s", (*ret_set)->items[i]->name);
    fputc('\n', stderr);
    sg_policy_set_free(*ret_set);
    *ret_set = NULL;
    return -ENOENT;
fail:
    fprintf(stderr, "sandgate-check: policy: %s\n", err.msg);
    return err.code ? err.code : -EINVAL;
}

static int lang_for_file(const char *file, int choice, enum sg_lang *ret)
{
    if (choice != LANG_AUTO) {
        *ret = (enum sg_lang)choice;
        return 0;
    }
    const char *dot = strrchr(file, '.');
    if (dot && strcmp(dot, ".py") == 0) {
        *ret = SG_LANG_PYTHON;
        return 0;
    }
    if (dot && (!strcmp(dot, ".js") || !strcmp(dot, ".mjs") || !strcmp(dot, ".cjs"))) {
        *ret = SG_LANG_JAVASCRIPT;
        return 0;
    }
    return -EINVAL;
}

/* Analyse one input into r (the text report is written here, while the
 * source is at hand). Returns 0 or a negative code (reported). */
static int check_one(const struct options *o, const struct sg_policy *policy, const char *file,
                     struct check_result *r)
{
    struct sg_error err = {0};
    char *src = NULL;
    size_t len = 0;
    int rc;
    if (lang_for_file(file, o->lang, &r->lang) < 0) {
        fprintf(stderr,
                "sandgate-check: %s: cannot tell the language from the extension "
                "(.py, .js, .mjs, .cjs); use --lang\n",
                file);
        return -EINVAL;
    }
    if (strcmp(file, "-") == 0)
        rc = sg_read_fd_capped(STDIN_FILENO, "<stdin>", CHECK_INPUT_MAX, &src, &len, &err);
    else
        rc = sg_read_file_capped(file, CHECK_INPUT_MAX, &src, &len, &err);
    if (rc == 0)
        rc = sg_analyze(policy, r->lang, src, len, &r->analysis, &err);
    if (rc < 0)
        fprintf(stderr, "sandgate-check: %s\n", err.msg);
    else if (o->format == CHECK_FORMAT_TEXT && check_report_text(stdout, r, src, len) < 0)
        rc = -EIO;
    free(src);
    return rc;
}

static int run(const struct options *o, const struct sg_policy *policy)
{
    struct check_result *results = calloc((size_t)o->nfiles, sizeof(*results));
    char *names = calloc((size_t)o->nfiles, CHECK_DISPLAY_MAX);
    int status = EXIT_ACCEPTED;
    size_t n = 0;
    if (!results || !names) {
        fprintf(stderr, "sandgate-check: out of memory\n");
        status = EXIT_ERROR;
        goto out;
    }
    for (int i = 0; i < o->nfiles; i++) {
        struct check_result *r = &results[n];
        char *name = names + (size_t)i * CHECK_DISPLAY_MAX;
        /* names go into reports and JSON strings: make them valid UTF-8 */
        sg_text_sanitize(o->files[i], strlen(o->files[i]), 0, name, CHECK_DISPLAY_MAX);
        r->file = name;
        if (check_one(o, policy, o->files[i], r) < 0) {
            status = EXIT_ERROR;
            continue;
        }
        if (!r->analysis.accepted && status == EXIT_ACCEPTED)
            status = EXIT_REJECTED;
        n++;
    }
    if (check_report_write(stdout, o->format, policy, results, n) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "sandgate-check: cannot write the report\n");
        status = EXIT_ERROR;
    }
out:
    for (size_t i = 0; i < n; i++)
        sg_analysis_free(&results[i].analysis);
    free(results);
    free(names);
    return status;
}

int main(int argc, char **argv)
{
    struct options o;
    int r = parse_args(argc, argv, &o);
    if (r != 0)
        return r > 0 ? EXIT_ACCEPTED : EXIT_ERROR;
    struct sg_policy *single = NULL;
    struct sg_policy_set *set = NULL;
    const struct sg_policy *policy = NULL;
    if (load_policy(&o, &single, &set, &policy) < 0)
        return EXIT_ERROR;
    int status = o.list_modules
                     ? (check_list_modules(stdout, o.format, policy, o.runtimes, o.nruntimes) < 0
                            ? EXIT_ERROR
                            : EXIT_ACCEPTED)
                     : run(&o, policy);
    sg_policy_free(single);
    sg_policy_set_free(set);
    return status;
}
