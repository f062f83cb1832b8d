#include "gw_audit_summary.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define MINUTE_MS 60000

static const char SQL_OUTCOMES[] =
    "SELECT ts / 60000, coalesce(outcome, 'unknown'), count(*) FROM audit WHERE ts >= ?1"
    " AND endpoint IS NOT 'console' AND (?2 IS NULL OR tenant = ?2) GROUP BY 1, 2";
/* percent_rank over each minute's durations: p50 is the largest duration at
 * or below rank 0.5 (the lower median), p99 likewise. */
static const char SQL_LATENCY[] =
    "SELECT m, max(CASE WHEN pr <= 0.5 THEN total_ms END), max(CASE WHEN pr <= 0.99 THEN total_ms "
    "END) FROM (SELECT ts / 60000 AS m, total_ms, percent_rank() OVER (PARTITION BY ts / 60000 "
    "ORDER BY total_ms) AS pr FROM audit WHERE ts >= ?1 AND total_ms IS NOT NULL"
    " AND endpoint IS NOT 'console' AND (?2 IS NULL OR tenant = ?2)) GROUP BY m";
static const char SQL_RULES[] =
    "SELECT r.rule, count(*) FROM audit_rule r JOIN audit a ON a.id = r.audit_id WHERE a.ts >= ?1"
    " AND (?2 IS NULL OR a.tenant = ?2) GROUP BY r.rule ORDER BY 2 DESC, 1 LIMIT ?3";

static void iso_minute(int64_t minute, char out[80])
{
    time_t s = (time_t)(minute * 60);
    struct tm tm;
    gmtime_r(&s, &tm);
    snprintf(out, 80, "%04d-%02d-%02dT%02d:%02d:00Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min);
}

/* Run sql (?1 since, ?2 tenant or NULL, ?3 GW_AUDIT_SUMMARY_RULES) and hand
 * each row to row(st, arg). Returns SQLITE_OK or the error. */
static int each_row(sqlite3 *db, const char *sql, const char *tenant, int64_t since,
                    void (*row)(sqlite3_stmt *st, void *arg), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    sqlite3_bind_int64(st, 1, since);
    if (tenant)
        sqlite3_bind_text(st, 2, tenant, -1, SQLITE_STATIC);
    if (sqlite3_bind_parameter_count(st) >= 3)
        sqlite3_bind_int(st, 3, GW_AUDIT_SUMMARY_RULES);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        row(st, arg);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

struct window {
    json_t *minutes; /* GW_AUDIT_SUMMARY_MINUTES objects, oldest first */
    int64_t first;   /* the first minute (epoch minutes) */
};

/* The minute's object, or NULL when outside the window. */
static json_t *slot(const struct window *w, int64_t m)
{
    return m >= w->first && m < w->first + GW_AUDIT_SUMMARY_MINUTES
               ? json_array_get(w->minutes, (size_t)(m - w->first))
               : NULL;
}

static void outcome_row(sqlite3_stmt *st, void *arg)
{
    json_t *o = slot(arg, sqlite3_column_int64(st, 0));
    json_t *outcomes = json_object_get(o, "outcomes");
    const char *name = (const char *)sqlite3_column_text(st, 1);
    json_int_t n = sqlite3_column_int64(st, 2);
    if (!o || !name)
        return;
    if (json_object_size(outcomes) >= GW_AUDIT_SUMMARY_OUTCOMES && !json_object_get(outcomes, name))
        name = "other";
    json_object_set_new(outcomes, name,
                        json_integer(json_integer_value(json_object_get(outcomes, name)) + n));
    json_object_set_new(o, "requests",
                        json_integer(json_integer_value(json_object_get(o, "requests")) + n));
}

static void latency_row(sqlite3_stmt *st, void *arg)
{
    json_t *o = slot(arg, sqlite3_column_int64(st, 0));
    if (!o)
        return;
    json_object_set_new(o, "p50_ms", json_real(sqlite3_column_double(st, 1)));
    json_object_set_new(o, "p99_ms", json_real(sqlite3_column_double(st, 2)));
}

static void rule_row(sqlite3_stmt *st, void *arg)
{
    json_array_append_new(arg, json_pack("{s:s,s:I}", "rule", sqlite3_column_text(st, 0), "count",
                                         (json_int_t)sqlite3_column_int64(st, 1)));
}

int gw_audit_summary(sqlite3 *db, const char *tenant, int64_t now_ms, json_t **ret)
{
    int64_t first = now_ms / MINUTE_MS - (GW_AUDIT_SUMMARY_MINUTES - 1), since = first * MINUTE_MS;
    json_t *minutes = json_array(), *rules = json_array();
    char when[80];
    for (int i = 0; minutes && i < GW_AUDIT_SUMMARY_MINUTES; i++) {
        iso_minute(first + i, when);
        json_array_append_new(minutes, json_pack("{s:s,s:i,s:{},s:n,s:n}", "minute", when,
                                                 "requests", 0, "outcomes", "p50_ms", "p99_ms"));
    }
    struct window w = {minutes, first};
    int rc = minutes && rules ? each_row(db, SQL_OUTCOMES, tenant, since, outcome_row, &w)
                              : SQLITE_NOMEM;
    if (rc == SQLITE_OK)
        rc = each_row(db, SQL_LATENCY, tenant, since, latency_row, &w);
    if (rc == SQLITE_OK)
        rc = each_row(db, SQL_RULES, tenant, since, rule_row, rules);
    if (rc != SQLITE_OK) {
        json_decref(minutes);
        json_decref(rules);
        return rc;
    }
    char until[80];
    iso_minute(first, when);
    iso_minute(first + GW_AUDIT_SUMMARY_MINUTES, until);
    *ret = json_pack("{s:s,s:s,s:o,s:o}", "since", when, "until", until, "minutes", minutes,
                     "rules", rules);
    return *ret ? SQLITE_OK : SQLITE_NOMEM;
}
