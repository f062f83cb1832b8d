/* gw_audit_detail.h - what a job's audit line carries for the console's job
 * page beyond the summary: each static violation with its position and
 * message, and the submitted code as the tenant's "audit_code" says
 * (gw_tenants.h: "none", "rejected" (the default), "all").
 *
 * Everything added is bounded: at most GW_AUDIT_DETAIL_VIOLATIONS_MAX
 * violations, messages cut to GW_AUDIT_DETAIL_MESSAGE_MAX bytes, and at most
 * GW_AUDIT_DETAIL_CODE_MAX bytes of code (cut at a UTF-8 character boundary,
 * with "code_truncated": true). Code that is not valid UTF-8 is not kept
 * ("code_omitted": "not_utf8"). The caller still drops a line over
 * GW_AUDIT_LINE_MAX: gw_audit_detail_fit() takes the code out again first.
 */
#ifndef SG_GW_AUDIT_DETAIL_H
#define SG_GW_AUDIT_DETAIL_H

#include <jansson.h>
#include <stddef.h>

#include "gw_tenants.h"
#include "violation.h"

#define GW_AUDIT_DETAIL_VIOLATIONS_MAX 32
#define GW_AUDIT_DETAIL_MESSAGE_MAX 200
#define GW_AUDIT_DETAIL_CODE_MAX 8192

/* Add "violations" (when v has any) and "code" (when mode keeps it: rejected
 * is 1 for a policy rejection) to the audit line o. tenant NULL: the
 * default mode. code may be NULL (the request was not parsed). */
void gw_audit_detail_add(json_t *o, const struct gw_tenant *tenant, const struct sg_violations *v,
                         int rejected, const char *code, size_t code_len);

/* Serialise o with flags; when the text reaches GW_AUDIT_LINE_MAX, remove
 * the code (and then the violations) and mark "code_omitted": "too_large".
 * Caller frees the text; NULL on out of memory. */
char *gw_audit_detail_fit(json_t *o, size_t flags);

#endif
