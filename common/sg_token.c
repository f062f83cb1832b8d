/* sg_token.c - the executor secret's file (sg_token.h). */
#include "sg_token.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

int sg_token_file_read(const char *path, char ret_token[SG_TOKEN_MAX], struct sg_error *err)
{
    char *data = NULL;
    size_t len = 0;
    int r = sg_read_file_capped(path, SG_TOKEN_FILE_MAX, &data, &len, err);
    if (r < 0)
        return r;
    char *s = data, *e = data + strcspn(data, "\n");
    while (s < e && blank(*s))
        s++;
    while (e > s && blank(e[-1]))
        e--;
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= SG_TOKEN_MAX) {
        r = sg_error_set(err, -EINVAL, "token in %s must be 1..%d bytes on its first line", path,
                         SG_TOKEN_MAX - 1);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e) {
            r = sg_error_set(err, -EINVAL, "token in %s has non-printable bytes", path);
            goto out;
        }
    memcpy(ret_token, s, n);
    ret_token[n] = '\0';
out:
    explicit_bzero(data, len);
    free(data);
    return r;
}
