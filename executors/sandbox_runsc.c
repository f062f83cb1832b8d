/* sandbox_runsc.c - the direct backend (sandbox_runsc.h): its state
 * directory, the unpacked images, orphans, and one sandbox's launch and
 * teardown. */
#include "sandbox_runsc_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"
#include "readfile.h"
#include "sandbox.h"
#include "sg_random.h"

#define SRS_DELETE_TRIES 3

/* runsc's global flags, then words (NULL-terminated). */
void srs_runsc_argv(const struct sandbox_runsc *rs, const char **argv, const char *const *words)
{
    int n = 0;
    argv[n++] = rs->runsc;
    argv[n++] = "--root";
    argv[n++] = rs->root;
    if (rs->platform[0]) {
        argv[n++] = "--platform";
        argv[n++] = rs->platform;
    }
    argv[n++] = "--network=none";
    argv[n++] = "--oci-seccomp";
    for (int i = 0; words[i] && n < SRS_ARGV_MAX - 1; i++)
        argv[n++] = words[i];
    argv[n] = NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int srs_rm_tree(const char *path)
{
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT ? -errno : 0;
}

static bool sandbox_id_ok(const char *s, size_t n)
{
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
            return false;
    return s[0] != '.';
}

/* runsc delete --force, a few tries (a busy host can time it out). */
int srs_delete(struct sandbox_runsc *rs, const char *id)
{
    const char *argv[SRS_ARGV_MAX];
    const char *words[] = {"delete", "--force", id, NULL};
    srs_runsc_argv(rs, argv, words);
    int code = -1;
    for (int i = 0; i < SRS_DELETE_TRIES; i++)
        if (srs_run(argv, -1, NULL, SANDBOX_RUNSC_CMD_TIMEOUT_MS, &code) == 0 && code == 0)
            return 0;
    return -EIO;
}

/* A leftover sandbox cgroup: its processes are that sandbox's (sentry,
 * gofer) by construction; they are killed, then the directory removed once
 * the kernel has let them go. */
static void rmdir_sandbox_cgroup(const char *dir)
{
    char path[PATH_MAX + 320], *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    if (sg_read_file_capped(path, 65536, &text, &n, NULL) == 0) {
        for (char *p = text, *end; *p; p = end) {
            long pid = strtol(p, &end, 10);
            if (end == p)
                break;
            if (pid > 1)
                kill((pid_t)pid, SIGKILL);
        }
        free(text);
    }
    for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++)
        usleep(20000);
}

static void rmdir_children(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[PATH_MAX + 256];
        if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p))
            rmdir_sandbox_cgroup(p);
    }
    if (d)
        closedir(d);
}

/* For each cgroup v1 controller: rmdir <controller>/<parent>/<leaf>, or
 * every child of <parent> and <parent> itself when leaf is NULL (what a
 * `runsc run` killed before its own clean-up leaves). */
static void rmdir_cgroups(const struct sandbox_runsc *rs, const char *leaf)
{
    DIR *d = opendir(rs->cg_root);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[PATH_MAX + 512];
        int n = snprintf(p, sizeof(p), "%s/%s/%s%s%s", rs->cg_root, e->d_name, rs->cg_parent,
                         leaf ? "/" : "", leaf ? leaf : "");
        if (e->d_name[0] == '.' || n >= (int)sizeof(p))
            continue;
        if (!leaf)
            rmdir_children(p);
        rmdir(p);
    }
    if (d)
        closedir(d);
}

/* Every sandbox in our runsc root (an earlier life's), their bundles and
 * cgroups. */
static int reap(struct sandbox_runsc *rs, unsigned *ret_n, struct sg_error *err)
{
    const char *argv[SRS_ARGV_MAX];
    const char *words[] = {"list", "--quiet", NULL};
    srs_runsc_argv(rs, argv, words);
    struct sg_buf out;
    sg_buf_init(&out, SANDBOX_RUNSC_LIST_MAX);
    int code = -1, r = srs_run(argv, -1, &out, SANDBOX_RUNSC_CMD_TIMEOUT_MS, &code);
    if (r < 0 || code != 0) {
        sg_buf_free(&out);
        return sg_error_set(err, r < 0 ? r : -EIO, "runsc list in %s failed (exit %d)", rs->root,
                            code);
    }
    *ret_n = 0;
    for (size_t i = 0; i < out.len;) {
        size_t n = strcspn(out.data + i, "\n");
        char id[72];
        if (sandbox_id_ok(out.data + i, n)) {
            snprintf(id, sizeof(id), "%.*s", (int)n, out.data + i);
            if (srs_delete(rs, id) == 0)
                (*ret_n)++;
            else
                sg_log(SG_LOG_WARN, "runsc_orphan_kept", "sandbox=%s", id);
        }
        i += n + 1;
    }
    sg_buf_free(&out);
    srs_rm_tree(rs->bundles);
    srs_rm_tree(rs->checkpoints); /* an earlier life's generations */
    rmdir_cgroups(rs, NULL);
    return 0;
}

int srs_mkdir_p(const char *path, mode_t mode)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, mode) < 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    return mkdir(tmp, mode) < 0 && errno != EEXIST ? -errno : 0;
}

int sandbox_runsc_new(const struct sandbox_runsc_config *cfg, struct docker_client *dc,
                      struct sandbox_runsc **ret, unsigned *ret_reaped, struct sg_error *err)
{
    struct sandbox_runsc *rs = calloc(1, sizeof(*rs));
    if (!rs)
        return sg_error_set(err, -ENOMEM, "out of memory");
    rs->dc = dc;
    pthread_mutex_init(&rs->mu, NULL);
    snprintf(rs->runsc, sizeof(rs->runsc), "%s", cfg->runsc_path);
    if (cfg->platform && strcmp(cfg->platform, "default") != 0)
        snprintf(rs->platform, sizeof(rs->platform), "%s", cfg->platform);
    snprintf(rs->state, sizeof(rs->state), "%s", cfg->state_dir);
    snprintf(rs->root, sizeof(rs->root), "%s/runsc", rs->state);
    snprintf(rs->bundles, sizeof(rs->bundles), "%s/bundles", rs->state);
    snprintf(rs->images, sizeof(rs->images), "%s/images", rs->state);
    snprintf(rs->checkpoints, sizeof(rs->checkpoints), "%s/checkpoints", rs->state);
    snprintf(rs->cg_root, sizeof(rs->cg_root), "%s",
             cfg->cgroup_root ? cfg->cgroup_root : SANDBOX_RUNSC_CGROUP_V1);
    snprintf(rs->cg_parent, sizeof(rs->cg_parent), "sandgate-%s", cfg->instance);
    snprintf(rs->memcg, sizeof(rs->memcg), "%s/memory/%s", rs->cg_root, rs->cg_parent);
    int r = 0;
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof(probe), "%s/memory/memory.limit_in_bytes", rs->cg_root);
    if (access(probe, F_OK) < 0)
        r = sg_error_set(err, -ENOTSUP,
                         "--sandbox-backend runsc needs a cgroup v1 memory controller at %s/memory",
                         rs->cg_root);
    else if ((r = srs_mkdir_p(rs->root, 0700)) < 0 || (r = srs_mkdir_p(rs->images, 0700)) < 0)
        r = sg_error_set(err, r,
                         "cannot make the backend's directories under %s (%s): it needs "
                         "host root",
                         rs->state, strerror(-r));
    else
        r = reap(rs, ret_reaped, err);
    if (r == 0 &&
        ((r = srs_mkdir_p(rs->bundles, 0700)) < 0 || (r = srs_mkdir_p(rs->memcg, 0755)) < 0))
        r = sg_error_set(err, r, "cannot make %s or %s: %s", rs->bundles, rs->memcg, strerror(-r));
    if (r == 0 && cfg->restore)
        r = srs_restore_new(rs, cfg, err);
    if (r < 0) {
        sandbox_runsc_free(rs);
        return r;
    }
    *ret = rs;
    return 0;
}

void sandbox_runsc_free(struct sandbox_runsc *rs)
{
    if (!rs)
        return;
    srs_restore_free(rs); /* the checkpoints */
    srs_rm_tree(rs->bundles);
    rmdir_cgroups(rs, NULL); /* runsc made the parent in every controller it used */
    for (unsigned i = 0; i < rs->n_img; i++)
        sandbox_runsc_image_clear(&rs->img[i].img);
    pthread_mutex_destroy(&rs->mu);
    free(rs);
}

/* ---- images ---- */

static bool ref_ok(const char *ref)
{
    size_t n = strlen(ref);
    if (n == 0 || n >= EXEC_NAME_MAX + FLAVOUR_IMAGE_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)ref[i]) && !strchr("._:/@-", ref[i]))
            return false;
    return ref[0] != '-' && !strstr(ref, "..");
}

static int inspect(struct sandbox_runsc *rs, const char *ref, struct sandbox_runsc_image *ret,
                   struct sg_error *err)
{
    char url[EXEC_NAME_MAX + FLAVOUR_IMAGE_MAX + 32];
    snprintf(url, sizeof(url), "/images/%s/json", ref);
    struct sg_buf b;
    sg_buf_init(&b, SANDBOX_RUNSC_IMAGE_CONFIG_MAX);
    long status = 0;
    int r = docker_call(rs->dc, "GET", url, NULL, SANDBOX_RUNSC_CMD_TIMEOUT_MS,
                        SANDBOX_RUNSC_IMAGE_CONFIG_MAX, &status, &b, err);
    if (r == 0 && status != 200)
        r = sg_error_set(err, -ENOENT, "image %s: HTTP %ld", ref, status);
    if (r == 0)
        r = sandbox_runsc_parse_image(b.data ? b.data : "", b.len, ret, err);
    sg_buf_free(&b);
    return r;
}

/* The response head of the export, read byte by byte so the body (a tar
 * stream until the connection closes) stays on the socket for tar. */
static int export_stream(const char *sock_path, const char *cid, int *ret_fd)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(sock_path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    char req[256], head[ATTACH_HEAD_MAX];
    int n =
        snprintf(req, sizeof(req), "GET %s/containers/%s/export HTTP/1.0\r\nHost: docker\r\n\r\n",
                 DOCKER_API_PREFIX, cid);
    int r = fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
    if (r == 0)
        r = attach_write_all(fd, req, (size_t)n, (int64_t)attach_now_ms() + 10000);
    size_t len = 0;
    while (r == 0 && (len < 4 || memcmp(head + len - 4, "\r\n\r\n", 4) != 0)) {
        struct timeval tv = {30, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (len == sizeof(head) || read(fd, head + len, 1) != 1)
            r = -EPROTO;
        len++;
    }
    int status = 0;
    if (r == 0 && (attach_parse_status(head, len, &status) < 0 || status != 200))
        r = -EIO;
    if (r < 0 && fd >= 0)
        close(fd);
    if (r == 0)
        *ret_fd = fd;
    return r;
}

/* A created (never started) container of ref, its file system exported
 * into dir by tar (which keeps ownership and modes; as root). */
static int export_into(struct sandbox_runsc *rs, const char *ref, const char *dir,
                       struct sg_error *err)
{
    json_t *spec =
        json_pack("{s:s,s:[s],s:[],s:b,s:{s:s}}", "Image", ref, "Entrypoint", "/nonexistent", "Cmd",
                  "NetworkDisabled", 1, "HostConfig", "NetworkMode", "none");
    char *body = spec ? json_dumps(spec, JSON_COMPACT) : NULL, cid[DOCKER_ID_LEN + 1] = "";
    json_decref(spec);
    int r = body ? docker_create(rs->dc, body, cid, err) : sg_error_set(err, -ENOMEM, "oom");
    free(body);
    if (r < 0)
        return r;
    int fd = -1, code = -1;
    if ((r = export_stream(docker_client_socket(rs->dc), cid, &fd)) < 0) {
        r = sg_error_set(err, r, "export of image %s failed: %s", ref, strerror(-r));
    } else {
        const char *argv[] = {"/bin/tar", "-x", "-C", dir, "-f", "-", NULL};
        r = srs_run(argv, fd, NULL, SANDBOX_RUNSC_EXPORT_TIMEOUT_MS, &code);
        close(fd);
        if (r < 0 || code != 0)
            r = sg_error_set(err, r < 0 ? r : -EIO, "unpacking image %s failed (tar exit %d)", ref,
                             code);
    }
    docker_remove(rs->dc, cid, SANDBOX_REMOVE_TIMEOUT_MS, NULL);
    return r;
}

/* images/<hex>/rootfs, unpacked once per image id. */
static int unpack(struct sandbox_runsc *rs, const char *ref, const char *id, char *rootfs,
                  size_t cap, struct sg_error *err)
{
    char dir[SRS_DIR_MAX + 128], tmp[SRS_DIR_MAX + 144];
    snprintf(dir, sizeof(dir), "%s/%s", rs->images, id + 7);
    snprintf(rootfs, cap, "%s/rootfs", dir);
    if (access(rootfs, F_OK) == 0)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
    srs_rm_tree(tmp);
    double t0 = attach_now_ms();
    int r = srs_mkdir_p(tmp, 0755) < 0 ? sg_error_set(err, -errno, "cannot make %s", tmp)
                                       : export_into(rs, ref, tmp, err);
    if (r == 0 && (srs_mkdir_p(dir, 0755) < 0 || rename(tmp, rootfs) < 0))
        r = sg_error_set(err, -errno, "cannot move the image into %s: %s", rootfs, strerror(errno));
    if (r < 0)
        srs_rm_tree(tmp);
    else
        sg_log(SG_LOG_INFO, "runsc_image_unpacked", "image=%s id=%.19s ms=%.0f", ref, id,
               attach_now_ms() - t0);
    return r;
}

/* Locked: the entry of ref, inspected again after the recheck period and
 * unpacked anew when its id changed. */
static int image_locked(struct sandbox_runsc *rs, const char *ref, struct srs_image **ret,
                        struct sg_error *err)
{
    struct srs_image *e = NULL;
    for (unsigned i = 0; i < rs->n_img && !e; i++)
        if (strcmp(rs->img[i].ref, ref) == 0)
            e = &rs->img[i];
    double now = attach_now_ms();
    if (e && now - e->checked_at < SANDBOX_RUNSC_IMAGE_RECHECK_MS) {
        *ret = e;
        return 0;
    }
    if (!ref_ok(ref))
        return sg_error_set(err, -EINVAL, "image reference not accepted by the runsc backend");
    if (!e && rs->n_img == SRS_IMAGES_MAX)
        return sg_error_set(err, -ENOSPC, "too many images for the runsc backend");
    struct sandbox_runsc_image img;
    char rootfs[SRS_PATH_MAX];
    int r = inspect(rs, ref, &img, err);
    if (r == 0 && (r = unpack(rs, ref, img.id, rootfs, sizeof(rootfs), err)) < 0)
        sandbox_runsc_image_clear(&img);
    if (r < 0)
        return r;
    if (!e) {
        e = &rs->img[rs->n_img++];
        snprintf(e->ref, sizeof(e->ref), "%s", ref);
    }
    sandbox_runsc_image_clear(&e->img);
    e->img = img;
    snprintf(e->rootfs, sizeof(e->rootfs), "%s", rootfs);
    e->checked_at = now;
    *ret = e;
    return 0;
}

int sandbox_runsc_prepare(struct sandbox_runsc *rs, const char *image, struct sg_error *err)
{
    struct srs_image *e = NULL;
    pthread_mutex_lock(&rs->mu);
    int r = image_locked(rs, image, &e, err);
    pthread_mutex_unlock(&rs->mu);
    return r;
}

/* ---- one sandbox ---- */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    size_t n = strlen(text);
    int r = write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
    return close(fd) < 0 && r == 0 ? -errno : r;
}

/* Its memory cgroup, made and limited here: runsc then joins it (and leaves
 * it for us to read after the exit). Limit first, then limit+swap. */
static int make_memcg(struct sandbox_runsc_box *b, json_t *hc, struct sg_error *err)
{
    json_int_t mem = json_integer_value(json_object_get(hc, "Memory"));
    json_int_t swap = json_integer_value(json_object_get(hc, "MemorySwap"));
    char path[PATH_MAX + 64], v[32];
    if (mkdir(b->memcg, 0755) < 0)
        return sg_error_set(err, -errno, "cannot make the cgroup %s: %s", b->memcg,
                            strerror(errno));
    int r = 0;
    if (mem > 0) {
        snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", b->memcg);
        snprintf(v, sizeof(v), "%lld", (long long)mem);
        r = write_file(path, v);
        snprintf(path, sizeof(path), "%s/memory.memsw.limit_in_bytes", b->memcg);
        snprintf(v, sizeof(v), "%lld", (long long)(swap > mem ? swap : mem));
        if (r == 0 && access(path, F_OK) == 0)
            r = write_file(path, v);
    }
    return r < 0 ? sg_error_set(err, r, "cannot limit the cgroup %s", b->memcg) : 0;
}

/* The bundle: config.json for this sandbox, root at the shared rootfs. */
static int make_bundle(struct sandbox_runsc *rs, struct sandbox_runsc_box *b, const char *body,
                       const char *image, const char *hostname, char *ret_image_id,
                       struct sg_error *err)
{
    char cgpath[256], cfgpath[PATH_MAX + 16], host[16];
    snprintf(cgpath, sizeof(cgpath), "/%s/%s", rs->cg_parent, b->id);
    snprintf(host, sizeof(host), "%.12s", hostname ? hostname : b->id);
    struct srs_image *e = NULL;
    char *spec = NULL;
    pthread_mutex_lock(&rs->mu);
    int r = image_locked(rs, image, &e, err);
    if (r == 0)
        r = sandbox_runsc_spec(body, &e->img, e->rootfs, host, cgpath, &spec, err);
    if (r == 0)
        snprintf(ret_image_id, sizeof(e->img.id), "%s", e->img.id);
    pthread_mutex_unlock(&rs->mu);
    if (r < 0)
        return r;
    snprintf(cfgpath, sizeof(cfgpath), "%s/config.json", b->bundle);
    if (mkdir(b->bundle, 0700) < 0 || (r = write_file(cfgpath, spec)) < 0)
        r = sg_error_set(err, r < 0 ? r : -errno, "cannot write the bundle %s", b->bundle);
    free(spec);
    return r;
}

void srs_box_free(struct sandbox_runsc_box *b)
{
    srs_rm_tree(b->bundle);
    for (int i = 0; i < 50 && rmdir(b->memcg) < 0 && errno == EBUSY; i++)
        usleep(20000);           /* the last task leaves the cgroup a moment after its exit */
    rmdir_cgroups(b->rs, b->id); /* runsc's own, when its clean-up did not run */
    if (b->pidfd >= 0)
        close(b->pidfd);
    if (b->wait_out >= 0)
        close(b->wait_out);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}

struct sandbox_runsc_box *srs_box_new(struct sandbox_runsc *rs)
{
    struct sandbox_runsc_box *b = calloc(1, sizeof(*b));
    char hex[25];
    if (!b || sg_random_hex(hex, 12) < 0) {
        free(b);
        return NULL;
    }
    b->rs = rs;
    b->in = b->out = b->err = b->sock = b->pidfd = b->wait_out = -1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    snprintf(b->id, sizeof(b->id), "sg%s", hex);
    snprintf(b->bundle, sizeof(b->bundle), "%s/%s", rs->bundles, b->id);
    snprintf(b->memcg, sizeof(b->memcg), "%s/%s", rs->memcg, b->id);
    return b;
}

int srs_box_prepare(struct sandbox_runsc *rs, struct sandbox_runsc_box *b, const char *body,
                    const char *hostname, char *ret_image_id, struct sg_error *err)
{
    json_t *spec = json_loads(body, 0, NULL);
    const char *image = json_string_value(json_object_get(spec, "Image"));
    int r = image ? 0 : sg_error_set(err, -EINVAL, "cannot start a sandbox: bad body");
    if (r == 0 && (r = make_bundle(rs, b, body, image, hostname, ret_image_id, err)) == 0)
        r = make_memcg(b, json_object_get(spec, "HostConfig"), err);
    json_decref(spec);
    return r;
}

int srs_launched(struct sandbox_runsc_box *b, int r, double t0, double t1, struct sandbox *ret)
{
    if (r < 0) {
        if (b)
            srs_box_free(b);
        return r;
    }
    snprintf(ret->id, sizeof(ret->id), "%s", b->id);
    ret->runsc = b;
    ret->create_ms = (float)(t1 - t0);
    ret->start_ms = (float)(attach_now_ms() - t1);
    ret->ready_ms = attach_now_ms();
    return 0;
}

int srs_boot(struct sandbox_runsc *rs, const char *body, const char *hostname, struct sandbox *ret,
             struct sg_error *err)
{
    memset(ret, 0, sizeof(*ret));
    ret->fd = -1;
    double t0 = attach_now_ms();
    struct sandbox_runsc_box *b = srs_box_new(rs);
    char image_id[72];
    int r = b ? srs_box_prepare(rs, b, body, hostname, image_id, err)
              : sg_error_set(err, -ENOMEM, "cannot start a sandbox: no memory");
    double t1 = attach_now_ms();
    if (r == 0) {
        const char *argv[SRS_ARGV_MAX];
        const char *words[] = {"run", "--bundle", b->bundle, b->id, NULL};
        srs_runsc_argv(rs, argv, words);
        if ((r = srs_start(b, argv, &ret->fd)) < 0)
            r = sg_error_set(err, r, "cannot run %s: %s", rs->runsc, strerror(-r));
    }
    return srs_launched(b, r, t0, t1, ret);
}

int sandbox_runsc_launch(struct sandbox_runsc *rs, const char *body, struct sandbox *ret,
                         struct sg_error *err)
{
    struct sg_error why = {0}; /* logged and counted by the restore; a boot follows */
    if (rs->restore && srs_restore_launch(rs, body, ret, &why) == 0)
        return 0;
    int r = srs_boot(rs, body, NULL, ret, err);
    if (r == 0) {
        pthread_mutex_lock(&rs->mu);
        rs->boots++;
        pthread_mutex_unlock(&rs->mu);
    }
    return r;
}

int sandbox_runsc_destroy(struct sandbox *sb, struct sg_error *err)
{
    struct sandbox_runsc_box *b = sb->runsc;
    if (sb->fd >= 0)
        close(sb->fd);
    sb->fd = -1;
    if (!b)
        return 0;
    int r = srs_delete(b->rs, b->id);
    if (b->pidfd >= 0) /* `runsc run`: the sandbox is attached to it */
        pidfd_send_signal(b->pidfd, SIGKILL, NULL, 0);
    if (b->relay_running)
        pthread_join(b->relay, NULL);
    sb->runsc = NULL;
    srs_box_free(b);
    if (r < 0)
        sg_log(SG_LOG_WARN, "runsc_delete_failed", "sandbox=%s", sb->id);
    return r < 0 ? sg_error_set(err, r, "runsc delete %s failed", sb->id) : 0;
}

int sandbox_runsc_state(struct sandbox *sb, long timeout_ms, struct docker_state *ret,
                        struct sg_error *err)
{
    struct sandbox_runsc_box *b = sb->runsc;
    memset(ret, 0, sizeof(*ret));
    if (!b)
        return sg_error_set(err, -EINVAL, "not a runsc sandbox");
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b->mu);
    while (!b->exited && pthread_cond_timedwait(&b->cv, &b->mu, &until) == 0)
        ;
    bool done = b->exited;
    ret->exit_code = b->exit_code;
    pthread_mutex_unlock(&b->mu);
    if (!done)
        return sg_error_set(err, -ETIMEDOUT, "sandbox %s still running", sb->id);
    snprintf(ret->status, sizeof(ret->status), "exited");
    return sandbox_runsc_oom(sb, &ret->oom_killed, err);
}

int sandbox_runsc_oom(const struct sandbox *sb, bool *ret_seen, struct sg_error *err)
{
    const struct sandbox_runsc_box *b = sb->runsc;
    char path[PATH_MAX + 32], *text = NULL;
    size_t n = 0;
    *ret_seen = false;
    snprintf(path, sizeof(path), "%s/memory.oom_control", b ? b->memcg : "");
    if (!b || sg_read_file_capped(path, 4096, &text, &n, err) < 0)
        return sg_error_set(err, -EIO, "cannot read the sandbox's cgroup %s", path);
    const char *k = strstr(text, "\noom_kill ");
    *ret_seen = k && strtoull(k + 10, NULL, 10) > 0;
    free(text);
    return 0;
}
