/* Fuzz the network allow-list parser: any text either parses into an entry
 * whose canonical form parses back to the same entry (which covers itself
 * and matches nothing it does not cover), or fails with a one-line message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sg_netallow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Field by field: the struct has padding, which assignment need not copy. */
static int same(const struct sg_netallow_entry *a, const struct sg_netallow_entry *b)
{
    return a->kind == b->kind && a->port == b->port && strcmp(a->host, b->host) == 0 &&
           (a->kind != SG_NETALLOW_CIDR ||
            (a->net.family == b->net.family && a->net.prefix == b->net.prefix &&
             memcmp(a->net.addr, b->net.addr, sizeof(a->net.addr)) == 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[SG_NETALLOW_TEXT_MAX + 16];
    if (size >= sizeof(text))
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct sg_netallow_entry e, again;
    struct sg_error err = {0};
    if (sg_netallow_parse(text, &e, &err) == 0) {
        char canon[SG_NETALLOW_TEXT_MAX];
        sg_netallow_format(&e, canon, sizeof(canon));
        if (sg_netallow_parse(canon, &again, NULL) < 0 || !same(&e, &again) ||
            !sg_netallow_covers(&e, &again))
            abort();
        if (e.kind == SG_NETALLOW_HOST && !sg_netallow_matches(&e, e.host, e.port ? e.port : 443))
            abort(); /* an exact name matches itself */
    } else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
        abort();
    }
    return 0;
}
