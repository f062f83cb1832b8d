#include "job.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "outcome.h"
#include "log.h"
#include "membudget.h"

#define JOB_READ_CHUNK 65536

void job_io_init(struct job_io *io, size_t max_stdout, const char *nonce)
{
    memset(io, 0, sizeof(*io));
    sg_buf_init(&io->line, max_stdout);
    sg_buf_init(&io->diag, JOB_DIAG_MAX);
    if (nonce)
        snprintf(io->nonce, sizeof(io->nonce), "%s", nonce);
}

void job_io_free(struct job_io *io)
{
    if (io->hooks)
        sg_membudget_release(io->hooks->budget, io->reserved);
    io->reserved = 0;
    sg_buf_free(&io->line);
    sg_buf_free(&io->diag);
    json_decref(io->result);
    io->result = NULL;
}

int job_line_is_result(const char *line, size_t len, const char *nonce, json_t **ret)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    /* Cheap filters first: most foreign lines are not objects or lack the nonce. */
    if (i == len || line[i] != '{' || (nonce[0] && !memmem(line, len, nonce, strlen(nonce))))
        return 0;
    json_t *j = json_loadb(line + i, len - i, JSON_ALLOW_NUL, NULL);
    const char *n = json_string_value(json_object_get(j, "nonce"));
    json_t *v = json_object_get(j, "sandgate_runner");
    if (json_is_object(j) && json_is_integer(v) && json_integer_value(v) == 1 &&
        (!nonce[0] || (n && strcmp(n, nonce) == 0))) {
        *ret = j;
        return 1;
    }
    json_decref(j);
    return 0;
}

/* The client went: 1 when that ends the job (io->end set), 0 when the
 * client_gone hook was told and the job goes on without the client. */
static int client_went(struct job_io *io)
{
    if (io->hooks->client_gone) {
        if (!io->client_left)
            io->hooks->client_gone(io->hooks->ud);
        io->client_left = 1;
        return 0;
    }
    io->end = JOB_END_CANCELLED;
    io->cancel_detail = "client_gone";
    return 1;
}

/* Room for take more bytes in the line: its next allocation (the size
 * sg_buf's doubling would reach, within the cap) reserved in the budget
 * first. 0, or -E2BIG when the budget refuses (io->budget_refused). */
static int line_room(struct job_io *io, size_t take)
{
    struct sg_membudget *b = io->hooks ? io->hooks->budget : NULL;
    size_t need = io->line.len + take + 1;
    if (!b || need <= io->line.alloc || need > io->line.cap + 1)
        return 0; /* sg_buf_append() answers -E2BIG past the cap */
    size_t grow = io->line.alloc ? io->line.alloc : 256;
    while (grow < need)
        grow *= 2;
    if (grow > io->line.cap + 1)
        grow = io->line.cap + 1;
    size_t more = (grow - io->line.alloc) * JOB_LINE_MEMORY_COPIES;
    if (!sg_membudget_reserve(b, more)) {
        io->budget_refused = 1;
        return -E2BIG;
    }
    io->reserved += more;
    return sg_buf_presize(&io->line, grow);
}

/* A frame line (it has the nonce and a "stream" key): hand a well-formed one
 * to the hook. Returns the hook's verdict, 0 when there is none. */
static int take_frame(struct job_io *io, json_t *j)
{
    const char *name = json_string_value(json_object_get(j, "stream"));
    json_t *text = json_object_get(j, "text");
    int r = 0;
    if (io->hooks && io->hooks->frame && !io->client_left && name && json_is_string(text) &&
        (strcmp(name, "stdout") == 0 || strcmp(name, "stderr") == 0)) {
        io->last_frame_ms = attach_now_ms();
        r = io->hooks->frame(io->hooks->ud, name, text);
        if (r < 0 && !client_went(io))
            r = 0; /* the job goes on without its client */
    }
    json_decref(j);
    return r < 0 ? -ECONNRESET : 0;
}

struct feed_ctx {
    struct job_io *io;
    int done;
};

#define FEED_STOP (-ECANCELED)

static int on_frame(void *ctx, int stream, const char *data, size_t len)
{
    struct feed_ctx *f = ctx;
    if (stream != ATTACH_STDOUT) {
        /* Runner diagnostics: keep the head, drop the rest. */
        size_t room = f->io->diag.cap - f->io->diag.len;
        sg_buf_append(&f->io->diag, data, len < room ? len : room);
        return 0;
    }
    struct job_io *io = f->io;
    if (len > io->line.cap - io->stdout_total)
        return -E2BIG;
    io->stdout_total += len;
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) : len;
        int r = line_room(io, take);
        if (r == 0)
            r = sg_buf_append(&io->line, data, take);
        if (r < 0)
            return r;
        if (!nl)
            return 0;
        if (job_line_is_result(io->line.data ? io->line.data : "", io->line.len, io->nonce,
                               &io->result)) {
            if (!json_object_get(io->result, "stream")) {
                f->done = 1;
                return FEED_STOP;
            }
            json_t *frame = io->result;
            io->result = NULL;
            if ((r = take_frame(io, frame)) < 0)
                return r;
        }
        sg_buf_reset(&io->line);
        data = nl + 1;
        len -= take + 1;
    }
    return 0;
}

int job_feed(struct job_io *io, struct attach_parser *p, const void *data, size_t len)
{
    struct feed_ctx f = {.io = io};
    int r = attach_parse(p, data, len, on_frame, &f);
    if (f.done)
        return 1;
    return r;
}

size_t job_result_cap(size_t max_output, size_t max_artifacts)
{
    /* JSON escaping can turn one byte into six ("\u0001"). */
    return 2 * 6 * max_output + max_artifacts / 3 * 4 + JOB_RESULT_SLACK;
}

/* The hooks' descriptors: 1 when one of them ends the job (io->end set). */
static int hooks_fired(struct job_io *io, const struct pollfd *p, int n)
{
    for (int i = 1; i < n; i++) {
        if (!p[i].revents)
            continue;
        if (p[i].fd != io->hooks->cancel_fd)
            return client_went(io);
        io->end = JOB_END_CANCELLED;
        io->cancel_detail = "cancelled";
        return 1;
    }
    return 0;
}

/* How long poll() may wait: until the deadline or the next heartbeat. */
static int poll_wait_ms(struct job_io *io, double left)
{
    const struct job_hooks *h = io->hooks;
    if (!h || !h->heartbeat_ms || !h->heartbeat || io->client_left)
        return (int)left + 1;
    double due = io->last_frame_ms + h->heartbeat_ms - attach_now_ms();
    if (due <= 0) {
        io->last_frame_ms = attach_now_ms();
        if (h->heartbeat(h->ud) < 0)
            io->sink_failed = 1;
        due = h->heartbeat_ms;
    }
    return (int)(due < left ? due : left) + 1;
}

static int wait_readable(int fd, struct job_io *io, double left)
{
    const struct job_hooks *h = io->hooks;
    struct pollfd p[3] = {{.fd = fd, .events = POLLIN}};
    int n = 1;
    if (h && h->cancel_fd >= 0)
        p[n++] = (struct pollfd){.fd = h->cancel_fd, .events = POLLIN};
    if (h && h->client_fd >= 0 && !io->client_left)
        p[n++] = (struct pollfd){.fd = h->client_fd, .events = POLLRDHUP};
    int r = poll(p, (nfds_t)n, poll_wait_ms(io, left));
    if (io->sink_failed && !io->client_left && client_went(io))
        return -1;
    if (r > 0 && h && hooks_fired(io, p, n))
        return -1;
    return r > 0 && p[0].revents ? 1 : 0;
}

static void read_until_result(int fd, int64_t deadline, struct job_io *io)
{
    static __thread char chunk[JOB_READ_CHUNK];
    struct attach_parser p = {0};
    io->last_frame_ms = attach_now_ms();
    for (;;) {
        double left = (double)deadline - attach_now_ms();
        if (left <= 0) {
            io->end = JOB_END_TIMEOUT;
            return;
        }
        int n = wait_readable(fd, io, left);
        if (n < 0)
            return; /* cancelled */
        if (n == 0)
            continue; /* the deadline check above ends the loop */
        ssize_t got = read(fd, chunk, sizeof(chunk));
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            io->end = got == 0 ? JOB_END_EOF : JOB_END_IO;
            io->io_errno = got == 0 ? 0 : errno;
            return;
        }
        int r = job_feed(io, &p, chunk, (size_t)got);
        if (r == 1) {
            io->end = JOB_END_RESULT;
            return;
        }
        if (r == -ECONNRESET)
            return; /* client_went set io->end */
        if (r < 0) {
            io->end = r == -E2BIG ? JOB_END_OVERFLOW : JOB_END_IO;
            io->io_errno = -r;
            return;
        }
    }
}

/* After the job was written (r: the write's result): read until the end. */
static void after_write(int fd, int r, int64_t deadline, struct job_io *io)
{
    if (r == -ETIMEDOUT) {
        io->end = JOB_END_TIMEOUT;
        return;
    }
    if (r < 0) {
        /* The runner may have died before reading: its stream then tells. */
        io->end = JOB_END_IO;
        io->io_errno = -r;
    }
    read_until_result(fd, deadline, io);
}

void job_exchange(int fd, const char *job_line, size_t len, unsigned deadline_ms, struct job_io *io)
{
    double start = attach_now_ms();
    int64_t deadline = (int64_t)start + deadline_ms;
    after_write(fd, attach_write_all(fd, job_line, len, deadline), deadline, io);
    io->run_ms = attach_now_ms() - start;
}

void job_exchange_json(int fd, json_t *job, unsigned deadline_ms, struct job_io *io)
{
    double start = attach_now_ms();
    int64_t deadline = (int64_t)start + deadline_ms;
    int r = attach_write_json(fd, job, deadline);
    json_decref(job);
    if (io->hooks && io->hooks->sent)
        io->hooks->sent(io->hooks->sent_ud);
    after_write(fd, r, deadline, io);
    io->run_ms = attach_now_ms() - start;
}

void job_read_result(int fd, unsigned deadline_ms, struct job_io *io)
{
    double start = attach_now_ms();
    read_until_result(fd, (int64_t)start + deadline_ms, io);
    io->run_ms = attach_now_ms() - start;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* State.OOMKilled is set only when dockerd handles the OOM event before the
 * exit; the event is sent either way, sometimes after the exit. For a SIGKILL
 * exit without the flag, look for it a short while: the engine's word, so a
 * program that SIGKILLs the runner itself is still not called OOM. */
static void confirm_oom(struct docker_client *dc, const struct sandbox *sb, double run_ms,
                        struct docker_state *st)
{
    if (st->oom_killed || st->exit_code != OUTCOME_SIGKILL_EXIT)
        return;
    double since = wall_s() - run_ms / 1000.0 - JOB_DEAD_WAIT_MS / 1000.0;
    double give_up = attach_now_ms() + JOB_OOM_EVENT_WAIT_MS;
    for (;;) {
        bool seen = false;
        struct sg_error e = {0};
        if (sandbox_oom_event(dc, sb, since, wall_s(), &seen, &e) < 0)
            return;
        if (seen) {
            st->oom_killed = true;
            sg_log(SG_LOG_INFO, "oom_from_event", "container=%.12s", sb->id);
            return;
        }
        if (attach_now_ms() >= give_up)
            return;
        struct timespec nap = {0, JOB_OOM_EVENT_STEP_MS * 1000000L};
        nanosleep(&nap, NULL);
    }
}

void job_confirm_oom_exit(struct docker_client *dc, const struct sandbox *sb, double run_ms,
                          struct exec_outcome *o)
{
    if (o->status != EXEC_PROGRAM_ERROR || o->exit_code <= 0)
        return;
    struct docker_state st = {.exit_code = OUTCOME_SIGKILL_EXIT};
    confirm_oom(dc, sb, run_ms, &st);
    if (st.oom_killed)
        outcome_limit(o, "memory", EXEC_CODE_MEMORY,
                      "memory limit exceeded (the engine reports an out-of-memory kill)");
}

static void classify_eof(struct docker_client *dc, struct sandbox *sb, struct job_io *io,
                         struct exec_outcome *o)
{
    struct docker_state st;
    struct sg_error e = {0};
    /* The stream closes as the sandbox goes; its final state needs a moment. */
    if (sandbox_dead_state(dc, sb, JOB_DEAD_WAIT_MS, &st, &e) < 0) {
        outcome_runner_error(o, "sandbox ended without a result; its state is unknown: %.300s",
                             e.msg);
        return;
    }
    confirm_oom(dc, sb, io->run_ms, &st);
    outcome_from_dead(&st, io->diag.data, o);
}

void job_classify(struct docker_client *dc, struct sandbox *sb, struct job_io *io,
                  struct exec_outcome *o)
{
    switch (io->end) {
    case JOB_END_RESULT:
        if (outcome_from_runner_json(io->result, o) < 0)
            outcome_runner_error(o, "malformed result from the runner (%zu bytes)", io->line.len);
        break;
    case JOB_END_TIMEOUT:
        outcome_limit(o, "time", EXEC_CODE_TIME, "time limit exceeded; sandbox killed");
        break;
    case JOB_END_CANCELLED:
        outcome_cancelled(o, io->cancel_detail ? io->cancel_detail : "cancelled");
        break;
    case JOB_END_OVERFLOW:
        outcome_limit(o, "output", EXEC_CODE_OUTPUT, "output limit exceeded; sandbox killed");
        break;
    case JOB_END_IO:
        if (io->io_errno == EPROTO) {
            outcome_runner_error(o, "malformed attach stream from dockerd");
            break;
        }
        /* a broken stream means the sandbox went away */
        __attribute__((fallthrough));
    case JOB_END_EOF:
        classify_eof(dc, sb, io, o);
        break;
    }
}

void job_run(struct docker_client *dc, struct sandbox *sb, const char *nonce, json_t *job,
             unsigned timeout_ms, size_t max_output, const struct job_hooks *hooks,
             struct exec_outcome *o, double *ret_run_ms, size_t *ret_reserved)
{
    struct job_io io;
    /* A streamed job's output also travels in its frames: room for both. */
    size_t frames = hooks && hooks->frame ? job_result_cap(max_output, 0) : 0;
    job_io_init(&io, job_result_cap(max_output, JOB_ARTIFACTS_MAX) + frames, nonce);
    io.hooks = hooks;
    job_exchange_json(sb->fd, job, timeout_ms + JOB_GRACE_MS, &io);
    *ret_run_ms = io.run_ms;
    if (io.budget_refused)
        sg_log(SG_LOG_WARN, "job_memory_refused",
               "container=%.12s line_bytes=%zu: the memory budget is full; output limit", sb->id,
               io.line.len);
    job_classify(dc, sb, &io, o);
    *ret_reserved += io.reserved; /* handed over: the answer is made of it */
    io.reserved = 0;
    job_io_free(&io);
}
