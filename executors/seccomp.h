/* seccomp.h - the optional seccomp profile and the start-up probe proving it
 * is enforced.
 *
 * gVisor ignores a container's seccomp profile unless runsc runs with
 * --oci-seccomp, and says nothing. So before serving, the executor launches
 * one probe sandbox with the configured profile plus a rule that makes
 * mkdir/mkdirat fail with EPERM, runs `mkdir` in it, and refuses to start
 * unless the call was denied.
 */
#ifndef SG_EXEC_SECCOMP_H
#define SG_EXEC_SECCOMP_H

#include <stddef.h>

#include "exec_config.h"
#include "docker.h"
#include "sg_error.h"

#define SECCOMP_PROFILE_MAX (1u * 1024u * 1024u)
#define SECCOMP_PROBE_TIMEOUT_MS 30000u
#define SECCOMP_PROBE_DIR "/tmp/sandgate-seccomp-probe"

/* Read and check a Docker seccomp profile (a JSON object with a
 * defaultAction string); *ret_json is its compact form, caller frees. */
int seccomp_load(const char *path, char **ret_json, struct sg_error *err);

/* Pure: the profile with mkdir/mkdirat removed from every rule and a rule
 * added that fails them with EPERM. Caller frees *ret_json. */
int seccomp_probe_profile(const char *profile_json, char **ret_json, struct sg_error *err);

/* Pure: whether the probe's result proves enforcement (non-zero exit and
 * EPERM reported). */
int seccomp_probe_denied(int exit_code, const char *output);

/* Launch the probe sandbox (cfg's settings, probe_json as its profile) and
 * check. 0 when enforced; -EPERM with an explanation when the profile was
 * not enforced; other errors when the probe could not run. */
int seccomp_probe(struct docker_client *dc, const struct exec_config *cfg, const char *probe_json,
                  struct sg_error *err);

#endif
