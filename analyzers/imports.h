/* imports.h - the modules a program imports, as the analysis saw them.
 *
 * Each language checker records the top-level name of every module it checks
 * ("pandas" for "pandas.io.json", "@scope/pkg" for "@scope/pkg/sub", "fs" for
 * "node:fs": the language decides what is top-level), each name once, in
 * order of first appearance, joined by ',' in text. Only names of
 * [A-Za-z0-9_.@/-] up to SG_IMPORT_NAME_MAX bytes are kept; the others, and
 * those past SG_IMPORTS_MAX names or SG_IMPORTS_TEXT_MAX bytes, are counted in
 * dropped. The gateway sends the list to the executor, whose warm pool
 * flavours it chooses between (executors/PROTOCOL.md, `imports`): a lost name
 * only costs speed, never safety.
 *
 * Fixed size and no heap: it lives in struct sg_analysis_stats, which the
 * verdict cache copies by value.
 */
#ifndef SG_IMPORTS_H
#define SG_IMPORTS_H

#include <stddef.h>

#define SG_IMPORTS_TEXT_MAX 512
#define SG_IMPORT_NAME_MAX 63
#define SG_IMPORTS_MAX 64 /* = the executor's cap on /v1/exec imports */

struct sg_imports {
    char text[SG_IMPORTS_TEXT_MAX];
    unsigned count, dropped;
};

/* Record the top-level module name top[0..len) in im. No-op when im is NULL
 * or len is 0. */
void sg_imports_add(struct sg_imports *im, const char *top, size_t len);

#endif
