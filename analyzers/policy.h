/* policy.h - policies: loading, validation, lookup.
 *
 * A policy is a JSON file (schema in policies/README.md). Loading validates
 * the whole document first: an unknown key, a wrong type or a bad value is an
 * error naming the key path (e.g. "python.imports.mode: expected \"allow\" or
 * \"deny\""), and a policy never loads half-way. A loaded policy is immutable
 * and may be shared by any number of threads.
 */
#ifndef SG_POLICY_H
#define SG_POLICY_H

#include <jansson.h>
#include <stddef.h>

#include "sg_error.h"

#define SG_POLICY_FILE_MAX (1024 * 1024) /* bytes of one policy file */
#define SG_POLICY_NAME_MAX 64            /* [a-z0-9_-]+ */
#define SG_POLICY_SET_MAX 64             /* policies in one directory */

/* Caps on a policy's contents (validated on load). */
#define SG_POLICY_LIST_MAX 1024        /* entries in one list */
#define SG_POLICY_ITEM_MAX 128         /* bytes of one module/name entry */
#define SG_POLICY_DESCRIPTION_MAX 1024 /* bytes of "description" */
/* "limits": defaults and accepted ranges. */
#define SG_LIMIT_SOURCE_BYTES_DEFAULT 262144
#define SG_LIMIT_SOURCE_BYTES_MIN 1
#define SG_LIMIT_SOURCE_BYTES_MAX (16 * 1024 * 1024)
#define SG_LIMIT_DEPTH_DEFAULT 256
#define SG_LIMIT_DEPTH_MIN 8
#define SG_LIMIT_DEPTH_MAX 4096
#define SG_LIMIT_NODES_DEFAULT 200000
#define SG_LIMIT_NODES_MIN 16
#define SG_LIMIT_NODES_MAX 10000000

/* A sorted set of strings, searched with sg_strset_has(). */
struct sg_strset {
    char **items; /* owned, sorted with strcmp */
    size_t count;
};

/* Returns 1 when s is in the set. */
int sg_strset_has(const struct sg_strset *set, const char *s);

/* Returns 1 when s or one of its parents is in the set: with sep '.', an
 * entry "os" matches "os", "os.path" and "os.path.join", never "osx". Module
 * lists use it ('.' for Python, '/' for JavaScript). */
int sg_strset_has_prefix(const struct sg_strset *set, const char *s, char sep);

enum sg_import_mode { SG_IMPORTS_ALLOW = 0, SG_IMPORTS_DENY = 1 };

/* "runtime": what the runner enforces inside the sandbox, before and while
 * the job's code runs (policies/README.md, "Run-time rules"). Absent keys
 * take the closed default (everything below denied / enforced). */
#define SG_RUNTIME_PATH_MAX 256 /* bytes of one read_paths entry */
enum sg_rt_files { SG_RT_FILES_SANDBOX = 0, SG_RT_FILES_ANY = 1 };
struct sg_runtime_policy {
    int processes;               /* the job may create processes (seccomp + hook) */
    int network;                 /* the job may open sockets other than AF_UNIX */
    int enforce_imports;         /* the imports section holds at run time too */
    enum sg_rt_files files;      /* Python: sandbox = write workspace and /tmp only */
    struct sg_strset read_paths; /* Python: more absolute prefixes readable in sandbox mode */
    int native_code;             /* Python: ctypes and friends */
    int unpickle;                /* Python: pickle.find_class, marshal from the job */
    int reflection;              /* Python: frames, code objects, exec/compile from the job */
    struct sg_strset process_properties; /* JavaScript: what the job's `process` shows */
};

struct sg_lang_policy {
    int enabled; /* 0: every submission is rejected (language.disabled) */
    enum sg_import_mode import_mode;
    struct sg_strset modules; /* allow-list or deny-list; "os" covers "os.path" */
    /* Modules only a job with network may import: rejected as network.disabled
     * otherwise; empty in the networked variant (sg_policy.network), where
     * they are allowed (README, "Network"). */
    struct sg_strset network_modules;
    /* Names only a job with network may use (JavaScript's fetch): forbidden
     * otherwise and reported as network.disabled; empty in the networked
     * variant, where they are no longer forbidden. */
    struct sg_strset network_names;
    struct sg_strset forbidden_names;      /* builtins/globals forbidden wherever referenced */
    struct sg_strset forbidden_calls;      /* resolved dotted names, e.g. "os.system" */
    struct sg_strset forbidden_attributes; /* attribute names forbidden on any object */
    int deny_dunder_attributes;            /* x.__foo__ is a violation unless in allowed_dunders */
    struct sg_strset allowed_dunders;
    int deny_private_attributes;       /* x._foo is a violation unless x is the job's own object */
    struct sg_strset allowed_privates; /* _foo names allowed on any object (namedtuple's _asdict) */
    struct sg_strset capability_attributes; /* names denied on any receiver not the job's own */
    int deny_dynamic_imports;               /* import by a name that is not a constant */
    int deny_dynamic_attributes; /* getattr(x, name)/obj[expr] whose name is not constant */
    size_t max_source_bytes;
    size_t max_depth;
    size_t max_nodes;
    struct sg_runtime_policy runtime;
};

struct sg_policy {
    char *name;        /* owned */
    char *description; /* owned, may be "" */
    char sha256[65];   /* hex digest of the file's bytes */
    struct sg_lang_policy python;
    struct sg_lang_policy javascript;
    json_t *doc; /* owned reference: the validated document (parents merged in) */
    /* owned: the same policy as a job with network sees it (network_modules
     * importable, network_names not forbidden, runtime.network true); its
     * sha256 identifies that variant (verdict cache), its name is this one's.
     * NULL inside the variant itself. */
    struct sg_policy *network;
};

/* 1 when a job may import module under lp (the language enabled, and the
 * module allow-listed, or not deny-listed): the same test as the analyzer's
 * import rule. sep is '.' for Python, '/' for JavaScript. */
int sg_lang_policy_allows_import(const struct sg_lang_policy *lp, const char *module, char sep);

/* Parse and validate a policy from bytes. origin names the source in errors.
 * Caller frees *ret_policy with sg_policy_free(). */
int sg_policy_load_buf(const char *buf, size_t len, const char *origin,
                       struct sg_policy **ret_policy, struct sg_error *err);

/* Load an already parsed document (borrowed) whose identity is sha256_hex;
 * validated exactly as sg_policy_load_buf() validates bytes. */
int sg_policy_load_doc(json_t *root, const char *origin, const char *sha256_hex,
                       struct sg_policy **ret_policy, struct sg_error *err);

/* The run-time section of lp as the job carries it to the executor (schema:
 * executors/PROTOCOL.md, "runtime"). js selects the language's keys. Caller
 * decrefs; NULL on out of memory. */
struct json_t;
struct json_t *sg_policy_runtime_json(const struct sg_lang_policy *lp, int js);

/* Read (at most SG_POLICY_FILE_MAX bytes) and load a policy file. */
int sg_policy_load_file(const char *path, struct sg_policy **ret_policy, struct sg_error *err);

void sg_policy_free(struct sg_policy *policy);

/* All *.json files of a directory; all or nothing (one bad file fails the
 * whole set, naming the file). Names must be unique. */
struct sg_policy_set {
    struct sg_policy **items; /* owned */
    size_t count;
};

/* "extends": "<parent name>" makes a policy its parent plus additions
 * (policies/README.md, "Inheritance"); parents are resolved within the
 * directory, at most SG_POLICY_EXTENDS_MAX levels deep, cycles refused. */
#define SG_POLICY_EXTENDS_MAX 8

int sg_policy_set_load_dir(const char *dir, struct sg_policy_set **ret_set, struct sg_error *err);

/* Load one policy file against a loaded set: a file that extends a parent
 * finds it in `set` (may be NULL: then "extends" is an error). */
int sg_policy_load_file_with(const char *path, const struct sg_policy_set *set,
                             struct sg_policy **ret_policy, struct sg_error *err);

/* Borrowed pointer valid while the set lives; NULL when absent. */
const struct sg_policy *sg_policy_set_find(const struct sg_policy_set *set, const char *name);

void sg_policy_set_free(struct sg_policy_set *set);

#endif
