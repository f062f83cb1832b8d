/* Fuzz policy loading: any bytes either load into a policy whose invariants
 * hold or fail with an error message; nothing leaks either way. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(const struct sg_strset *s)
{
    for (size_t i = 0; i < s->count; i++) {
        size_t n = strlen(s->items[i]);
        if (n == 0 || n > SG_POLICY_ITEM_MAX || (i && strcmp(s->items[i - 1], s->items[i]) >= 0))
            abort();
        if (!sg_strset_has(s, s->items[i]) || !sg_strset_has_prefix(s, s->items[i], '.'))
            abort();
    }
}

static void check_lang(const struct sg_lang_policy *lp)
{
    check_set(&lp->modules);
    check_set(&lp->forbidden_names);
    check_set(&lp->forbidden_calls);
    check_set(&lp->forbidden_attributes);
    check_set(&lp->allowed_dunders);
    if (lp->max_source_bytes < SG_LIMIT_SOURCE_BYTES_MIN ||
        lp->max_source_bytes > SG_LIMIT_SOURCE_BYTES_MAX || lp->max_depth < SG_LIMIT_DEPTH_MIN ||
        lp->max_depth > SG_LIMIT_DEPTH_MAX || lp->max_nodes < SG_LIMIT_NODES_MIN ||
        lp->max_nodes > SG_LIMIT_NODES_MAX)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sg_policy *p = NULL;
    struct sg_error err = {0};
    int r = sg_policy_load_buf((const char *)data, size, "fuzz", &p, &err);
    if (r == 0) {
        size_t n = strlen(p->name);
        if (n == 0 || n > SG_POLICY_NAME_MAX || strlen(p->sha256) != 64)
            abort();
        check_lang(&p->python);
        check_lang(&p->javascript);
    } else if (p || err.msg[0] == '\0' || strchr(err.msg, '\n') ||
               u8_check((const uint8_t *)err.msg, strlen(err.msg))) {
        abort(); /* errors are one line of valid UTF-8 */
    }
    sg_policy_free(p);
    return 0;
}
