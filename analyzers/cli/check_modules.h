/* check_modules.h - sandgate-check --list-modules: the modules a policy lets
 * a job import, per language, and, given image runtime listings (the
 * /opt/sandgate/runtime.json of a sandbox image, or an executor's listing as
 * GET /v1/runtime serves it, with its package sets) or package set manifests
 * (a set image's /opt/sandgate/set.json), which installed modules are
 * importable under it and which are not, set by set. */
#ifndef SG_CHECK_MODULES_H
#define SG_CHECK_MODULES_H

#include <stdio.h>

#include "check_report.h"
#include "policy.h"

#define CHECK_LISTING_MAX (1024 * 1024) /* bytes of one runtime listing file */
#define CHECK_LISTINGS_MAX 8            /* --runtime files per run */

/* Write the listing for policy (and each file of listings[0..n)) to out as
 * text or JSON. Returns 0, or a negative code after printing why to stderr. */
int check_list_modules(FILE *out, enum check_format format, const struct sg_policy *policy,
                       char *const *listings, int n);

#endif
