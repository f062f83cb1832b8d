#include "gw_console.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "sg_random.h"

#define PREFIX "/console"
#define NAME_MAX_LEN 128
#define INDEX "index.html"

struct asset {
    char *name; /* owned */
    char *data; /* owned */
    size_t len;
    const char *type; /* static */
};

struct gw_console {
    struct asset items[GW_CONSOLE_FILES_MAX];
    size_t count;
};

static const struct {
    const char *ext, *type;
} TYPES[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
};

const char *gw_console_type(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(TYPES) / sizeof(TYPES[0]); i++) {
        size_t e = strlen(TYPES[i].ext);
        if (n > e && strcmp(name + n - e, TYPES[i].ext) == 0)
            return TYPES[i].type;
    }
    return NULL;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX_LEN || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
            return false;
    return true;
}

static int load_one(struct gw_console *c, const char *dir, const char *name, struct sg_error *err)
{
    if (c->count == GW_CONSOLE_FILES_MAX)
        return sg_error_set(err, -E2BIG, "console_dir %s: more than %d files", dir,
                            GW_CONSOLE_FILES_MAX);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct asset *a = &c->items[c->count];
    int r = sg_read_file_capped(path, GW_CONSOLE_FILE_MAX, &a->data, &a->len, err);
    if (r < 0)
        return r;
    if (!(a->name = strdup(name))) {
        free(a->data);
        return sg_error_set(err, -ENOMEM, "out of memory");
    }
    a->type = gw_console_type(name);
    c->count++;
    return 0;
}

static const struct asset *find(const struct gw_console *c, const char *name)
{
    for (size_t i = 0; c && i < c->count; i++)
        if (strcmp(c->items[i].name, name) == 0)
            return &c->items[i];
    return NULL;
}

int gw_console_new(const char *dir, struct gw_console **ret, struct sg_error *err)
{
    struct gw_console *c = calloc(1, sizeof(*c));
    if (!c)
        return sg_error_set(err, -ENOMEM, "out of memory");
    int r = 0;
    DIR *d = dir && *dir ? opendir(dir) : NULL;
    if (dir && *dir && !d) {
        r = sg_error_set(err, -errno, "console_dir %s: %s", dir, strerror(errno));
        goto out;
    }
    for (struct dirent *e; d && r == 0 && (e = readdir(d));)
        if (e->d_type == DT_REG && name_ok(e->d_name) && gw_console_type(e->d_name))
            r = load_one(c, dir, e->d_name, err);
    if (r == 0 && d && !find(c, INDEX))
        r = sg_error_set(err, -ENOENT, "console_dir %s: no %s (make console)", dir, INDEX);
out:
    if (d)
        closedir(d);
    if (r < 0) {
        gw_console_free(c);
        return r;
    }
    *ret = c;
    return 0;
}

void gw_console_free(struct gw_console *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->count; i++) {
        free(c->items[i].name);
        free(c->items[i].data);
    }
    free(c);
}

bool gw_console_path(const char *url)
{
    size_t n = strlen(PREFIX);
    return strncmp(url, PREFIX, n) == 0 && (url[n] == '\0' || url[n] == '/');
}

static void security_headers(struct sg_http_response *resp, const char *nonce)
{
    char csp[256];
    if (nonce)
        snprintf(csp, sizeof(csp), GW_CONSOLE_CSP_BASE "style-src 'self' 'nonce-%s'", nonce);
    sg_http_add_header(resp, "Content-Security-Policy", nonce ? csp : GW_CONSOLE_CSP);
    sg_http_add_header(resp, "X-Content-Type-Options", "nosniff");
    sg_http_add_header(resp, "Referrer-Policy", "no-referrer");
}

_Static_assert(sizeof(GW_CONSOLE_NONCE_MARK) == 33, "the mark is as long as a nonce");

/* A copy of a's bytes (NUL-terminated) with each nonce mark replaced by nonce
 * (as long as the mark: 16 random bytes in hex). NULL: no memory. */
static char *body_of(const struct asset *a, const char *nonce)
{
    char *body = malloc(a->len + 1);
    if (!body)
        return NULL;
    memcpy(body, a->data, a->len);
    body[a->len] = '\0';
    size_t ml = strlen(GW_CONSOLE_NONCE_MARK);
    for (char *p = body;
         nonce && (p = memmem(p, a->len - (size_t)(p - body), GW_CONSOLE_NONCE_MARK, ml)); p += ml)
        memcpy(p, nonce, ml);
    return body;
}

void gw_console_handle(const struct gw_console *c, const struct sg_http_request *req,
                       struct sg_http_response *resp)
{
    const char *rest = req->url + strlen(PREFIX);
    const char *name = *rest ? rest + 1 : "";
    const struct asset *a = find(c, *name ? name : INDEX);
    char nonce[33];
    int page = a && strcmp(a->name, INDEX) == 0 && sg_random_hex(nonce, 16) == 0;
    security_headers(resp, page ? nonce : NULL);
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
        sg_http_error(resp, 405, "method_not_allowed", "%s takes GET", PREFIX);
        sg_http_add_header(resp, "Allow", "GET, HEAD");
        return;
    }
    if (*rest == '\0' && c && c->count) {
        sg_http_error(resp, 308, "moved", "the console is at /console/");
        sg_http_add_header(resp, "Location", PREFIX "/");
        return;
    }
    if (!a)
        return sg_http_error(resp, 404, "not_found",
                             c && c->count ? "no such console file"
                                           : "the console is not installed (console_dir)");
    if (strcmp(a->name, INDEX) == 0 && !page)
        return sg_http_error(resp, 503, "server_busy", "no random nonce for the page");
    char *body = body_of(a, page ? nonce : NULL);
    if (!body)
        return sg_http_error(resp, 503, "server_busy", "out of memory");
    free(resp->body);
    resp->body = body;
    resp->body_len = a->len;
    resp->status = 200;
    resp->content_type = a->type;
    sg_http_add_header(resp, "Cache-Control",
                       page ? "no-cache" : "public, max-age=31536000, immutable");
}
