#include "gw_mcp_calls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gw_mcp_calls_init(struct gw_mcp_calls *t)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
}

void gw_mcp_calls_destroy(struct gw_mcp_calls *t)
{
    pthread_mutex_destroy(&t->lock);
}

/* The request id as its key (MCP ids are strings or integers: 1 and "1" are
 * different requests). -1 when it does not fit. */
static int key_of(json_t *id, char key[GW_MCP_CALL_KEY_MAX])
{
    if (!json_is_string(id) && !json_is_integer(id))
        return -1;
    char *text = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    int r = text && strlen(text) < GW_MCP_CALL_KEY_MAX ? 0 : -1;
    if (r == 0)
        snprintf(key, GW_MCP_CALL_KEY_MAX, "%s", text);
    free(text);
    return r;
}

int gw_mcp_calls_begin(struct gw_mcp_calls *t, const char *session, json_t *id,
                       enum gw_mcp_call_kind kind, const char *target)
{
    char key[GW_MCP_CALL_KEY_MAX];
    if (!session || !target || strlen(session) > GW_MCP_SESSION_ID_LEN ||
        strlen(target) >= GW_MCP_CALL_TARGET_MAX || key_of(id, key) < 0)
        return -1;
    int slot = -1;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; slot < 0 && i < GW_MCP_CALLS_MAX; i++)
        if (!t->slot[i].used)
            slot = i;
    if (slot >= 0) {
        struct gw_mcp_call *c = &t->slot[slot];
        c->used = true;
        c->kind = kind;
        snprintf(c->session, sizeof(c->session), "%s", session);
        snprintf(c->key, sizeof(c->key), "%s", key);
        snprintf(c->target, sizeof(c->target), "%s", target);
    }
    pthread_mutex_unlock(&t->lock);
    return slot;
}

void gw_mcp_calls_end(struct gw_mcp_calls *t, int slot)
{
    if (slot < 0 || slot >= GW_MCP_CALLS_MAX)
        return;
    pthread_mutex_lock(&t->lock);
    t->slot[slot].used = false;
    pthread_mutex_unlock(&t->lock);
}

int gw_mcp_calls_find(struct gw_mcp_calls *t, const char *session, json_t *id,
                      struct gw_mcp_call *ret)
{
    char key[GW_MCP_CALL_KEY_MAX];
    if (!session || key_of(id, key) < 0)
        return -ENOENT;
    int r = -ENOENT;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; r < 0 && i < GW_MCP_CALLS_MAX; i++) {
        const struct gw_mcp_call *c = &t->slot[i];
        if (c->used && strcmp(c->session, session) == 0 && strcmp(c->key, key) == 0) {
            *ret = *c;
            r = 0;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}
