/* runsc_info.h - which gVisor the sandboxes run on: runsc's version and
 * platform, read once at start, and the minimum version sandgate accepts.
 *
 * The version comes from `runsc --version` of the binary dockerd registered
 * for the runtime (GET /info: Runtimes[name].path) or of --runsc-path; the
 * platform from that registration's runtimeArgs (--platform=...), "default"
 * when none is given (runsc's own default). An executor with a runsc older
 * than RUNSC_INFO_MIN_DATE, or whose version cannot be read, refuses to start
 * unless the operator accepts it (--runsc-accept-old): then every /healthz
 * answer carries the warning. /healthz, /metrics (an info gauge) and every
 * /v1/exec answer ("sandbox") report the facts.
 */
#ifndef SG_RUNSC_INFO_H
#define SG_RUNSC_INFO_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "docker.h"
#include "exec_config.h"
#include "sg_error.h"

/* The oldest runsc sandgate runs on: bookworm-backports' 0.0~20240729 (the
 * systrap platform; images/host-runsc.sh installs it and has the same number). */
#define RUNSC_INFO_MIN_DATE 20240729u
#define RUNSC_INFO_VERSION_MAX 64
#define RUNSC_INFO_PLATFORM_MAX 32
#define RUNSC_INFO_WARNING_MAX 320
#define RUNSC_INFO_OUTPUT_MAX 4096 /* bytes of `runsc --version` read */
#define RUNSC_INFO_TIMEOUT_MS 5000 /* for `runsc --version` to exit */

struct runsc_info {
    bool gvisor;                            /* false: --insecure-runtime, nothing read */
    char path[PATH_MAX];                    /* the binary that was asked */
    char version[RUNSC_INFO_VERSION_MAX];   /* "0.0~20240729.0"; "" unknown */
    unsigned date;                          /* 20240729; 0 unknown */
    char platform[RUNSC_INFO_PLATFORM_MAX]; /* "systrap", "ptrace", "kvm", "default" */
    char warning[RUNSC_INFO_WARNING_MAX];   /* non-empty: an accepted old/unknown runsc */
};

/* Pure: the version word and its date out of `runsc --version` output
 * ("runsc version 0.0~20240729.0", "runsc version release-20240729.0").
 * Returns 0, or -EINVAL when the first line is not that shape. */
int runsc_info_parse_version(const char *text, size_t len, char ret_version[RUNSC_INFO_VERSION_MAX],
                             unsigned *ret_date);

/* Pure: runtime name's path and platform out of a GET /info reply. Returns 0,
 * -ENOENT when the runtime is not registered, -EPROTO on a malformed reply.
 * ret_path may be left empty (a runtime without a path). */
int runsc_info_parse_runtime(const char *body, size_t len, const char *name,
                             char ret_path[PATH_MAX], char ret_platform[RUNSC_INFO_PLATFORM_MAX]);

/* Run `path --version` (bounded in time and bytes) and parse it. */
int runsc_info_read_version(const char *path, struct runsc_info *ret, struct sg_error *err);

/* Pure: refuse (-EPERM, with the fix in err) a runsc older than the minimum or
 * of unknown version, unless accept_old: then ret->warning says it. */
int runsc_info_check(struct runsc_info *ri, bool accept_old, struct sg_error *err);

/* The whole start-up step. dc may be NULL (before dockerd is asked: only
 * --runsc-path can be read, the platform stays empty); called again with dc,
 * it fills what is missing from dockerd's registration. */
int runsc_info_load(struct docker_client *dc, const struct exec_config *cfg, struct runsc_info *ri,
                    struct sg_error *err);

/* {"runtime", "runsc_version", "platform"} for answers; new reference. */
json_t *runsc_info_json(const struct runsc_info *ri, const char *runtime);

#endif
