/* flavour.h - pool flavours: which modules a warm sandbox pre-imports, and
 * which flavour a job should take.
 *
 * A flavour is a named set of modules the runner imports before the job
 * arrives (SANDGATE_PREIMPORT in the container's environment). The executor
 * keeps one warm pool per flavour. A job's imports (sent by the gateway from
 * its analysis) pick the cheapest flavour that pre-imports every "heavy"
 * module the job uses (heavy: pre-imported by some flavour); when that pool
 * is empty, a lighter flavour that carries nothing the job does not use
 * serves it instead (the job imports the rest itself).
 *
 * A flavour may also be a package set an operator declared (a JSON file in flavours/,
 * docs/images.md): it then runs on its own image and installs modules the
 * language's image does not have (`provides`). Such a module is a hard
 * requirement: a job importing it may only take a flavour that installs it
 * (no fall-back to a lighter one), and a job whose required modules no single
 * flavour installs gets no flavour at all (flavour_choice.n == 0).
 *
 * Everything here is pure (no I/O, no locks) and holds no heap memory, so the
 * choice and the sizing can be tested on their own (tests/unit/test_flavour.c).
 */
#ifndef SG_EXEC_FLAVOUR_H
#define SG_EXEC_FLAVOUR_H

#include <stdbool.h>
#include <stddef.h>

#include "sg_error.h"

#define FLAVOUR_MAX 16u
#define FLAVOUR_IMAGE_MAX 127u   /* bytes of a set's image name */
#define FLAVOUR_PROVIDES_MAX 64u /* modules one set's image adds */
#define FLAVOUR_NAME_MAX 31u     /* bytes of a flavour name */
#define FLAVOUR_MODULES_MAX 16u  /* modules one flavour pre-imports */
#define FLAVOUR_MODULE_MAX 63u   /* bytes of one module name */
#define FLAVOUR_SPEC_MAX 2048u   /* one --flavour value or the whole env list */
#define FLAVOUR_SIZE_MAX 64u     /* = EXEC_POOL_SIZE_MAX */
/* Memory assumed for a flavour's sandbox until one was measured: runsc and
 * an idle interpreter, plus a share per pre-imported module. */
#define FLAVOUR_MEM_BASE_MB 20u
#define FLAVOUR_MEM_PER_MODULE_MB 30u

struct flavour {
    char name[FLAVOUR_NAME_MAX + 1];
    char modules[FLAVOUR_MODULES_MAX][FLAVOUR_MODULE_MAX + 1];
    unsigned n_modules;
    unsigned size; /* most warm sandboxes kept (the budget may keep fewer) */
    bool size_set; /* size came from the spec, not from a default */
    /* A declared package set: its image ("" = the executor's image), the
     * top-level modules that image adds, and the memory one warm sandbox is
     * declared to take (0: flavour_mem_estimate's guess until measured). */
    char image[FLAVOUR_IMAGE_MAX + 1];
    char provides[FLAVOUR_PROVIDES_MAX][FLAVOUR_MODULE_MAX + 1];
    unsigned n_provides;
    unsigned mem_mb;
};

/* Flavours in cost order after flavour_set_finish(): fewer modules first. */
struct flavour_set {
    struct flavour f[FLAVOUR_MAX];
    unsigned n;
};

/* The order in which a job tries the flavours: order[0] is its ideal one. */
struct flavour_choice {
    unsigned order[FLAVOUR_MAX];
    unsigned n;
    unsigned heavy; /* how many of the job's imports some flavour pre-imports */
    /* n == 0 only when the job needs modules no one flavour installs: the
     * first of them (borrowed from the imports) */
    const char *missing;
};

/* Parse one flavour: "name=mod1,mod2:size", "name=mod1", "name:size", "name".
 * Names match [A-Za-z0-9_-]{1,31}; modules are dotted Python names or Node
 * specifiers ([A-Za-z0-9_.@/-], 1..63 bytes), at most FLAVOUR_MODULES_MAX;
 * size 0..FLAVOUR_SIZE_MAX. 0 or -EINVAL with a message. */
int flavour_parse(const char *spec, struct flavour *ret, struct sg_error *err);

/* Append the flavours of a list separated by ';' or white space (the
 * environment form). 0 or -EINVAL (-E2BIG: more than FLAVOUR_MAX). */
int flavour_set_add_list(struct flavour_set *s, const char *list, struct sg_error *err);

/* Append one flavour spec. 0, -EINVAL or -E2BIG. */
int flavour_set_add(struct flavour_set *s, const char *spec, struct sg_error *err);

/* The built-in flavours: python plain, numpy, numpy+pandas,
 * numpy+pandas+matplotlib; nodejs plain only (Node's start-up is cheap). */
void flavour_set_defaults(struct flavour_set *s, bool python);

/* Add a module the flavour's image installs (a package set's). 0 or -EINVAL
 * (bad name, duplicate, more than FLAVOUR_PROVIDES_MAX). */
int flavour_add_provides(struct flavour *f, const char *module, struct sg_error *err);

/* Validate and order: unique names, no two flavours with the same modules on
 * the same image, sizes not given take plain_size for a flavour without modules and 1
 * otherwise; then sorted by module count (stable). 0 or -EINVAL. */
int flavour_set_finish(struct flavour_set *s, unsigned plain_size, struct sg_error *err);

/* Whether f pre-imports the top-level module top ("pandas" for
 * "pandas.io"). */
bool flavour_provides(const struct flavour *f, const char *top);

/* The comma-separated module list for SANDGATE_PREIMPORT (into out). */
void flavour_preimport(const struct flavour *f, char *out, size_t outsz);

/* Whether f's image installs the top-level module top (flavour.provides). */
bool flavour_installs(const struct flavour *f, const char *top);

/* Pure: the flavours a job importing imports[0..n) should try, in order.
 * Import names may be dotted; only their top-level part counts. Only
 * flavours installing every import some flavour installs are tried; none:
 * ret->n == 0 and ret->missing names a module. */
void flavour_choose(const struct flavour_set *s, const char *const *imports, size_t n,
                    struct flavour_choice *ret);

/* Pure: the flavour named name (a job's "flavour", RAGFlow's base_image)
 * first in the choice, the others after it; an unknown name or NULL leaves
 * the choice as it is, and so does a flavour outside the choice that is on
 * another image than the job's ideal flavour or lacks one of its pre-imported
 * modules (or a job no flavour can serve). */
void flavour_prefer(const struct flavour_set *s, const char *name, struct flavour_choice *c);

/* Pure: the first flavour of the choice with idle[i] > 0, or -1. */
int flavour_pick(const struct flavour_choice *c, const unsigned *idle);

/* Memory of one warm sandbox of f before any was measured: the declared
 * mem_mb, else an estimate. */
unsigned flavour_mem_estimate(const struct flavour *f);

/* Pure: pool targets within a memory budget. want[i] sandboxes are wanted
 * for flavour i, each costing mem_mb[i]; ret[i] <= want[i] and
 * sum(ret[i] * mem_mb[i]) <= budget_mb. Filled one sandbox per flavour per
 * round, cheapest flavour first, so every flavour that fits gets its first
 * sandbox before any gets a second. budget_mb 0: no budget (ret = want). */
void flavour_targets(const struct flavour_set *s, const unsigned *want, const unsigned *mem_mb,
                     unsigned budget_mb, unsigned *ret);

/* Pure: adaptive want for one flavour: enough sandboxes to serve `arrivals`
 * jobs seen in the last window_ms during one refill (refill_ms), at least
 * one, at most size. */
unsigned flavour_want(unsigned size, unsigned arrivals, unsigned window_ms, unsigned refill_ms);

#endif
