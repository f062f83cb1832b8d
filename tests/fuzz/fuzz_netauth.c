/* Fuzz the trusted-network parser and lookup: any text either parses into a
 * network whose canonical form parses back to itself, or fails with a
 * one-line message; a lookup of any peer string never crashes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gw_netauth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[128];
    if (size >= sizeof(text))
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct sg_cidr c, again;
    struct sg_error err = {0};
    if (sg_cidr_parse(text, &c, &err) == 0) {
        char canon[SG_CIDR_TEXT_MAX];
        sg_cidr_format(&c, canon, sizeof(canon));
        if (sg_cidr_parse(canon, &again, NULL) < 0 || memcmp(&c, &again, sizeof(c)) != 0 ||
            !sg_cidr_overlap(&c, &again))
            abort();
        struct gw_netauth na = {0};
        json_t *arr = json_pack("[s]", text);
        if (gw_netauth_add_json(&na, 0, arr, "fuzz", NULL) < 0)
            abort();
        json_decref(arr);
        int host = c.prefix == (c.family == AF_INET ? 32u : 128u);
        if (host && gw_netauth_lookup(&na, text, NULL) != 0)
            abort(); /* a host network holds its own address */
        if (!host && gw_netauth_lookup(&na, text, NULL) != -1)
            abort(); /* a peer is one address, never a network */
        gw_netauth_clear(&na);
    } else if (err.msg[0] == '\0' || strchr(err.msg, '\n')) {
        abort();
    }
    return 0;
}
