/* Fuzz target: the gateway's request parsing - the JSON body of /run,
 * /v1/run, /v1/analyze and a session cell (gw_request.h kinds), and the auth
 * headers.
 *
 * Input layout: byte 0 picks the endpoint kind; then up to the first "\n\n"
 * come header lines ("Authorization: ..." / "X-Sandbox-Token: ..."), the rest
 * is the body. No crash, leak or sanitizer report is the property. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gw_request.h"
#include "gw_tenants.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gw_tenants *tenants;

static const struct gw_caps caps = {
    .max_code_bytes = 4096,
    .max_arguments_bytes = 4096,
    .max_arguments_depth = 8,
    .max_files = 4,
    .max_files_bytes = 4096,
    .max_timeout_ms = 60000,
    .max_memory_mb = 1024,
};

static void load_tenants(void)
{
    static const char doc[] = "{\"tenants\": {\"a\": {\"tokens\": [\"fuzz-token-0123456789\"], "
                              "\"policies\": [\"default\"]}}}";
    if (!tenants && gw_tenants_load_buf(doc, sizeof(doc) - 1, "fuzz", &tenants, NULL) < 0)
        abort();
}

/* Copy the value of header `name` from the header block into out. */
static const char *header(const char *block, size_t len, const char *name, char *out, size_t outsz)
{
    size_t n = strlen(name);
    for (size_t i = 0; i + n < len; i++) {
        if ((i == 0 || block[i - 1] == '\n') && strncmp(block + i, name, n) == 0) {
            size_t j = i + n, k = 0;
            while (j < len && block[j] != '\n' && k + 1 < outsz)
                out[k++] = block[j++];
            out[k] = '\0';
            return out;
        }
    }
    return NULL;
}

static void fuzz_headers(const char *block, size_t len)
{
    char auth[512], tok[512];
    const char *a = header(block, len, "Authorization: ", auth, sizeof(auth));
    const char *x = header(block, len, "X-Sandbox-Token: ", tok, sizeof(tok));
    size_t n = 0;
    const char *t = gw_auth_token(a, x, &n);
    if (t) {
        const struct gw_tenant *ten = gw_tenants_lookup(tenants, t, n);
        if (ten && !gw_tenant_may_use(ten, "default"))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_tenants();
    if (size < 1)
        return 0;
    enum gw_req_kind kind = (enum gw_req_kind)(data[0] % GW_REQ_KIND_COUNT);
    const char *rest = (const char *)data + 1;
    size_t len = size - 1;
    const char *sep = memmem(rest, len, "\n\n", 2);
    size_t hlen = sep ? (size_t)(sep - rest) : 0;
    char *block = malloc(hlen + 1);
    if (!block)
        return 0;
    memcpy(block, rest, hlen);
    block[hlen] = '\0';
    fuzz_headers(block, strnlen(block, hlen));
    free(block);
    const char *body = sep ? sep + 2 : rest;
    size_t blen = sep ? len - hlen - 2 : len;
    struct gw_request req;
    struct gw_req_error err;
    if (gw_request_parse(kind, body, blen, &caps, &req, &err) == 0) {
        if (req.code_len > caps.max_code_bytes || !req.code || req.timeout_ms > caps.max_timeout_ms)
            abort();
        gw_request_free(&req);
    } else if (err.status != 400 && err.status != 413) {
        abort();
    }
    return 0;
}
