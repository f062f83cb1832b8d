/* sg_token.h - the executor secret's file, read the same way by the gateway
 * (which sends it) and the executors (which check it): the first line, with
 * surrounding spaces, tabs and the line end removed, 1..SG_TOKEN_MAX-1
 * printable ASCII bytes (0x21..0x7e). Whatever one daemon accepts, the other
 * reads as the same token. No heap memory.
 */
#ifndef SG_TOKEN_H
#define SG_TOKEN_H

#include "sg_error.h"

#define SG_TOKEN_MAX 256
#define SG_TOKEN_FILE_MAX 4096 /* bytes read from the file at most */

/* Read path's token into ret_token. 0 or negative errno with err naming the
 * file (never quoting the secret). */
int sg_token_file_read(const char *path, char ret_token[SG_TOKEN_MAX], struct sg_error *err);

#endif
