#include "outcome.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_raw.h"

static const char *status_names[EXEC_STATUS_COUNT] = {
    "success",
    "program_error",
    "resource_limit_exceeded",
    "unauthorized_access",
    "runtime_error",
    "program_runner_error",
    "cancelled",
};

/* Largest exit code / signal a runner may report; anything else is malformed. */
#define OUTCOME_EXIT_MAX 255
#define OUTCOME_SIGNAL_MAX 64
/* runsc's exit status when the sandbox dies from its pids limit (measured). */
#define OUTCOME_SANDBOX_KILLED_EXIT 2

void outcome_init(struct exec_outcome *o)
{
    memset(o, 0, sizeof(*o));
    o->memory_used_kb = -1;
    o->time_used_ms = -1;
}

void outcome_clear(struct exec_outcome *o)
{
    json_decref(o->out);
    json_decref(o->err);
    json_decref(o->result);
    json_decref(o->artifacts);
    json_decref(o->artifacts_skipped);
    json_decref(o->denials);
    o->out = o->err = o->result = o->artifacts = o->artifacts_skipped = o->denials = NULL;
}

const char *outcome_status_name(enum exec_status s)
{
    return (unsigned)s < EXEC_STATUS_COUNT ? status_names[s] : "program_runner_error";
}

void outcome_limit(struct exec_outcome *o, const char *type, int exit_code, const char *detail)
{
    o->status = EXEC_RESOURCE_LIMIT;
    o->resource_limit_type = type;
    o->runtime_error_type = NULL;
    o->exit_code = exit_code;
    snprintf(o->detail, sizeof(o->detail), "%s", detail ? detail : "");
}

void outcome_cancelled(struct exec_outcome *o, const char *detail)
{
    o->status = EXEC_CANCELLED;
    o->resource_limit_type = NULL;
    o->runtime_error_type = NULL;
    o->exit_code = EXEC_CODE_CANCELLED;
    snprintf(o->detail, sizeof(o->detail), "%s", detail);
}

void outcome_runner_error(struct exec_outcome *o, const char *fmt, ...)
{
    o->status = EXEC_RUNNER_ERROR;
    o->exit_code = EXEC_CODE_RUNNER;
    o->resource_limit_type = NULL;
    o->runtime_error_type = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
    va_end(ap);
}

static int int_in(json_t *v, long long lo, long long hi, int *ret)
{
    if (!v || json_is_null(v)) {
        *ret = 0;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return -EPROTO;
    *ret = (int)json_integer_value(v);
    return 0;
}

/* A result is {"present": bool, "value": any} or, for a value jansson cannot
 * hold, {"present": bool, "value_json": checked JSON text}. */
static int result_ok(json_t *res)
{
    if (!res || json_is_null(res))
        return 1;
    if (!json_is_object(res) || !json_is_boolean(json_object_get(res, "present")))
        return 0;
    json_t *raw = json_object_get(res, "value_json");
    return !raw ||
           (json_is_string(raw) && sg_json_raw_ok(json_string_value(raw), json_string_length(raw),
                                                  SG_JSON_RESULT_DEPTH_MAX));
}

/* Structural checks of the fields the response will carry. */
static int take_fields(json_t *j, struct exec_outcome *o, int *ret_exit, int *ret_sig)
{
    json_t *out = json_object_get(j, "stdout"), *err = json_object_get(j, "stderr");
    json_t *res = json_object_get(j, "result"), *art = json_object_get(j, "artifacts");
    json_t *mem = json_object_get(j, "memory_used_kb"), *t = json_object_get(j, "time_used_ms");
    if (json_integer_value(json_object_get(j, "sandgate_runner")) != 1 ||
        (out && !json_is_string(out)) || (err && !json_is_string(err)) ||
        (art && !json_is_array(art) && !json_is_null(art)) || !result_ok(res) ||
        (mem && !json_is_null(mem) && (!json_is_integer(mem) || json_integer_value(mem) < 0)) ||
        (t && !json_is_null(t) && (!json_is_number(t) || json_number_value(t) < 0)) ||
        int_in(json_object_get(j, "exit_code"), -OUTCOME_EXIT_MAX, OUTCOME_EXIT_MAX, ret_exit) <
            0 ||
        int_in(json_object_get(j, "signal"), 0, OUTCOME_SIGNAL_MAX, ret_sig) < 0)
        return -EPROTO;
    o->out = json_incref(out);
    o->err = json_incref(err);
    if (json_is_object(res) && json_is_true(json_object_get(res, "present")))
        o->result = json_incref(res);
    o->artifacts = json_is_array(art) ? json_incref(art) : NULL;
    json_t *skipped = json_object_get(j, "artifacts_skipped");
    o->artifacts_skipped = json_is_array(skipped) ? json_incref(skipped) : NULL;
    o->memory_used_kb = json_is_integer(mem) ? json_integer_value(mem) : -1;
    o->time_used_ms = json_is_number(t) ? json_number_value(t) : -1;
    return 0;
}

static void program_error(struct exec_outcome *o, int exit_code, const char *msg)
{
    o->status = EXEC_PROGRAM_ERROR;
    o->exit_code = exit_code ? exit_code : 1;
    o->runtime_error_type = "nonzero_exit";
    snprintf(o->detail, sizeof(o->detail), "%s", msg);
}

static int classify(const char *outcome, int exit_code, int sig, const char *msg,
                    struct exec_outcome *o)
{
    if (strcmp(outcome, "ok") == 0) {
        if (exit_code != 0)
            program_error(o, exit_code, msg);
        else
            o->status = EXEC_SUCCESS;
    } else if (strcmp(outcome, "exception") == 0 || strcmp(outcome, "no_main") == 0) {
        program_error(o, exit_code, msg[0] ? msg : outcome);
    } else if (strcmp(outcome, "output_limit") == 0) {
        outcome_limit(o, "output", EXEC_CODE_OUTPUT, msg[0] ? msg : "output limit exceeded");
    } else if (strcmp(outcome, "timeout") == 0) {
        outcome_limit(o, "time", EXEC_CODE_TIME, msg[0] ? msg : "time limit exceeded");
    } else if (strcmp(outcome, "killed") == 0) {
        o->status = EXEC_PROGRAM_ERROR;
        o->exit_code = sig ? -sig : (exit_code ? exit_code : -9);
        o->runtime_error_type = sig ? "signalled" : "nonzero_exit";
        snprintf(o->detail, sizeof(o->detail), "%s", msg[0] ? msg : "killed by a signal");
    } else if (strcmp(outcome, "cancelled") == 0) {
        o->status = EXEC_CANCELLED;
        o->exit_code = EXEC_CODE_CANCELLED;
        snprintf(o->detail, sizeof(o->detail), "%s", msg[0] ? msg : "cancelled");
    } else if (strcmp(outcome, "bad_job") == 0) {
        outcome_runner_error(o, "runner rejected the job: %.400s", msg);
    } else if (strcmp(outcome, "runner_error") == 0) {
        outcome_runner_error(o, "sandbox unusable: %.400s", msg);
    } else {
        return -EPROTO;
    }
    return 0;
}

/* process_or_network: the kernel filter killed a job whose policy refuses
 * both, and the kernel does not say which call it was (policies/README.md). */
static const char *const denial_types[] = {"process", "network",     "process_or_network",
                                           "import",  "native_code", "unpickle",
                                           "file",    "reflection"};

const char *outcome_denial_type(const char *type)
{
    for (size_t i = 0; type && i < sizeof(denial_types) / sizeof(denial_types[0]); i++)
        if (strcmp(type, denial_types[i]) == 0)
            return denial_types[i];
    return NULL;
}

/* Cut s (valid UTF-8 before snprintf truncated it) back to whole characters. */
static void utf8_trim(char *s)
{
    size_t n = strlen(s), end = n;
    while (end > 0 && ((unsigned char)s[end - 1] & 0xC0) == 0x80)
        end--;
    if (end > 0 && (unsigned char)s[end - 1] >= 0xC0) {
        unsigned char lead = (unsigned char)s[end - 1];
        size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (n - (end - 1) < want)
            s[end - 1] = '\0';
    }
}

/* The runner's denials, rebuilt from checked fields only (the program can
 * add records of its own: they only ever condemn it). */
static int take_denials(json_t *j, struct exec_outcome *o)
{
    json_t *d = json_object_get(j, "denials"), *e;
    size_t i;
    if (!json_is_array(d) || json_array_size(d) == 0)
        return -EPROTO;
    o->denials = json_array();
    json_array_foreach(d, i, e)
    {
        const char *type = outcome_denial_type(json_string_value(json_object_get(e, "type")));
        const char *target = json_string_value(json_object_get(e, "target"));
        if (!type)
            return -EPROTO;
        if (i >= OUTCOME_DENIALS_MAX)
            continue;
        char rule[32], t[OUTCOME_TARGET_MAX + 1];
        snprintf(rule, sizeof(rule), "runtime.%s", type);
        snprintf(t, sizeof(t), "%s", target ? target : "");
        utf8_trim(t);
        json_array_append_new(o->denials,
                              json_pack("{s:s,s:s,s:s}", "rule", rule, "type", type, "target", t));
        if (i == 0) {
            o->unauthorized_access_type = type;
            snprintf(o->detail, sizeof(o->detail), "%s: %s%s", rule, t,
                     json_array_size(d) > 1 ? " (and more: see denials)" : "");
        }
    }
    o->status = EXEC_UNAUTHORIZED;
    o->exit_code = EXEC_CODE_UNAUTHORIZED;
    o->runtime_error_type = NULL;
    o->result = (json_decref(o->result), NULL);
    return 0;
}

int outcome_from_runner(const char *line, size_t len, struct exec_outcome *o)
{
    json_t *j = json_loadb(line, len, JSON_ALLOW_NUL, NULL);
    int r = outcome_from_runner_json(j, o);
    json_decref(j);
    return r;
}

int outcome_from_runner_json(json_t *j, struct exec_outcome *o)
{
    int exit_code = 0, sig = 0;
    int r = -EPROTO;
    const char *outcome = json_string_value(json_object_get(j, "outcome"));
    json_t *m = json_object_get(j, "message");
    if (!json_is_object(j) || !outcome || (m && !json_is_string(m) && !json_is_null(m)))
        goto out;
    if (take_fields(j, o, &exit_code, &sig) < 0)
        goto out;
    const char *msg = json_is_string(m) ? json_string_value(m) : "";
    if (strcmp(outcome, "unauthorized") == 0)
        r = take_denials(j, o);
    else
        r = classify(outcome, exit_code, sig, msg, o);
out:
    if (r < 0)
        outcome_clear(o);
    return r;
}

void outcome_from_dead(const struct docker_state *state, const char *runner_stderr,
                       struct exec_outcome *o)
{
    snprintf(o->log_detail, sizeof(o->log_detail), "%s", runner_stderr ? runner_stderr : "");
    if (!state) {
        outcome_runner_error(o, "sandbox ended without a result and its state is unknown "
                                "(dockerd unreachable?)");
        return;
    }
    /* Only the engine's word makes it memory: the program runs as the runner's
     * uid and can SIGKILL it (PID 1) itself, which looks the same from here. */
    if (state->oom_killed) {
        outcome_limit(o, "memory", EXEC_CODE_MEMORY, "memory limit exceeded (OOM killed)");
        return;
    }
    if (state->exit_code == OUTCOME_SIGKILL_EXIT) {
        o->status = EXEC_PROGRAM_ERROR;
        o->exit_code = -SIGKILL;
        o->runtime_error_type = "signalled";
        snprintf(o->detail, sizeof(o->detail),
                 "the sandbox's main process was killed by SIGKILL without a result; the engine "
                 "reports no out-of-memory kill (the program runs as the same user and can "
                 "signal it)");
        return;
    }
    /* A sandbox that reaches its pids limit dies as a whole (runsc's own
     * threads count against it) with the runtime's exit status 2, and no
     * result comes back. Any other end is the runner's (crash, or killed by
     * the program, which runs as the same uid). */
    char d[OUTCOME_DETAIL_MAX];
    if (state->exit_code == OUTCOME_SANDBOX_KILLED_EXIT) {
        snprintf(d, sizeof(d),
                 "the sandbox was killed without a result (exit %d): process "
                 "limit reached",
                 state->exit_code);
        outcome_limit(o, "pids", EXEC_CODE_PIDS, d);
        return;
    }
    outcome_runner_error(o,
                         "the runner ended without a result (exit %d); its diagnostics are "
                         "in the executor log",
                         state->exit_code);
}
