#include "gw_audit_api.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "gw_audit_summary.h"
#include "gw_respond.h"
#include "gw_tenants.h"
#include "gw_util.h"

#define PREFIX "/v1/audit"
#define POLICY_PREFIX "/v1/policies/"
#define OVERVIEW_PATH "/v1/overview"
#define SQL_MAX 2048
#define BINDS_MAX 16

/* Equality filters: query parameter = indexed column. */
static const char *const FILTERS[] = {"tenant", "endpoint", "tool",   "language",
                                      "policy", "verdict",  "outcome"};
#define FILTER_COUNT (sizeof(FILTERS) / sizeof(FILTERS[0]))

/* One list query, worked out from the request before the database is asked. */
struct query {
    struct sg_buf sql;
    const char *text[BINDS_MAX]; /* bound as text (NULL: the int below) */
    sqlite3_int64 num[BINDS_MAX];
    int binds;
    long limit;
    json_t *items; /* out */
    char next[32]; /* out: the next page's cursor, "" = last page */
    int rc;        /* SQLite result of the last step */
};

struct summary {
    const char *tenant; /* NULL = all */
    json_t *out;
    int rc;
};

struct one {
    const char *id;
    const char *tenant; /* NULL = any tenant */
    json_t *entry;      /* out */
    int rc;
};

bool gw_audit_api_path(const char *url)
{
    size_t n = strlen(PREFIX), pn = strlen(POLICY_PREFIX);
    return (strncmp(url, PREFIX, n) == 0 && (url[n] == '\0' || url[n] == '/')) ||
           strcmp(url, OVERVIEW_PATH) == 0 ||
           (strncmp(url, POLICY_PREFIX, pn) == 0 && url[pn] != '\0');
}

/* GET /v1/policies/{name}: one policy the caller may use, its validated
 * document (parents merged) as the gateway enforces it. */
static void handle_policy(const struct gw_ruleset *rs, const struct gw_tenant *t, const char *name,
                          struct sg_http_response *resp)
{
    const struct sg_policy *def = gw_ruleset_policy(rs, t, NULL);
    for (size_t i = 0; i < rs->policies->count; i++) {
        const struct sg_policy *p = rs->policies->items[i];
        if (strcmp(p->name, name) != 0 || (t && !gw_tenant_may_use(t, p->name) && p != def))
            continue;
        return gw_respond_json(resp, 200,
                               json_pack("{s:s,s:s,s:s,s:b,s:O}", "name", p->name, "sha256",
                                         p->sha256, "description",
                                         p->description ? p->description : "", "default", p == def,
                                         "document", p->doc));
    }
    sg_http_error(resp, 404, "policy_not_found", "no policy %.64s for this tenant", name);
}

static void bind_text(struct query *q, const char *s)
{
    q->text[q->binds++] = s;
}

static void bind_num(struct query *q, sqlite3_int64 v)
{
    q->text[q->binds] = NULL;
    q->num[q->binds++] = v;
}

/* A decimal in [lo, hi]; -1 when not. */
static long long parse_num(const char *s, long long lo, long long hi)
{
    char *end = NULL;
    errno = 0;
    long long v = s && *s >= '0' && *s <= '9' ? strtoll(s, &end, 10) : -1;
    return (errno || !end || *end || v < lo || v > hi) ? -1 : v;
}

/* A time bound: ISO 8601 UTC ("2026-11-26T23:00:00Z") or epoch milliseconds. */
static long long parse_when(const char *s)
{
    long long v = parse_num(s, 0, 1LL << 50);
    return v >= 0 ? v : (long long)gw_audit_index_parse_time(s);
}

static int bad(struct sg_http_response *resp, const char *what)
{
    sg_http_error(resp, 400, "bad_request", "%s", what);
    return -EINVAL;
}

/* The WHERE clause of the equality filters; scope is the caller's own tenant
 * (NULL: any). */
static int add_filters(struct query *q, const struct sg_http_request *req, const char *scope,
                       struct sg_http_response *resp)
{
    for (size_t i = 0; i < FILTER_COUNT; i++) {
        const char *v = sg_http_query(req, FILTERS[i]);
        if (v && (strlen(v) > GW_AUDIT_API_VALUE_MAX || !*v))
            return bad(resp, "a filter value is 1-256 bytes");
        if (i == 0 && scope) {
            if (v && strcmp(v, scope) != 0) {
                sg_http_error(resp, 403, "forbidden", "only an admin tenant reads other tenants");
                return -EPERM;
            }
            v = scope;
        }
        if (v) {
            sg_buf_printf(&q->sql, " AND a.%s = ?", FILTERS[i]);
            bind_text(q, v);
        } else if (i == 1) {
            sg_buf_printf(&q->sql, " AND a.endpoint IS NOT 'console'");
        }
    }
    const char *st = sg_http_query(req, "status");
    if (st) {
        long long v = parse_num(st, 100, 599);
        if (v < 0)
            return bad(resp, "status is an HTTP status code");
        sg_buf_printf(&q->sql, " AND a.status = ?");
        bind_num(q, v);
    }
    return 0;
}

static int add_range(struct query *q, const struct sg_http_request *req, const char *col,
                     struct sg_http_response *resp)
{
    const char *since = sg_http_query(req, "since"), *until = sg_http_query(req, "until");
    const char *cursor = sg_http_query(req, "cursor");
    long long v;
    if (since) {
        if ((v = parse_when(since)) < 0)
            return bad(resp, "since: an ISO 8601 UTC time or epoch milliseconds");
        sg_buf_printf(&q->sql, " AND a.ts >= ?");
        bind_num(q, v);
    }
    if (until) {
        if ((v = parse_when(until)) < 0)
            return bad(resp, "until: an ISO 8601 UTC time or epoch milliseconds");
        sg_buf_printf(&q->sql, " AND a.ts < ?");
        bind_num(q, v);
    }
    if (cursor) {
        if ((v = parse_num(cursor, 1, 1LL << 62)) < 0)
            return bad(resp, "cursor: the next_cursor of a previous page");
        sg_buf_printf(&q->sql, " AND %s < ?", col);
        bind_num(q, v);
    }
    return 0;
}

static int build(struct query *q, const struct sg_http_request *req, const char *scope,
                 struct sg_http_response *resp)
{
    const char *rule = sg_http_query(req, "rule"), *limit = sg_http_query(req, "limit");
    q->limit = GW_AUDIT_API_PAGE_DEFAULT;
    if (limit && (q->limit = (long)parse_num(limit, 1, GW_AUDIT_API_PAGE_MAX)) < 0)
        return bad(resp, "limit: 1-200");
    if (rule && (!*rule || strlen(rule) > GW_AUDIT_API_VALUE_MAX))
        return bad(resp, "rule: 1-256 bytes");
    const char *col = rule ? "r.audit_id" : "a.id";
    sg_buf_printf(&q->sql,
                  "SELECT a.id, a.ts, a.request_id, a.tenant, a.endpoint, a.tool, a.language,"
                  " a.policy, json_extract(a.line, '$.policy_sha256'), a.verdict, a.outcome,"
                  " a.status, a.total_ms, a.rules FROM ");
    if (rule) {
        sg_buf_printf(&q->sql, "audit_rule r JOIN audit a ON a.id = r.audit_id WHERE r.rule = ?");
        bind_text(q, rule);
    } else {
        sg_buf_printf(&q->sql, "audit a WHERE 1");
    }
    int r = add_filters(q, req, scope, resp);
    if (r == 0)
        r = add_range(q, req, col, resp);
    if (r == 0 && sg_buf_printf(&q->sql, " ORDER BY %s DESC LIMIT %ld", col, q->limit + 1) < 0)
        r = bad(resp, "query too long");
    return r;
}

static void iso_time(sqlite3_int64 ms, char out[80])
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    snprintf(out, 80, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)((ms % 1000 + 1000) % 1000));
}

static json_t *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? json_string((const char *)s) : json_null();
}

static json_t *row_item(sqlite3_stmt *st)
{
    char when[80];
    iso_time(sqlite3_column_int64(st, 1), when);
    static const char *const names[] = {"request_id",    "tenant",   "endpoint",
                                        "tool",          "language", "policy",
                                        "policy_sha256", "verdict",  "outcome"};
    json_t *o = json_pack("{s:s}", "time", when);
    for (int i = 0; o && i < 9; i++)
        json_object_set_new(o, names[i], col_text(st, 2 + i));
    const unsigned char *rules = sqlite3_column_text(st, 13);
    json_t *rv = rules ? json_loads((const char *)rules, 0, NULL) : NULL;
    json_object_set_new(o, "rules", rv ? rv : json_array());
    json_object_set_new(o, "status",
                        sqlite3_column_type(st, 11) == SQLITE_NULL
                            ? json_null()
                            : json_integer(sqlite3_column_int64(st, 11)));
    json_object_set_new(o, "total_ms",
                        sqlite3_column_type(st, 12) == SQLITE_NULL
                            ? json_null()
                            : json_real(sqlite3_column_double(st, 12)));
    return o;
}

static int run_list(sqlite3 *db, void *arg)
{
    struct query *q = arg;
    sqlite3_stmt *st = NULL;
    if ((q->rc = sqlite3_prepare_v2(db, q->sql.data, -1, &st, NULL)) != SQLITE_OK)
        return -EIO;
    for (int i = 0; i < q->binds; i++)
        q->text[i] ? sqlite3_bind_text(st, i + 1, q->text[i], -1, SQLITE_STATIC)
                   : sqlite3_bind_int64(st, i + 1, q->num[i]);
    long n = 0;
    while ((q->rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n++ == q->limit) { /* one more than the page: there is a next page */
            q->rc = SQLITE_DONE;
            break;
        }
        json_array_append_new(q->items, row_item(st));
        snprintf(q->next, sizeof(q->next), "%lld", (long long)sqlite3_column_int64(st, 0));
    }
    if (n <= q->limit)
        q->next[0] = '\0';
    sqlite3_finalize(st);
    return q->rc == SQLITE_DONE ? 0 : -EIO;
}

static void db_error(int rc, struct sg_http_response *resp)
{
    if (rc == SQLITE_INTERRUPT)
        return sg_http_error(resp, 503, "query_timeout",
                             "the audit query took longer than %d ms; narrow the filters",
                             GW_AUDIT_API_QUERY_MS);
    sg_http_error(resp, 503, "audit_index_unavailable", "the audit index cannot be read: %s",
                  sqlite3_errstr(rc));
}

static void handle_list(const struct gw_audit_api *a, const struct sg_http_request *req,
                        const char *scope, struct sg_http_response *resp)
{
    struct query q = {.items = json_array()};
    sg_buf_init(&q.sql, SQL_MAX);
    if (build(&q, req, scope, resp) == 0) {
        if (gw_audit_index_read(a->index, GW_AUDIT_API_QUERY_MS, run_list, &q) < 0)
            db_error(q.rc, resp);
        else
            gw_respond_json(resp, 200,
                            json_pack("{s:O,s:s?,s:i}", "items", q.items, "next_cursor",
                                      q.next[0] ? q.next : NULL, "limit", (int)q.limit));
    }
    json_decref(q.items);
    sg_buf_free(&q.sql);
}

static int run_one(sqlite3 *db, void *arg)
{
    struct one *o = arg;
    sqlite3_stmt *st = NULL;
    o->rc = sqlite3_prepare_v2(db, "SELECT tenant, line FROM audit WHERE request_id = ?", -1, &st,
                               NULL);
    if (o->rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, o->id, -1, SQLITE_STATIC);
        o->rc = sqlite3_step(st);
    }
    if (o->rc == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (!o->tenant || (t && strcmp(t, o->tenant) == 0))
            o->entry = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
        o->rc = SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return o->rc == SQLITE_DONE ? 0 : -EIO;
}

static void handle_one(const struct gw_audit_api *a, const char *id, const char *scope,
                       struct sg_http_response *resp)
{
    struct one o = {.id = id, .tenant = scope};
    if (!*id || strlen(id) > 64)
        return sg_http_error(resp, 404, "not_found", "no such audit entry");
    if (gw_audit_index_read(a->index, GW_AUDIT_API_QUERY_MS, run_one, &o) < 0)
        return db_error(o.rc, resp);
    if (!o.entry)
        return sg_http_error(resp, 404, "not_found", "no audit entry %.64s", id);
    gw_respond_json(resp, 200, o.entry);
}

static int run_summary(sqlite3 *db, void *arg)
{
    struct summary *q = arg;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    q->rc = gw_audit_summary(db, q->tenant, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
                             &q->out);
    return q->rc == SQLITE_OK ? 0 : -EIO;
}

/* GET /v1/audit/summary: the Overview's last hour (gw_audit_summary.h). */
static void handle_summary(const struct gw_audit_api *a, const struct sg_http_request *req,
                           const char *scope, struct sg_http_response *resp)
{
    const char *tenant = sg_http_query(req, "tenant");
    if (tenant && (!*tenant || strlen(tenant) > GW_AUDIT_API_VALUE_MAX))
        return (void)bad(resp, "a filter value is 1-256 bytes");
    if (scope && tenant && strcmp(tenant, scope) != 0)
        return sg_http_error(resp, 403, "forbidden", "only an admin tenant reads other tenants");
    struct summary q = {.tenant = scope ? scope : tenant};
    if (gw_audit_index_read(a->index, GW_AUDIT_API_QUERY_MS, run_summary, &q) < 0)
        return db_error(q.rc, resp);
    gw_respond_json(resp, 200, q.out);
}

/* GET /v1/overview: the pools and what is in flight (gw_audit_api.h). */
static void handle_overview(const struct gw_audit_api *a, const char *scope,
                            struct sg_http_response *resp)
{
    json_t *list = a->router ? gw_router_overview(a->router, scope == NULL) : json_array(), *e;
    json_int_t jobs = 0, sessions = 0;
    size_t i;
    json_array_foreach(list, i, e)
    {
        jobs += json_integer_value(json_object_get(e, "jobs_in_flight"));
        sessions += json_integer_value(
            json_object_get(json_object_get(json_object_get(e, "pools"), "sessions"), "open"));
    }
    gw_respond_json(resp, 200,
                    list ? json_pack("{s:o,s:I,s:I}", "executors", list, "jobs_in_flight", jobs,
                                     "sessions_open", sessions)
                         : NULL);
}

static int rate_ok(const struct gw_audit_api *a, const struct gw_tenant *t,
                   struct sg_http_response *resp)
{
    uint64_t retry = 0, rate = t ? t->rate : a->cfg->anonymous_rate;
    if (gw_ratelimit_take(a->ratelimit, t ? t->name : "anonymous", rate,
                          t ? t->burst : a->cfg->anonymous_burst, gw_now_ns(), &retry))
        return 1;
    char secs[24];
    snprintf(secs, sizeof(secs), "%llu", (unsigned long long)((retry + 999) / 1000));
    sg_http_error(resp, 429, "rate_limited", "rate limit exceeded; retry after %s s", secs);
    sg_http_add_header(resp, "Retry-After", secs);
    return 0;
}

/* The console call's own audit line: who read what, and the answer. */
static void audit_call(const struct gw_audit_api *a, const struct sg_http_request *req,
                       const struct gw_tenant *t, const char *id, int status)
{
    char when[64];
    gw_iso_time(when);
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:s}", "time", when, "request_id", id,
                          "endpoint", "console", "method", req->method, "path", req->url, "tenant",
                          t ? t->name : "anonymous", "peer", req->peer, "status", status, "outcome",
                          status == 200 ? "ok" : "refused");
    char *line = o ? json_dumps(o, GW_JSON_FLAGS) : NULL;
    if (line)
        gw_audit_write(a->audit, line, strlen(line));
    free(line);
    json_decref(o);
}

static void dispatch(const struct gw_audit_api *a, const struct gw_ruleset *rs,
                     const struct sg_http_request *req, const struct gw_tenant *t, int authed,
                     struct sg_http_response *resp)
{
    /* no tokens file: loopback only, every caller is the operator */
    const char *scope = t && !t->admin ? t->name : NULL;
    const char *rest = req->url + strlen(PREFIX);
    if (!authed || !rate_ok(a, t, resp))
        goto out;
    if (strcmp(req->method, "GET") != 0) {
        sg_http_error(resp, 405, "method_not_allowed", "%s takes GET", req->url);
        sg_http_add_header(resp, "Allow", "GET");
    } else if (strcmp(req->url, OVERVIEW_PATH) == 0) {
        handle_overview(a, scope, resp);
    } else if (strncmp(req->url, POLICY_PREFIX, strlen(POLICY_PREFIX)) == 0) {
        handle_policy(rs, t, req->url + strlen(POLICY_PREFIX), resp);
    } else if (!a->index) {
        sg_http_error(resp, 404, "audit_index_off",
                      "the audit index is off (set audit_index in the configuration)");
    } else if (*rest == '\0') {
        handle_list(a, req, scope, resp);
    } else if (strcmp(rest, "/summary") == 0) {
        handle_summary(a, req, scope, resp);
    } else {
        handle_one(a, rest + 1, scope, resp);
    }
out:
    if (resp->status == 200 && !resp->body)
        sg_http_error(resp, 500, "internal", "out of memory");
}

void gw_audit_api_handle(const struct gw_audit_api *a, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    char id[17];
    gw_request_id(id);
    const struct gw_tenant *t = NULL;
    struct gw_ruleset *rs = gw_ruleset_slot_get(a->rules); /* t lives as long as rs */
    int authed = gw_tenants_authenticate(rs->tenants, req, resp, &t) == 0;
    dispatch(a, rs, req, t, authed, resp);
    sg_http_add_header(resp, "X-Request-Id", id);
    sg_http_add_header(resp, "Cache-Control", "no-store");
    audit_call(a, req, t, id, resp->status);
    gw_ruleset_unref(rs);
}
