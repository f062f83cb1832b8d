/* pkgset.h - package sets an operator declared (JSON files in flavours/, built by
 * images/build-sets.py into one image per set): the manifest each set image
 * records, read by the executor at start, and the flavours they become.
 *
 * A set image holds /opt/sandgate/set.json, written at build time from what
 * was installed: the set's name and language, the modules its warm sandboxes
 * pre-import, its pool size and declared memory, and every package it added
 * with its version, where it came from and the top-level modules it provides.
 * The executor (--set IMAGE, SANDGATE_SETS) copies the file out of each image
 * as it copies the runtime listing (runtime_info.h), checks it (untrusted:
 * bounded sizes, counts, names) and adds one flavour running on that image.
 * The modules a set installs that the language's image lacks become hard
 * requirements of the routing (flavour.h); GET /v1/runtime lists the sets
 * under "sets".
 */
#ifndef SG_EXEC_PKGSET_H
#define SG_EXEC_PKGSET_H

#include <jansson.h>
#include <stddef.h>

#include "docker.h"
#include "exec_config.h"
#include "flavour.h"
#include "sg_error.h"

#define PKGSET_PATH "/opt/sandgate/set.json"
#define PKGSET_MAX (256u * 1024u)   /* the manifest file */
#define PKGSET_PACKAGES_MAX 512u    /* packages one set lists */
#define PKGSET_TEXT_MAX 512u        /* bytes of one name, version or source */
#define PKGSET_MEMORY_MB_MAX 65536u /* a set's declared memory per sandbox */

/* Check the manifest text json[0..len) of the set in image for language
 * ("python" or "nodejs") and fill *ret: name, pre-imported modules, size (when
 * given), memory, image, and as provides every module of its packages that
 * base_listing (the language image's runtime listing, JSON; NULL when
 * unknown) does not list. *ret_doc is the manifest with "image" added; caller
 * frees with json_decref(). 0 or -EPROTO with a message. */
int pkgset_parse(const char *json, size_t len, const char *language, const char *image,
                 const char *base_listing, struct flavour *ret, json_t **ret_doc,
                 struct sg_error *err);

/* Read every set image of cfg->sets (runtime_info_copy), add its flavour to
 * cfg->flavours (a set named as a flavour already there, from --flavour,
 * replaces it; two images declaring one name are an error) and finish them
 * (flavour_set_finish); when *listing is not
 * NULL, replace it with the listing plus "sets" (caller frees with free()).
 * Nothing to do without sets. 0 or a negative errno (a set that cannot be
 * read stops the executor: its jobs would have nowhere to run). */
int pkgset_load_all(struct docker_client *dc, struct exec_config *cfg, char **listing,
                    struct sg_error *err);

#endif
