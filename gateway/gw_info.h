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

#define GW_INFO_INSTALLED_TTL_MS 30000u  /* how long a language's module list is reused */
#define GW_INFO_INSTALLED_RETRY_MS 5000u /* after a listing could not be had */

/* The first of a job's imports (imports: the analysis' comma-separated
 * top-level names) that neither the language's image nor any package set of
 * its executors installs, copied to ret (retsz bytes): 1; 0 when every one is
 * installed or the listing is unknown (an executor without one, or none
 * reachable: the job runs as before). Names that are not packages are never
 * reported: those starting with '_' or '.' and `node:` built-ins. A job's
 * input files never count: they are data, not modules (the runners keep the
 * workspace off the import path). The executors' listings (GET /v1/runtime) are
 * fetched at most once per GW_INFO_INSTALLED_TTL_MS per language and shared
 * by every job (thread-safe). */
int gw_info_missing_import(struct gw_router *router, int lang, const char *imports, char *ret,
                           size_t retsz);

/* The names of `modules` (a JSON array of strings) that lp lets a job import,
 * as a new array; sep is '.' for Python, '/' for JavaScript. */
json_t *gw_info_importable(const struct sg_lang_policy *lp, json_t *modules, char sep);

#endif
