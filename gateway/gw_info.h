/* gw_info.h - what a caller may learn about itself: GET /v1/whoami (its
 * tenant, how it was identified, its policies and limits) and
 * GET /v1/runtimes (interpreters, installed packages, what each of its
 * policies lets a job import). Both are tenant-scoped: they authenticate
 * like the job endpoints and show only the caller's own settings.
 */
#ifndef SG_GW_INFO_H
#define SG_GW_INFO_H

#include <jansson.h>

#include "gw_ruleset.h"
#include "gw_server.h"
#include "httpsrv.h"

/* {"name", "identified_by": "token"|"network"|"none", "network"?} for a
 * request already authenticated as tenant (NULL when auth is off). Caller
 * owns the reference. */
json_t *gw_info_identity(const struct gw_ruleset *rs, const struct gw_tenant *tenant,
                         const struct sg_http_request *req);

void gw_info_whoami(struct gw_server *s, const struct sg_http_request *req,
                    struct sg_http_response *resp);

/* GET /v1/runtimes: per language the executor's listing (interpreter,
 * packages with versions, standard modules), and for each policy the caller
 * may use, the modules of that listing a job may import. */
void gw_info_runtimes(struct gw_server *s, const struct sg_http_request *req,
                      struct sg_http_response *resp);

/* The names of `modules` (a JSON array of strings) that lp lets a job import,
 * as a new array; sep is '.' for Python, '/' for JavaScript. */
json_t *gw_info_importable(const struct sg_lang_policy *lp, json_t *modules, char sep);

#endif
