/* Unit tests for the audit index (gw_audit_index.c: time parsing, what is
 * indexed and skipped, resuming at the stored position, truncation, rotation,
 * retention, rebuild), the console's detail in audit lines (gw_audit_detail.c)
 * and the tenants file's "admin" and "audit_code". */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw_audit.h"
#include "gw_audit_detail.h"
#include "gw_audit_index.h"
#include "gw_audit_summary.h"
#include "gw_tenants.h"

static char dir[64], db[128], logp[128];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sg-aidx-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(db, sizeof(db), "%s/a.db", dir);
    snprintf(logp, sizeof(logp), "%s/a.log", dir);
}

static void teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* An audit line for id with a time `ago_s` seconds before now. */
static void line_for(char *out, size_t n, int id, long ago_s, const char *rule)
{
    time_t t = time(NULL) - ago_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
    snprintf(out, n,
             "{\"time\":\"%s\",\"request_id\":\"id%06d\",\"tenant\":\"t%d\",\"endpoint\":"
             "\"v1_run\",\"verdict\":\"%s\",\"rules\":[%s%s%s],\"status\":200}\n",
             when, id, id % 2, rule ? "reject" : "accept", rule ? "\"" : "", rule ? rule : "",
             rule ? "\"" : "");
}

static void append(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void append_lines(const char *path, int from, int to, long ago_s)
{
    char line[512];
    for (int i = from; i < to; i++) {
        line_for(line, sizeof(line), i, ago_s, i % 3 == 0 ? "import.not-allowed" : NULL);
        append(path, line);
    }
}

static struct gw_audit_index *open_index(uint64_t max_rows)
{
    struct gw_audit_index_config c = {db, logp, 30, max_rows, 0};
    struct gw_audit_index *x = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_audit_index_open(&c, 0, &x, &err), 0, "%s", err.msg);
    return x;
}

static uint64_t sync_lines(struct gw_audit_index *x)
{
    uint64_t n = 0;
    struct sg_error err = {0};
    cr_assert_eq(gw_audit_index_sync(x, &n, &err), 0, "%s", err.msg);
    return n;
}

static int count_cb(sqlite3 *d, void *arg)
{
    sqlite3_stmt *st = NULL;
    const char *sql = arg;
    int64_t n = -1;
    if (sqlite3_prepare_v2(d, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return (int)n;
}

static int count(struct gw_audit_index *x, const char *sql)
{
    return gw_audit_index_read(x, 1000, count_cb, (void *)(uintptr_t)sql);
}

Test(audit_index, parses_the_gateways_time_and_nothing_else)
{
    cr_assert_eq(gw_audit_index_parse_time("1970-01-01T00:00:01.250Z"), 1250);
    cr_assert_eq(gw_audit_index_parse_time("2026-11-26T23:44:12Z"), 1795736652000LL);
    cr_assert_eq(gw_audit_index_parse_time("2026-11-26T23:44:12.5Z"), 1795736652500LL);
    const char *bad[] = {NULL,
                         "",
                         "2026-11-26",
                         "2026-11-26T23:44:12",
                         "2026-11-26T23:44:12.Z",
                         "2026-13-01T00:00:00Z",
                         "2026-11-26T24:00:00Z",
                         "1969-12-31T23:59:59Z",
                         "2026-11-26T23:44:12Zjunk",
                         "2026-11-26T23:44:12+01:00"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(gw_audit_index_parse_time(bad[i]), -1, "%s", bad[i] ? bad[i] : "NULL");
}

Test(audit_index, indexes_whole_lines_skips_the_rest_and_resumes, .init = setup, .fini = teardown)
{
    append_lines(logp, 0, 10, 0);
    append(logp, "not json\n{\"request_id\":\"x\"}\n[1]\n{\"time\":\"2026-11-26T23:44:12Z\"}\n");
    char *big = malloc(GW_AUDIT_INDEX_LINE_MAX + 2);
    memset(big, 'x', GW_AUDIT_INDEX_LINE_MAX + 1);
    big[GW_AUDIT_INDEX_LINE_MAX + 1] = '\0';
    append(logp, big);
    append(logp, "\n");
    free(big);
    append(logp, "{\"time\":\"2026-11-26T23:44:12Z\",\"request_id\":\"partial\""); /* no newline */
    struct gw_audit_index *x = open_index(0);
    cr_assert_eq(sync_lines(x), 15);
    struct gw_audit_index_stats st;
    gw_audit_index_get_stats(x, &st);
    cr_assert_eq(st.indexed, 10);
    cr_assert_eq(st.skipped, 5);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 10);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit_rule WHERE rule='import.not-allowed'"), 4);
    append(logp, "}\n"); /* the partial line is finished */
    cr_assert_eq(sync_lines(x), 1);
    gw_audit_index_close(x);
    /* a new process resumes at the stored offset: nothing twice */
    append_lines(logp, 10, 12, 0);
    x = open_index(0);
    cr_assert_eq(sync_lines(x), 2);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 13);
    gw_audit_index_close(x);
}

Test(audit_index, follows_truncation_and_rotation, .init = setup, .fini = teardown)
{
    append_lines(logp, 0, 5, 0);
    struct gw_audit_index *x = open_index(0);
    cr_assert_eq(sync_lines(x), 5);
    cr_assert_eq(truncate(logp, 0), 0); /* copytruncate */
    append_lines(logp, 5, 7, 0);
    cr_assert_eq(sync_lines(x), 2);
    char old[160];
    snprintf(old, sizeof(old), "%s.1", logp);
    cr_assert_eq(rename(logp, old), 0);
    append_lines(old, 7, 8, 0);     /* the writer still writes the old file */
    cr_assert_eq(sync_lines(x), 1); /* no new file yet: the old one is read */
    append_lines(old, 8, 9, 0);     /* its last line before the reopen */
    append_lines(logp, 9, 11, 0);   /* the writer reopened: a new file */
    cr_assert_eq(sync_lines(x), 3); /* the old file's end, then the new file */
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 11);
    gw_audit_index_close(x);
}

Test(audit_index, retention_by_rows_and_by_age, .init = setup, .fini = teardown)
{
    append_lines(logp, 0, 1000, 40L * 86400); /* older than the 30 days kept */
    append_lines(logp, 1000, 4000, 0);
    struct gw_audit_index *x = open_index(1000);
    cr_assert_eq(sync_lines(x), 4000);
    struct sg_error err = {0};
    cr_assert_eq(gw_audit_index_retain(x, &err), 0, "%s", err.msg);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 1000);
    cr_assert_eq(count(x, "SELECT min(substr(request_id, 3)) + 0 FROM audit"), 3000);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit_rule WHERE audit_id NOT IN "
                          "(SELECT id FROM audit)"),
                 0);
    gw_audit_index_close(x);
}

Test(audit_index, rebuild_reads_rotated_logs_then_the_live_one, .init = setup, .fini = teardown)
{
    char old[160];
    snprintf(old, sizeof(old), "%s.1", logp);
    append_lines(old, 0, 3, 0);
    append_lines(logp, 3, 5, 0);
    struct gw_audit_index *x = open_index(0);
    cr_assert_eq(sync_lines(x), 2);
    uint64_t n = 0;
    struct sg_error err = {0};
    const char *logs[] = {old, logp};
    cr_assert_eq(gw_audit_index_rebuild(x, logs, 2, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 5);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 5);
    append_lines(logp, 5, 6, 0);
    cr_assert_eq(sync_lines(x), 1); /* continues after the rebuild's position */
    const char *missing[] = {"/nonexistent/audit.log", logp};
    cr_assert_lt(gw_audit_index_rebuild(x, missing, 2, &n, &err), 0);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit"), 6); /* rolled back */
    gw_audit_index_close(x);
}

Test(audit_index, its_page_caches_stay_small, .init = setup, .fini = teardown)
{
    /* ~12 MB of index: SQLite's default caches would hold 2 MiB each */
    FILE *f = fopen(logp, "w");
    cr_assert_not_null(f);
    char line[512];
    for (int i = 0; i < 30000; i++) {
        line_for(line, sizeof(line), i, 5, i % 3 == 0 ? "import.not-allowed" : NULL);
        fputs(line, f);
    }
    fclose(f);
    struct gw_audit_index *x = open_index(1000000);
    cr_assert_eq(sync_lines(x), 30000);
    cr_assert_eq(count(x, "SELECT count(*) FROM audit WHERE tenant = 't1'"), 15000);
    cr_assert_lt(sqlite3_memory_used(), 1500000, "SQLite holds %lld bytes",
                 (long long)sqlite3_memory_used());
    gw_audit_index_close(x);
}

Test(audit_index, a_missing_log_is_not_an_error, .init = setup, .fini = teardown)
{
    struct gw_audit_index *x = open_index(0);
    cr_assert_eq(sync_lines(x), 0);
    append_lines(logp, 0, 1, 0);
    cr_assert_eq(sync_lines(x), 1);
    gw_audit_index_close(x);
    gw_audit_index_close(NULL);
}

Test(audit_index, an_unopenable_database_is_an_error, .init = setup, .fini = teardown)
{
    struct gw_audit_index_config c = {"/nonexistent/dir/a.db", logp, 30, 1000, 0};
    struct gw_audit_index *x = NULL;
    struct sg_error err = {0};
    cr_assert_lt(gw_audit_index_open(&c, 0, &x, &err), 0);
    cr_assert_null(x);
    cr_assert(strstr(err.msg, "audit index"), "%s", err.msg);
}

/* ------------------------------------------------------------ detail */

static struct sg_violations one_violation(void)
{
    static struct sg_violation v = {.rule = "import.not-allowed",
                                    .severity = "error",
                                    .line = 1,
                                    .column = 8,
                                    .end_line = 1,
                                    .end_column = 10};
    v.message = (char *)(uintptr_t) "import of module 'os' is not allowed";
    return (struct sg_violations){.items = &v, .count = 1, .cap = 1};
}

static json_t *detail(enum gw_audit_code mode, int rejected, const char *code, size_t len)
{
    struct gw_tenant t = {.name = (char *)(uintptr_t) "t", .audit_code = mode};
    struct sg_violations v = one_violation();
    json_t *o = json_object();
    gw_audit_detail_add(o, &t, rejected ? &v : NULL, rejected, code, len);
    return o;
}

Test(audit_detail, code_kept_as_the_tenant_says)
{
    const char *code = "import os\n";
    json_t *o = detail(GW_AUDIT_CODE_REJECTED, 1, code, strlen(code));
    cr_assert_str_eq(json_string_value(json_object_get(o, "code")), code);
    json_t *v = json_array_get(json_object_get(o, "violations"), 0);
    cr_assert_eq(json_integer_value(json_object_get(v, "column")), 8);
    json_decref(o);
    o = detail(GW_AUDIT_CODE_REJECTED, 0, code, strlen(code));
    cr_assert_null(json_object_get(o, "code"));
    cr_assert_null(json_object_get(o, "violations"));
    json_decref(o);
    o = detail(GW_AUDIT_CODE_ALL, 0, code, strlen(code));
    cr_assert_str_eq(json_string_value(json_object_get(o, "code")), code);
    json_decref(o);
    o = detail(GW_AUDIT_CODE_NONE, 1, code, strlen(code));
    cr_assert_null(json_object_get(o, "code"));
    cr_assert_not_null(json_object_get(o, "violations"));
    json_decref(o);
}

Test(audit_detail, code_is_capped_at_a_character_boundary)
{
    size_t n = GW_AUDIT_DETAIL_CODE_MAX + 100;
    char *code = malloc(n + 1);
    memset(code, 'a', n);
    /* a 3-byte character straddling the cap */
    memcpy(code + GW_AUDIT_DETAIL_CODE_MAX - 1, "\xe2\x82\xac", 3);
    code[n] = '\0';
    json_t *o = detail(GW_AUDIT_CODE_ALL, 0, code, n);
    const char *kept = json_string_value(json_object_get(o, "code"));
    cr_assert_not_null(kept);
    cr_assert_eq(strlen(kept), GW_AUDIT_DETAIL_CODE_MAX - 1);
    cr_assert(json_is_true(json_object_get(o, "code_truncated")));
    json_decref(o);
    o = detail(GW_AUDIT_CODE_ALL, 0, "\xff\xfe", 2);
    cr_assert_str_eq(json_string_value(json_object_get(o, "code_omitted")), "not_utf8");
    json_decref(o);
    free(code);
}

Test(audit_detail, a_line_never_reaches_the_writers_cap)
{
    /* control characters grow sixfold when escaped: 8 KiB of them is 48 KiB of JSON */
    size_t n = GW_AUDIT_DETAIL_CODE_MAX;
    char *code = malloc(n);
    memset(code, '\x01', n);
    json_t *o = detail(GW_AUDIT_CODE_ALL, 1, code, n);
    char *line = gw_audit_detail_fit(o, JSON_COMPACT);
    cr_assert_lt(strlen(line), GW_AUDIT_LINE_MAX);
    cr_assert_null(json_object_get(o, "code"));
    cr_assert_not_null(json_object_get(o, "violations"));
    cr_assert_str_eq(json_string_value(json_object_get(o, "code_omitted")), "too_large");
    free(line);
    json_decref(o);
    free(code);
}

/* ------------------------------------------------------------ tenants */

Test(audit_tenants, admin_and_audit_code)
{
    const char *ok = "{\"tenants\": {\"ops\": {\"tokens\": [\"operator-token-0123456789\"],"
                     " \"admin\": true, \"audit_code\": \"all\"},"
                     " \"t\": {\"tokens\": [\"tenant-token-0123456789\"]}}}";
    struct gw_tenants *ts = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_tenants_load_buf(ok, strlen(ok), "tokens.json", &ts, &err), 0, "%s", err.msg);
    const struct gw_tenant *ops = gw_tenants_lookup(ts, "operator-token-0123456789", 25);
    const struct gw_tenant *t = gw_tenants_lookup(ts, "tenant-token-0123456789", 23);
    cr_assert(ops && ops->admin && ops->audit_code == GW_AUDIT_CODE_ALL);
    cr_assert(t && !t->admin && t->audit_code == GW_AUDIT_CODE_REJECTED);
    gw_tenants_free(ts);
    const char *bad[] = {
        "{\"tenants\": {\"a\": {\"tokens\": [\"tenant-token-0123456789\"], \"admin\": 1}}}",
        "{\"tenants\": {\"a\": {\"tokens\": [\"tenant-token-0123456789\"], \"audit_code\": 1}}}",
        ("{\"tenants\": {\"a\": {\"tokens\": [\"tenant-token-0123456789\"], \"audit_code\": "
         "\"some\"}}}"),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ts = NULL;
        cr_assert_lt(gw_tenants_load_buf(bad[i], strlen(bad[i]), "tokens.json", &ts, &err), 0, "%s",
                     bad[i]);
        cr_assert(strstr(err.msg, "admin") || strstr(err.msg, "audit_code"), "%s", err.msg);
    }
}

/* ------------------------------------------------------------ summary */

static time_t summary_now; /* the lines' time and the summary's now: one minute */

static int summary_cb(sqlite3 *d, void *arg)
{
    return gw_audit_summary(d, NULL, (int64_t)summary_now * 1000, arg) == SQLITE_OK ? 0 : -1;
}

Test(audit_summary, per_minute_outcomes_percentiles_and_rules, .init = setup, .fini = teardown)
{
    char line[512], when[32];
    summary_now = time(NULL);
    time_t t = summary_now - 3600 * 2; /* one line out of the window */
    for (int i = 0; i < 12; i++) {
        struct tm tm;
        time_t at = i == 0 ? t : summary_now;
        gmtime_r(&at, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S.000Z", &tm);
        snprintf(line, sizeof(line),
                 "{\"time\":\"%s\",\"request_id\":\"s%02d\",\"endpoint\":\"%s\",\"outcome\":\"%s\","
                 "\"total_ms\":%d,\"rules\":[%s]}\n",
                 when, i, i == 11 ? "console" : "v1_run", i % 3 ? "success" : "rejected", i * 10,
                 i % 3 ? "" : "\"import.not-allowed\"");
        append(logp, line);
    }
    struct gw_audit_index *x = open_index(0);
    cr_assert_eq(sync_lines(x), 12);
    json_t *sum = NULL;
    cr_assert_eq(gw_audit_index_read(x, 1000, summary_cb, &sum), 0);
    json_t *minutes = json_object_get(sum, "minutes");
    cr_assert_eq(json_array_size(minutes), GW_AUDIT_SUMMARY_MINUTES);
    json_t *now = json_array_get(minutes, GW_AUDIT_SUMMARY_MINUTES - 1);
    /* lines 1..10 (0 is too old, 11 a console call): 7 successes, 3 rejections */
    cr_assert_eq(json_integer_value(json_object_get(now, "requests")), 10);
    json_t *oc = json_object_get(now, "outcomes");
    cr_assert_eq(json_integer_value(json_object_get(oc, "success")), 7);
    cr_assert_eq(json_integer_value(json_object_get(oc, "rejected")), 3);
    /* durations 10..100: the lower median 50, p99 the largest at or below rank 0.99: 90 */
    cr_assert_float_eq(json_real_value(json_object_get(now, "p50_ms")), 50.0, 1e-9);
    cr_assert_float_eq(json_real_value(json_object_get(now, "p99_ms")), 90.0, 1e-9);
    json_t *rule = json_array_get(json_object_get(sum, "rules"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(rule, "rule")), "import.not-allowed");
    cr_assert_eq(json_integer_value(json_object_get(rule, "count")), 3);
    json_decref(sum);
    gw_audit_index_close(x);
}
