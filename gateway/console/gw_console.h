/* gw_console.h - the operator console's assets at /console/ (README, Console).
 *
 * The console is a static page built on the host from pinned npm packages
 * (console/, `make console`) into a directory (console_dir) that this module
 * loads once at start: at most GW_CONSOLE_FILES_MAX regular files whose names
 * are [A-Za-z0-9._-] without a leading dot, each at most GW_CONSOLE_FILE_MAX
 * bytes. Nothing is read from disk per request and nothing is fetched from
 * anywhere at run time.
 *
 * Every answer carries a strict Content-Security-Policy (scripts, styles,
 * images and connections from this origin only, no inline script, no
 * framing), X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer.
 * index.html's policy adds a fresh random nonce for style elements (the
 * editor, CodeMirror, injects its styles as <style> elements with it); the
 * nonce replaces GW_CONSOLE_NONCE_MARK in the page. Scripts never get one.
 * index.html is "no-cache"; the other files have a content hash in their
 * names (the build puts it there) and are cached for a year, immutable.
 * The page itself needs no token; every call it makes is an ordinary API
 * call with the user's token (held in page memory / sessionStorage).
 */
#ifndef SG_GW_CONSOLE_H
#define SG_GW_CONSOLE_H

#include <stdbool.h>

#include "httpsrv.h"
#include "sg_error.h"

#define GW_CONSOLE_FILES_MAX 64
#define GW_CONSOLE_FILE_MAX (8u * 1024u * 1024u)
/* The policy of every answer; index.html's also lets the page's own style
 * elements in by a nonce made per answer (the editor injects its styles). */
#define GW_CONSOLE_CSP_BASE                                                                        \
    "default-src 'none'; script-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "      \
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
#define GW_CONSOLE_CSP GW_CONSOLE_CSP_BASE "style-src 'self'"
/* index.html carries this placeholder where the nonce goes (a meta tag). */
#define GW_CONSOLE_NONCE_MARK "__SANDGATE_CONSOLE_STYLE_NONCE__"

struct gw_console;

/* Load dir's files. dir "" gives a console that answers 404 to everything.
 * A missing index.html, an unreadable file or too many files is an error.
 * Caller frees with gw_console_free(). */
int gw_console_new(const char *dir, struct gw_console **ret, struct sg_error *err);

void gw_console_free(struct gw_console *c);

/* 1 for /console and everything under /console/. */
bool gw_console_path(const char *url);

/* Answer GET/HEAD of a console path: the file, 308 /console -> /console/,
 * 404 for unknown names, 405 for other methods. */
void gw_console_handle(const struct gw_console *c, const struct sg_http_request *req,
                       struct sg_http_response *resp);

/* The content type for a file name (by extension); NULL for one not served. */
const char *gw_console_type(const char *name);

#endif
