/* gw_installed.h - what the executors' images install, for admission: a
 * job importing a module no image of its language installs is refused before
 * it runs (import.not-installed, gw_admit.h). The listings come from the
 * executors' GET /v1/runtime (executors/PROTOCOL.md) through the router;
 * GET /v1/runtimes (gw_info.h) reads the same listings' modules with the
 * helpers below.
 */
#ifndef SG_GW_INSTALLED_H
#define SG_GW_INSTALLED_H

#include <jansson.h>
#include <stddef.h>

#include "gw_router.h"

#define GW_INSTALLED_TTL_MS 30000u  /* how long a language's module list is reused */
#define GW_INSTALLED_RETRY_MS 5000u /* after a listing could not be had */

/* The first of a job's imports (imports: the analysis' comma-separated
 * top-level names) that neither the language's image nor any package set of
 * its executors installs, copied to ret (retsz bytes): 1; 0 when every one is
 * installed or the listing is unknown (an executor without one, or none
 * reachable: the job runs as before). Names that are not packages are never
 * reported: those starting with '_' or '.' and `node:` built-ins. A job's
 * input files never count: they are data, not modules (the runners keep the
 * workspace off the import path). The executors' listings (GET /v1/runtime) are
 * fetched at most once per GW_INSTALLED_TTL_MS per language and shared
 * by every job (thread-safe). */
int gw_installed_missing_import(struct gw_router *router, int lang, const char *imports, char *ret,
                                size_t retsz);

/* Every module name of a listing (an executor's GET /v1/runtime answer,
 * borrowed): the standard ones, each package's, then each package set's;
 * a new array. */
json_t *gw_installed_listing_modules(json_t *listing);

/* The modules of a list of packages (borrowed), each once, appended to all. */
void gw_installed_package_modules(json_t *all, json_t *packages);

#endif
