/* sandbox_runsc_restore.c - --sandbox-restore for the direct backend
 * (sandbox_runsc.h). Per pool (its label, one flavour), a generation is one
 * checkpoint of a "golden" sandbox booted to its runner's ready line; each
 * launch restores a new sandbox from it (`runsc create` with the executor's
 * pipes and the sandbox's own cgroup, then `runsc restore`) until the
 * checkpoint has served max_uses restores, is max_age old, or the pool's
 * image, create body or runsc binary changed: the next launch then makes a
 * new one (off the job's path: the refill's) and the old one is deleted once
 * no restore reads it. A failed checkpoint or restore is logged and counted,
 * backs the pool off restoring, drops that generation and falls back to a
 * boot: it never fails a job and leaves no sandbox, cgroup or image dir. */
#include "sandbox_runsc_int.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"
#include "sandbox.h"
#include "sha256.h"

#define RST_READY_LINE "{\"sandgate_runner_ready\":1}"
#define RST_READY_MAX 65536u /* what a golden sandbox may say before it */
#define RST_ERR_MAX 1024u    /* a failed runsc call's words kept for the log */

struct rst_gen {
    char pool[128];
    char key[SG_SHA256_HEX_LEN + 1]; /* body, image id, runsc binary */
    char host[16];                   /* every sandbox of the pool's (restored memory has it) */
    char dir[SRS_PATH_MAX];          /* the current checkpoint; "" none */
    char old[SRS_PATH_MAX];          /* the previous one while restores read it */
    unsigned seq, uses, refs, old_refs, fails;
    double born, backoff_until;
    bool making;
};

struct srs_restore {
    unsigned max_uses;
    double max_age_ms;
    struct rst_gen g[SANDBOX_RUNSC_GENERATIONS_MAX];
    unsigned n;
    unsigned long restores, fallbacks, checkpoints, checkpoint_failures;
};

int srs_restore_new(struct sandbox_runsc *rs, const struct sandbox_runsc_config *cfg,
                    struct sg_error *err)
{
    struct srs_restore *x = calloc(1, sizeof(*x));
    if (!x)
        return sg_error_set(err, -ENOMEM, "out of memory");
    x->max_uses = cfg->restore_max_uses ? cfg->restore_max_uses : 1;
    x->max_age_ms = cfg->restore_max_age_ms;
    int r = srs_mkdir_p(rs->checkpoints, 0700);
    if (r < 0) {
        free(x);
        return sg_error_set(err, r, "cannot make %s: %s", rs->checkpoints, strerror(-r));
    }
    rs->restore = x;
    return 0;
}

void srs_restore_free(struct sandbox_runsc *rs)
{
    if (!rs->restore)
        return;
    srs_rm_tree(rs->checkpoints);
    free(rs->restore);
    rs->restore = NULL;
}

/* The pool's label in the create body (sandbox_flavour_body), else "". */
static void pool_of(const char *body, char *pool, size_t cap)
{
    json_t *spec = json_loads(body, 0, NULL);
    const char *v =
        json_string_value(json_object_get(json_object_get(spec, "Labels"), EXEC_LABEL_POOL));
    snprintf(pool, cap, "%s", v ? v : "");
    json_decref(spec);
}

/* What a checkpoint is only good for: this body on this image id with this
 * runsc binary (its inode, size and time: an upgrade in place is seen). */
static void key_of(const struct sandbox_runsc *rs, const char *body, const char *image_id,
                   char key[SG_SHA256_HEX_LEN + 1])
{
    struct stat st = {0};
    stat(rs->runsc, &st);
    size_t n = strlen(body) + 256;
    char *text = malloc(n);
    if (!text) {
        snprintf(key, SG_SHA256_HEX_LEN + 1, "%s", "unkeyed");
        return;
    }
    int len = snprintf(text, n, "%s\n%s\n%llu.%llu.%lld.%ld", body, image_id,
                       (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                       (long long)st.st_size, (long)st.st_mtim.tv_sec);
    sg_sha256_hex(text, (size_t)len, key);
    free(text);
}

/* Locked: the pool's entry, made on first use; NULL when the table is full. */
static struct rst_gen *gen_of(struct srs_restore *x, const char *pool)
{
    for (unsigned i = 0; i < x->n; i++)
        if (strcmp(x->g[i].pool, pool) == 0)
            return &x->g[i];
    if (x->n == SANDBOX_RUNSC_GENERATIONS_MAX)
        return NULL;
    struct rst_gen *e = &x->g[x->n++];
    memset(e, 0, sizeof(*e));
    snprintf(e->pool, sizeof(e->pool), "%s", pool);
    char h[SG_SHA256_HEX_LEN + 1];
    sg_sha256_hex(pool, strlen(pool), h);
    snprintf(e->host, sizeof(e->host), "sg%.10s", h);
    return e;
}

/* Locked: a restore may use e's checkpoint now. */
static bool gen_serves(const struct srs_restore *x, const struct rst_gen *e, const char *key,
                       double now)
{
    return e->dir[0] && strcmp(e->key, key) == 0 && e->uses < x->max_uses &&
           now - e->born < x->max_age_ms;
}

/* Locked: the current checkpoint retired: deleted now, or once the restores
 * reading it are done (release()). */
static void gen_retire(struct rst_gen *e)
{
    if (!e->dir[0])
        return;
    if (e->refs == 0) {
        srs_rm_tree(e->dir);
    } else {
        memcpy(e->old, e->dir, sizeof(e->old));
        e->old_refs = e->refs;
    }
    e->dir[0] = '\0';
    e->refs = 0;
}

/* Locked: a restore from dir is over. */
static void release(struct rst_gen *e, const char *dir)
{
    if (e->dir[0] && strcmp(dir, e->dir) == 0 && e->refs > 0) {
        e->refs--;
    } else if (e->old[0] && strcmp(dir, e->old) == 0 && e->old_refs > 0 && --e->old_refs == 0) {
        srs_rm_tree(e->old);
        e->old[0] = '\0';
    }
}

/* Locked: after a failure, no restore for a while (doubling), and the
 * generation dropped: the next try makes a new checkpoint. */
static void back_off(struct rst_gen *e)
{
    double wait = SANDBOX_RUNSC_BACKOFF_MIN_MS * (double)(1u << (e->fails < 5 ? e->fails : 5));
    e->fails++;
    e->backoff_until = attach_now_ms() +
                       (wait < SANDBOX_RUNSC_BACKOFF_MAX_MS ? wait : SANDBOX_RUNSC_BACKOFF_MAX_MS);
    gen_retire(e);
}

/* Unlocked: the golden sandbox's ready line on its stream, within the bound. */
static int await_ready(int fd)
{
    char *buf = malloc(RST_READY_MAX + 1);
    size_t n = 0;
    double deadline = attach_now_ms() + SANDBOX_RUNSC_GOLDEN_READY_MS;
    int r = buf ? -ETIMEDOUT : -ENOMEM;
    while (buf && n < RST_READY_MAX && attach_now_ms() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        ssize_t got = read(fd, buf + n, RST_READY_MAX - n);
        if (got <= 0) {
            r = -EPIPE;
            break;
        }
        n += (size_t)got;
        buf[n] = '\0';
        if (memmem(buf, n, RST_READY_LINE, strlen(RST_READY_LINE))) {
            r = 0;
            break;
        }
    }
    free(buf);
    return r;
}

/* Unlocked: boot a golden sandbox for body, wait for its ready line and
 * checkpoint it (uncompressed: a compressed image restores slower) into
 * dir. The golden sandbox is deleted either way; dir only on failure. */
static int make_checkpoint(struct sandbox_runsc *rs, const char *body, const char *host,
                           const char *dir, struct sg_error *err)
{
    struct sandbox g;
    struct sg_buf out;
    sg_buf_init(&out, RST_ERR_MAX);
    int r = srs_boot(rs, body, host, &g, err);
    if (r < 0)
        return r;
    if ((r = await_ready(g.fd)) < 0) {
        r = sg_error_set(err, r, "the golden sandbox sent no ready line: %s", strerror(-r));
    } else {
        const char *argv[SRS_ARGV_MAX];
        const char *words[] = {"checkpoint", "--image-path", dir, "--compression",
                               "none",       g.id,           NULL};
        srs_runsc_argv(rs, argv, words);
        int code = -1;
        r = srs_run_both(argv, &out, SANDBOX_RUNSC_CHECKPOINT_TIMEOUT_MS, &code);
        if (r < 0 || code != 0)
            r = sg_error_set(err, r < 0 ? r : -EIO, "runsc checkpoint failed (exit %d): %.*s", code,
                             (int)(out.len < 300 ? out.len : 300), out.data ? out.data : "");
    }
    sandbox_runsc_destroy(&g, NULL);
    sg_buf_free(&out);
    if (r < 0)
        srs_rm_tree(dir);
    return r;
}

/* Unlocked: e (marked making) gets a new checkpoint for key. */
static int new_generation(struct sandbox_runsc *rs, struct rst_gen *e, const char *body,
                          const char *key, struct sg_error *err)
{
    char dir[SRS_PATH_MAX];
    pthread_mutex_lock(&rs->mu);
    unsigned seq = e->seq + 1;
    snprintf(dir, sizeof(dir), "%s/%.16s-%u", rs->checkpoints, key, seq);
    pthread_mutex_unlock(&rs->mu);
    double t0 = attach_now_ms();
    srs_rm_tree(dir);
    int r = make_checkpoint(rs, body, e->host, dir, err);
    pthread_mutex_lock(&rs->mu);
    e->making = false;
    if (r == 0) {
        memcpy(e->dir, dir, sizeof(e->dir));
        memcpy(e->key, key, sizeof(e->key));
        e->seq = seq;
        e->uses = 0;
        e->born = attach_now_ms();
        rs->restore->checkpoints++;
    } else {
        rs->restore->checkpoint_failures++;
        back_off(e);
    }
    pthread_mutex_unlock(&rs->mu);
    if (r == 0)
        sg_log(SG_LOG_INFO, "runsc_checkpoint", "pool=%s generation=%u ms=%.0f dir=%s", e->pool,
               seq, attach_now_ms() - t0, dir);
    else
        sg_log(SG_LOG_WARN, "runsc_checkpoint_failed", "pool=%s error=\"%s\"", e->pool, err->msg);
    return r;
}

/* Locked: take a use of e's checkpoint into dir, or say why not: 1 when a
 * new generation is to be made by this caller (e->making set), -EAGAIN when
 * none serves now. */
static int take(struct srs_restore *x, struct rst_gen *e, const char *key, char *dir)
{
    double now = attach_now_ms();
    if (gen_serves(x, e, key, now)) {
        e->uses++;
        e->refs++;
        memcpy(dir, e->dir, SRS_PATH_MAX);
        return 0;
    }
    if (e->making || now < e->backoff_until || e->old_refs > 0)
        return -EAGAIN;
    gen_retire(e);
    e->making = true;
    return 1;
}

/* Unlocked: the restore itself into b (prepared); ret filled on success. */
static int restore_into(struct sandbox_runsc *rs, struct sandbox_runsc_box *b, const char *dir,
                        struct sandbox *ret, struct sg_error *err)
{
    const char *create[SRS_ARGV_MAX], *restore[SRS_ARGV_MAX], *wait[SRS_ARGV_MAX];
    const char *cw[] = {"create", "--bundle", b->bundle, b->id, NULL};
    const char *rw[] = {"restore",  "--detach", "--image-path", dir,
                        "--bundle", b->bundle,  b->id,          NULL};
    const char *ww[] = {"wait", b->id, NULL};
    srs_runsc_argv(rs, create, cw);
    srs_runsc_argv(rs, restore, rw);
    srs_runsc_argv(rs, wait, ww);
    struct sg_buf why;
    sg_buf_init(&why, RST_ERR_MAX);
    int r = srs_start_restored(b, create, restore, wait, &ret->fd, &why);
    if (r < 0)
        sg_error_set(err, r, "restore from %s failed: %.*s", dir,
                     (int)(why.len < 300 ? why.len : 300), why.data ? why.data : "");
    sg_buf_free(&why);
    return r;
}

/* Locked: the restore's outcome counted on e. */
static void restored(struct sandbox_runsc *rs, struct rst_gen *e, const char *dir, int r)
{
    release(e, dir);
    if (r == 0) {
        rs->restore->restores++;
        e->fails = 0;
    } else {
        rs->restore->fallbacks++;
        if (strcmp(dir, e->dir) == 0)
            back_off(e);
    }
}

int srs_restore_launch(struct sandbox_runsc *rs, const char *body, struct sandbox *ret,
                       struct sg_error *err)
{
    struct srs_restore *x = rs->restore;
    char pool[128], image_id[72], key[SG_SHA256_HEX_LEN + 1], dir[SRS_PATH_MAX];
    memset(ret, 0, sizeof(*ret));
    ret->fd = -1;
    pool_of(body, pool, sizeof(pool));
    if (!pool[0]) /* not a pool's sandbox (the start-up seccomp probe): booted */
        return sg_error_set(err, -EAGAIN, "not a pool's sandbox");
    pthread_mutex_lock(&rs->mu);
    struct rst_gen *e = gen_of(x, pool);
    char host[16];
    if (e)
        memcpy(host, e->host, sizeof(host));
    pthread_mutex_unlock(&rs->mu);
    if (!e)
        return sg_error_set(err, -ENOSPC, "too many pools to restore");
    double t0 = attach_now_ms();
    struct sandbox_runsc_box *b = srs_box_new(rs);
    int r = b ? srs_box_prepare(rs, b, body, host, image_id, err) : -ENOMEM;
    if (r == 0) {
        key_of(rs, body, image_id, key);
        pthread_mutex_lock(&rs->mu);
        r = take(x, e, key, dir);
        pthread_mutex_unlock(&rs->mu);
        if (r == 1 && (r = new_generation(rs, e, body, key, err)) == 0) {
            pthread_mutex_lock(&rs->mu);
            r = take(x, e, key, dir);
            pthread_mutex_unlock(&rs->mu);
        }
    }
    double t1 = attach_now_ms();
    if (r == 0) {
        struct sg_error e2 = {0};
        r = restore_into(rs, b, dir, ret, &e2);
        pthread_mutex_lock(&rs->mu);
        restored(rs, e, dir, r);
        pthread_mutex_unlock(&rs->mu);
        if (r < 0) {
            sg_log(SG_LOG_WARN, "runsc_restore_failed", "pool=%s fallback=boot error=\"%s\"", pool,
                   e2.msg);
            sg_error_set(err, r, "%s", e2.msg);
        }
    }
    if ((r = srs_launched(b, r, t0, t1, ret)) == 0)
        ret->restored = true;
    return r;
}

void sandbox_runsc_get_stats(struct sandbox_runsc *rs, struct sandbox_runsc_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    pthread_mutex_lock(&rs->mu);
    ret->boots = rs->boots;
    const struct srs_restore *x = rs->restore;
    if (x) {
        double now = attach_now_ms();
        ret->restore = true;
        ret->restores = x->restores;
        ret->fallbacks = x->fallbacks;
        ret->checkpoints = x->checkpoints;
        ret->checkpoint_failures = x->checkpoint_failures;
        ret->n = x->n;
        for (unsigned i = 0; i < x->n; i++) {
            struct sandbox_runsc_gen_stats *g = &ret->g[i];
            snprintf(g->pool, sizeof(g->pool), "%s", x->g[i].pool);
            g->seq = x->g[i].seq;
            g->uses = x->g[i].uses;
            g->age_s = x->g[i].dir[0] ? (now - x->g[i].born) / 1000.0 : 0;
        }
    }
    pthread_mutex_unlock(&rs->mu);
}
