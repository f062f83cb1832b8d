/* gw_audit_summary.h - the console Overview's figures from the audit index
 * (GET /v1/audit/summary): per minute of the last hour the requests by
 * outcome and the p50/p99 of their total_ms, and the rules that fired most.
 * Console calls (endpoint "console") are left out. A read-only query; the
 * caller bounds its time (gw_audit_index_read).
 */
#ifndef SG_GW_AUDIT_SUMMARY_H
#define SG_GW_AUDIT_SUMMARY_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#define GW_AUDIT_SUMMARY_MINUTES 60
#define GW_AUDIT_SUMMARY_RULES 20    /* the most frequent rules listed */
#define GW_AUDIT_SUMMARY_OUTCOMES 16 /* distinct outcomes per minute kept (the rest: "other") */

/* The summary of lines with time >= now_ms - 60 minutes, of one tenant
 * (tenant NULL: all). On success *ret is
 *   {"since", "until", "minutes": [{"minute", "requests", "outcomes": {name: n},
 *     "p50_ms", "p99_ms"}] (60 entries, oldest first, empty minutes too),
 *    "rules": [{"rule", "count"}]}
 * (caller decrefs). Returns 0, or the SQLite error code. */
int gw_audit_summary(sqlite3 *db, const char *tenant, int64_t now_ms, json_t **ret);

#endif
