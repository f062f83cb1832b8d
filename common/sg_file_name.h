/* sg_file_name.h - the rule for the names of a job's input files, one
 * definition for every C layer that checks them (gateway request validation,
 * executor request validation, the Node.js runner); the Python runner checks
 * the same rule in Python (images/python/runner.py: check_name).
 *
 * A name is 1..SG_FILE_NAME_MAX bytes of [A-Za-z0-9._-], does not start with
 * a dot and has no "..": a plain file directly in the workspace, never a path,
 * a hidden file or something a shell or a path join could reinterpret. The
 * runners also refuse the names they reserve (their main file, artifacts).
 */
#ifndef SG_FILE_NAME_H
#define SG_FILE_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define SG_FILE_NAME_MAX 128
/* For error messages: the rule in words. */
#define SG_FILE_NAME_RULE "[A-Za-z0-9._-], 1 to 128 bytes, no leading dot, no '..'"

/* true when the len bytes at name (which may hold a NUL: then false) follow
 * the rule. */
bool sg_file_name_ok(const char *name, size_t len);

/* true when the len bytes at name are a name the runners write into the
 * workspace themselves (main.py, main.js, artifacts): refused as an input
 * file name for every language, before any job is sent. */
bool sg_file_name_reserved(const char *name, size_t len);

#endif
