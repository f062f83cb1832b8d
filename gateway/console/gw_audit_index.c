#include "gw_audit_index.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gw_util.h"
#include "log.h"

#define READ_CHUNK (1024 * 1024) /* bytes read from the log at once (> LINE_MAX) */
#define RETAIN_EVERY_MS 60000
#define RETAIN_BATCH 5000 /* rows deleted per transaction */
#define BUSY_TIMEOUT_MS 5000
#define THREAD_NICE 10 /* the indexer yields the CPU to request threads */
#define FIELD_MAX 256  /* longest indexed text field (tenant, policy, ...) */
/* Each connection's page cache (SQLite's default is 2 MiB): the file's pages
 * stay in the system's cache anyway, and a gateway at rest after a burst of
 * audit lines should not keep megabytes it no longer needs. */
#define CACHE_PRAGMA "PRAGMA cache_size=-256;" /* KiB */

static const char SCHEMA[] = CACHE_PRAGMA
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=NORMAL;"
    "CREATE TABLE IF NOT EXISTS audit(id INTEGER PRIMARY KEY, request_id TEXT NOT NULL UNIQUE,"
    " ts INTEGER NOT NULL, tenant TEXT, endpoint TEXT, tool TEXT, language TEXT, policy TEXT,"
    " verdict TEXT, outcome TEXT, status INTEGER, total_ms REAL, rules TEXT, line TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS audit_tenant ON audit(tenant, id);"
    "CREATE INDEX IF NOT EXISTS audit_ts ON audit(ts);"
    "CREATE TABLE IF NOT EXISTS audit_rule(rule TEXT NOT NULL, audit_id INTEGER NOT NULL,"
    " PRIMARY KEY(rule, audit_id)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS audit_rule_id ON audit_rule(audit_id);"
    "CREATE TABLE IF NOT EXISTS position(one INTEGER PRIMARY KEY CHECK(one = 1),"
    " inode INTEGER NOT NULL, offset INTEGER NOT NULL);";

enum { ST_INSERT, ST_RULE, ST_GET_POS, ST_SET_POS, ST_COUNT };
static const char SQL_INSERT[] =
    "INSERT OR IGNORE INTO audit(request_id, ts, tenant, endpoint, tool, language, policy,"
    " verdict, outcome, status, total_ms, rules, line) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char *const STMTS[ST_COUNT] = {
    SQL_INSERT,
    "INSERT OR IGNORE INTO audit_rule(rule, audit_id) VALUES(?, ?)",
    "SELECT inode, offset FROM position WHERE one = 1",
    "INSERT OR REPLACE INTO position(one, inode, offset) VALUES(1, ?, ?)",
};

/* The file being read and where. */
struct tail {
    int fd;
    uint64_t ino;
    uint64_t off;
    int skipping; /* inside an overlong line: drop bytes up to its newline */
};

struct gw_audit_index {
    char *db_path, *log_path;
    uint64_t retention_days, max_rows;
    unsigned poll_ms;
    sqlite3 *w, *r;
    sqlite3_stmt *st[ST_COUNT];
    pthread_mutex_t wlock; /* one round at a time: the thread's, sync, rebuild */
    pthread_mutex_t rlock; /* the read connection */
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    int stop, started;
    pthread_t thread;
    struct tail t;
    char *buf; /* READ_CHUNK bytes */
    int64_t last_retain_ms;
    uint64_t read_deadline_ns; /* the read connection's statement deadline */
    atomic_uint_fast64_t indexed, skipped, errors, rows, offset;
    atomic_int_fast64_t last_ok_ms;
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int db_fail(sqlite3 *db, struct sg_error *err, const char *what)
{
    return sg_error_set(err, -EIO, "audit index: %s: %s", what, sqlite3_errmsg(db));
}

static int exec_sql(sqlite3 *db, const char *sql, struct sg_error *err)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(db, err, sql);
}

int64_t gw_audit_index_parse_time(const char *s)
{
    struct tm tm = {0};
    int ms = 0, n = 0;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
        return -1;
    const char *p = s + n;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        for (; digits > 0 && digits < 3; digits++)
            ms *= 10;
        if (!digits)
            return -1;
    }
    if (strcmp(p, "Z") != 0 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
        tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t < 0 ? -1 : (int64_t)t * 1000 + ms;
}

/* ------------------------------------------------------------ one line */

static void bind_text(sqlite3_stmt *st, int i, json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (s && strlen(s) <= FIELD_MAX)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static int insert_rules(struct gw_audit_index *x, json_t *rules, sqlite3_int64 id)
{
    sqlite3_stmt *st = x->st[ST_RULE];
    size_t i;
    json_t *v;
    json_array_foreach(rules, i, v)
    {
        const char *rule = json_string_value(v);
        if (!rule || strlen(rule) > FIELD_MAX)
            continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, rule, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, id);
        if (sqlite3_step(st) != SQLITE_DONE)
            return -EIO;
    }
    return 0;
}

/* Index one line (no newline). 1 indexed, 0 skipped, -EIO database error. */
static int index_line(struct gw_audit_index *x, const char *line, size_t len)
{
    if (len > GW_AUDIT_INDEX_LINE_MAX)
        return 0;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
    const char *id = json_string_value(json_object_get(o, "request_id"));
    int64_t ts = gw_audit_index_parse_time(json_string_value(json_object_get(o, "time")));
    json_t *rules = json_object_get(o, "rules");
    int r = 0;
    if (!json_is_object(o) || !id || !*id || strlen(id) > 64 || ts < 0)
        goto out;
    sqlite3_stmt *st = x->st[ST_INSERT];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, ts);
    static const char *const cols[] = {"tenant", "endpoint", "tool",   "language",
                                       "policy", "verdict",  "outcome"};
    for (int i = 0; i < 7; i++)
        bind_text(st, 3 + i, o, cols[i]);
    if (json_is_integer(json_object_get(o, "status")))
        sqlite3_bind_int64(st, 10, json_integer_value(json_object_get(o, "status")));
    if (json_is_number(json_object_get(o, "total_ms")))
        sqlite3_bind_double(st, 11, json_number_value(json_object_get(o, "total_ms")));
    char *rtext = json_is_array(rules) ? json_dumps(rules, JSON_COMPACT) : NULL;
    if (rtext)
        sqlite3_bind_text(st, 12, rtext, -1, free);
    sqlite3_bind_text(st, 13, line, (int)len, SQLITE_TRANSIENT);
    r = -EIO;
    if (sqlite3_step(st) != SQLITE_DONE)
        goto out;
    r = 1;
    if (sqlite3_changes(x->w) == 1 && json_is_array(rules) &&
        insert_rules(x, rules, sqlite3_last_insert_rowid(x->w)) < 0)
        r = -EIO;
out:
    json_decref(o);
    return r;
}

/* ------------------------------------------------------------ reading the log */

static int save_position(struct gw_audit_index *x, struct sg_error *err)
{
    sqlite3_stmt *st = x->st[ST_SET_POS];
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)x->t.ino);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)x->t.off);
    if (sqlite3_step(st) != SQLITE_DONE)
        return db_fail(x->w, err, "save position");
    atomic_store(&x->offset, x->t.off);
    return 0;
}

/* Commit what is indexed so far (with the position when save) and begin again. */
static int checkpoint(struct gw_audit_index *x, int save, struct sg_error *err)
{
    if (save && save_position(x, err) < 0)
        return -EIO;
    if (exec_sql(x->w, "COMMIT", err) < 0)
        return -EIO;
    return exec_sql(x->w, "BEGIN IMMEDIATE", err);
}

/* Index the whole lines in buf[0..n); returns the bytes consumed. */
static size_t index_chunk(struct gw_audit_index *x, const char *buf, size_t n, int *ret_dberr)
{
    size_t used = 0;
    for (;;) {
        const char *nl = memchr(buf + used, '\n', n - used);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (buf + used));
        int r = x->t.skipping ? 0 : index_line(x, buf + used, len);
        x->t.skipping = 0;
        if (r < 0) {
            *ret_dberr = 1;
            return used;
        }
        atomic_fetch_add(r ? &x->indexed : &x->skipped, 1);
        used += len + 1;
    }
    if (used == 0 && n == READ_CHUNK) { /* no newline in a whole chunk: an overlong line */
        x->t.skipping = 1;
        return n;
    }
    return used;
}

/* Read x->t.fd from x->t.off to its end, indexing whole lines; commits every
 * GW_AUDIT_INDEX_BATCH lines (with the position when save). */
static int drain(struct gw_audit_index *x, int save, uint64_t *ret_lines, struct sg_error *err)
{
    uint64_t since_commit = 0, before = atomic_load(&x->indexed) + atomic_load(&x->skipped);
    for (;;) {
        ssize_t n = pread(x->t.fd, x->buf, READ_CHUNK, (off_t)x->t.off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return sg_error_set(err, -errno, "audit index: read %s: %s", x->log_path,
                                strerror(errno));
        int dberr = 0;
        size_t used = n ? index_chunk(x, x->buf, (size_t)n, &dberr) : 0;
        if (dberr)
            return db_fail(x->w, err, "insert");
        x->t.off += used;
        uint64_t done = atomic_load(&x->indexed) + atomic_load(&x->skipped) - before;
        if (done - since_commit >= GW_AUDIT_INDEX_BATCH) {
            since_commit = done;
            if (checkpoint(x, save, err) < 0)
                return -EIO;
        }
        if (used == 0) {
            if (ret_lines)
                *ret_lines += done;
            return 0;
        }
    }
}

static void tail_close(struct tail *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->skipping = 0;
}

/* Open the log at the path; keep the stored offset when it is the stored file. */
static int tail_open(struct gw_audit_index *x, uint64_t ino, uint64_t off)
{
    tail_close(&x->t);
    struct stat st;
    int fd = open(x->log_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    x->t.fd = fd;
    x->t.ino = (uint64_t)st.st_ino;
    x->t.off = (x->t.ino == ino && off <= (uint64_t)st.st_size) ? off : 0;
    return 0;
}

static int load_position(struct gw_audit_index *x, uint64_t *ret_ino, uint64_t *ret_off)
{
    sqlite3_stmt *st = x->st[ST_GET_POS];
    sqlite3_reset(st);
    *ret_ino = *ret_off = 0;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *ret_ino = (uint64_t)sqlite3_column_int64(st, 0);
        *ret_off = (uint64_t)sqlite3_column_int64(st, 1);
        return 1;
    }
    return r == SQLITE_DONE ? 0 : -EIO;
}

/* Inside a transaction: read the live log past the stored position, follow a
 * rotation or a truncation, and store the new position. */
static int round_locked(struct gw_audit_index *x, uint64_t *ret_lines, struct sg_error *err)
{
    uint64_t ino, off;
    int have = load_position(x, &ino, &off);
    if (have < 0)
        return db_fail(x->w, err, "load position");
    if (x->t.fd < 0 || !have || x->t.ino != ino) {
        int r = tail_open(x, have ? ino : 0, off);
        if (r < 0)
            return r == -ENOENT ? 0
                                : sg_error_set(err, r, "audit index: open %s: %s", x->log_path,
                                               strerror(-r));
    } else {
        x->t.off = off; /* another writer (a rebuild) may have moved it */
    }
    struct stat at_path, fst;
    int path_ok = stat(x->log_path, &at_path) == 0;
    if (drain(x, 1, ret_lines, err) < 0)
        return -EIO;
    if (fstat(x->t.fd, &fst) == 0 && (uint64_t)fst.st_size < x->t.off) {
        x->t.off = 0; /* truncated in place */
        if (drain(x, 1, ret_lines, err) < 0)
            return -EIO;
    }
    if (path_ok && (uint64_t)at_path.st_ino != x->t.ino && at_path.st_size > 0) {
        /* rotated, and the writer has moved on to the new file: the old one is complete */
        if (tail_open(x, 0, 0) == 0 && drain(x, 1, ret_lines, err) < 0)
            return -EIO;
    }
    return save_position(x, err);
}

static int run_round(struct gw_audit_index *x, uint64_t *ret_lines, struct sg_error *err)
{
    pthread_mutex_lock(&x->wlock);
    int r = exec_sql(x->w, "BEGIN IMMEDIATE", err);
    if (r == 0) {
        r = round_locked(x, ret_lines, err);
        r = r == 0 ? exec_sql(x->w, "COMMIT", err) : r;
        if (r < 0)
            sqlite3_exec(x->w, "ROLLBACK", NULL, NULL, NULL);
    }
    if (r < 0)
        tail_close(&x->t); /* what was rolled back is read again from the stored position */
    pthread_mutex_unlock(&x->wlock);
    if (r < 0)
        atomic_fetch_add(&x->errors, 1);
    else
        atomic_store(&x->last_ok_ms, wall_ms());
    return r;
}

int gw_audit_index_sync(struct gw_audit_index *x, uint64_t *ret_lines, struct sg_error *err)
{
    if (ret_lines)
        *ret_lines = 0;
    return run_round(x, ret_lines, err);
}

/* ------------------------------------------------------------ retention */

/* The first id kept: newer than the retention and among the newest max_rows. */
static int first_kept(struct gw_audit_index *x, sqlite3_int64 *ret)
{
    sqlite3_stmt *st = NULL;
    const char *sql = "SELECT max(coalesce((SELECT min(id) FROM audit WHERE ts >= ?1), "
                      "(SELECT max(id) + 1 FROM audit), 0), "
                      "coalesce((SELECT max(id) FROM audit), 0) - ?2 + 1)";
    if (sqlite3_prepare_v2(x->w, sql, -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(st, 1, wall_ms() - (sqlite3_int64)x->retention_days * 86400000);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)x->max_rows);
    int r = sqlite3_step(st) == SQLITE_ROW ? 0 : -EIO;
    *ret = r == 0 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return r;
}

static int delete_batch(struct gw_audit_index *x, sqlite3_int64 keep, int *ret_more)
{
    sqlite3_stmt *st = NULL;
    const char *sql = "DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE id < ?1 "
                      "ORDER BY id LIMIT ?2)";
    int r = -EIO;
    if (sqlite3_prepare_v2(x->w, sql, -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    sqlite3_bind_int64(st, 1, keep);
    sqlite3_bind_int(st, 2, RETAIN_BATCH);
    if (sqlite3_step(st) != SQLITE_DONE)
        goto out;
    *ret_more = sqlite3_changes(x->w) == RETAIN_BATCH;
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(x->w, "DELETE FROM audit_rule WHERE audit_id < ?1", -1, &st, NULL) !=
        SQLITE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, keep);
    r = sqlite3_step(st) == SQLITE_DONE ? 0 : -EIO;
out:
    sqlite3_finalize(st);
    return r;
}

static int count_rows(struct gw_audit_index *x)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(x->w, "SELECT count(*) FROM audit", -1, &st, NULL) != SQLITE_OK)
        return -EIO;
    if (sqlite3_step(st) == SQLITE_ROW)
        atomic_store(&x->rows, (uint64_t)sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    return 0;
}

int gw_audit_index_retain(struct gw_audit_index *x, struct sg_error *err)
{
    int more = 1, r = 0;
    while (more && r == 0) {
        pthread_mutex_lock(&x->wlock);
        sqlite3_int64 keep = 0;
        more = 0;
        r = exec_sql(x->w, "BEGIN IMMEDIATE", err);
        if (r == 0 && (first_kept(x, &keep) < 0 || delete_batch(x, keep, &more) < 0))
            r = db_fail(x->w, err, "retention");
        if (r == 0)
            r = exec_sql(x->w, "COMMIT", err);
        else
            sqlite3_exec(x->w, "ROLLBACK", NULL, NULL, NULL);
        pthread_mutex_unlock(&x->wlock);
    }
    pthread_mutex_lock(&x->wlock);
    count_rows(x);
    pthread_mutex_unlock(&x->wlock);
    x->last_retain_ms = wall_ms();
    return r;
}

/* ------------------------------------------------------------ rebuild */

static int index_file(struct gw_audit_index *x, const char *path, uint64_t *ret_lines,
                      struct sg_error *err)
{
    struct tail saved = x->t;
    x->t = (struct tail){.fd = open(path, O_RDONLY | O_CLOEXEC)};
    if (x->t.fd < 0) {
        x->t = saved;
        return sg_error_set(err, -errno, "audit index: open %s: %s", path, strerror(errno));
    }
    int r = drain(x, 0, ret_lines, err);
    tail_close(&x->t);
    x->t = saved;
    return r;
}

int gw_audit_index_rebuild(struct gw_audit_index *x, const char *const *logs, size_t n,
                           uint64_t *ret_lines, struct sg_error *err)
{
    if (ret_lines)
        *ret_lines = 0;
    pthread_mutex_lock(&x->wlock);
    tail_close(&x->t);
    int r = exec_sql(x->w,
                     "BEGIN IMMEDIATE; DELETE FROM audit_rule; DELETE FROM audit;"
                     "DELETE FROM position;",
                     err);
    for (size_t i = 0; r == 0 && i + 1 < n; i++)
        r = index_file(x, logs[i], ret_lines, err);
    r = r == 0 ? exec_sql(x->w, "COMMIT", err) : r;
    if (r < 0)
        sqlite3_exec(x->w, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&x->wlock);
    if (r < 0 || n == 0)
        return r;
    char *live = x->log_path;
    x->log_path = (char *)(uintptr_t)logs[n - 1];
    r = run_round(x, ret_lines, err);
    x->log_path = live;
    tail_close(&x->t);
    return r;
}

/* ------------------------------------------------------------ lifecycle */

static void *index_main(void *arg)
{
    struct gw_audit_index *x = arg;
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), THREAD_NICE);
    pthread_mutex_lock(&x->stop_lock);
    while (!x->stop) {
        pthread_mutex_unlock(&x->stop_lock);
        struct sg_error err = {0};
        if (run_round(x, NULL, &err) < 0)
            sg_log(SG_LOG_WARN, "audit_index_failed", "error=\"%s\"", err.msg);
        if (wall_ms() - x->last_retain_ms >= RETAIN_EVERY_MS && gw_audit_index_retain(x, &err) < 0)
            sg_log(SG_LOG_WARN, "audit_index_retention_failed", "error=\"%s\"", err.msg);
        pthread_mutex_lock(&x->stop_lock);
        if (x->stop)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)x->poll_ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&x->stop_cond, &x->stop_lock, &ts);
    }
    pthread_mutex_unlock(&x->stop_lock);
    return NULL;
}

static int progress(void *arg)
{
    const struct gw_audit_index *x = arg;
    return x->read_deadline_ns && gw_now_ns() > x->read_deadline_ns;
}

static int open_db(struct gw_audit_index *x, struct sg_error *err)
{
    if (sqlite3_open_v2(x->db_path, &x->w,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return db_fail(x->w, err, x->db_path);
    sqlite3_busy_timeout(x->w, BUSY_TIMEOUT_MS);
    if (exec_sql(x->w, SCHEMA, err) < 0)
        return -EIO;
    for (int i = 0; i < ST_COUNT; i++)
        if (sqlite3_prepare_v2(x->w, STMTS[i], -1, &x->st[i], NULL) != SQLITE_OK)
            return db_fail(x->w, err, STMTS[i]);
    if (sqlite3_open_v2(x->db_path, &x->r, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK)
        return db_fail(x->r, err, x->db_path);
    sqlite3_busy_timeout(x->r, BUSY_TIMEOUT_MS);
    if (exec_sql(x->r, CACHE_PRAGMA, err) < 0)
        return -EIO;
    sqlite3_progress_handler(x->r, 1000, progress, x);
    return 0;
}

int gw_audit_index_open(const struct gw_audit_index_config *cfg, int start,
                        struct gw_audit_index **ret, struct sg_error *err)
{
    struct gw_audit_index *x = calloc(1, sizeof(*x));
    if (!x)
        return sg_error_set(err, -ENOMEM, "out of memory");
    x->t.fd = -1;
    pthread_mutex_init(&x->wlock, NULL);
    pthread_mutex_init(&x->rlock, NULL);
    pthread_mutex_init(&x->stop_lock, NULL);
    pthread_cond_init(&x->stop_cond, NULL);
    x->retention_days = cfg->retention_days ? cfg->retention_days : 30;
    x->max_rows = cfg->max_rows ? cfg->max_rows : 5000000;
    x->poll_ms = cfg->poll_ms ? cfg->poll_ms : 200;
    int r = -ENOMEM;
    if (!(x->db_path = strdup(cfg->db_path)) || !(x->log_path = strdup(cfg->log_path)) ||
        !(x->buf = malloc(READ_CHUNK))) {
        sg_error_set(err, r, "out of memory");
        goto fail;
    }
    if ((r = open_db(x, err)) < 0)
        goto fail;
    if (start && (r = -pthread_create(&x->thread, NULL, index_main, x)) < 0) {
        sg_error_set(err, r, "audit index: cannot start its thread");
        goto fail;
    }
    x->started = start;
    *ret = x;
    return 0;
fail:
    gw_audit_index_close(x);
    return r;
}

int gw_audit_index_read(struct gw_audit_index *x, unsigned timeout_ms,
                        int (*fn)(sqlite3 *db, void *arg), void *arg)
{
    pthread_mutex_lock(&x->rlock);
    x->read_deadline_ns = gw_now_ns() + (uint64_t)timeout_ms * 1000000ull;
    int r = fn(x->r, arg);
    x->read_deadline_ns = 0;
    pthread_mutex_unlock(&x->rlock);
    return r;
}

void gw_audit_index_get_stats(struct gw_audit_index *x, struct gw_audit_index_stats *ret)
{
    *ret = (struct gw_audit_index_stats){
        .indexed = atomic_load(&x->indexed),
        .skipped = atomic_load(&x->skipped),
        .errors = atomic_load(&x->errors),
        .rows = atomic_load(&x->rows),
        .offset = atomic_load(&x->offset),
        .last_ok_ms = atomic_load(&x->last_ok_ms),
    };
}

void gw_audit_index_close(struct gw_audit_index *x)
{
    if (!x)
        return;
    if (x->started) {
        pthread_mutex_lock(&x->stop_lock);
        x->stop = 1;
        pthread_cond_signal(&x->stop_cond);
        pthread_mutex_unlock(&x->stop_lock);
        pthread_join(x->thread, NULL);
    }
    tail_close(&x->t);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(x->st[i]);
    sqlite3_close(x->w);
    sqlite3_close(x->r);
    pthread_mutex_destroy(&x->wlock);
    pthread_mutex_destroy(&x->rlock);
    pthread_mutex_destroy(&x->stop_lock);
    pthread_cond_destroy(&x->stop_cond);
    free(x->buf);
    free(x->db_path);
    free(x->log_path);
    free(x);
}
