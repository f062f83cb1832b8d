/* gw_overview.h - the warm pools the console's Overview shows
 * (GET /v1/overview, gw_audit_api.h), from the executors' /healthz answers
 * the router's health round keeps (never a request of its own).
 *
 * An executor's answer is bounded and reduced to known fields here, once per
 * health round; a read only copies what the last round kept.
 */
#ifndef SG_GW_OVERVIEW_H
#define SG_GW_OVERVIEW_H

#include <jansson.h>

#define GW_OVERVIEW_FLAVOURS_MAX 32 /* flavours kept per executor */
#define GW_OVERVIEW_NAME_MAX 64     /* longest flavour name kept */

/* The pool figures of one executor's parsed /healthz body (may be NULL):
 *   {"jobs": busy sandboxes, "sessions": {"open","max"} or null,
 *    "flavours": [{"name","size","target","idle","busy","creating","hits",
 *                  "fallbacks","create_ms"}]}
 * Unknown fields are dropped, reals are rounded (create_ms is a moving
 * average), other values and numbers outside 0..2^53 read as 0, longer
 * lists and names are cut. NULL when healthz has no "pool" object. Caller
 * decrefs. */
json_t *gw_overview_pools(const json_t *healthz);

#endif
