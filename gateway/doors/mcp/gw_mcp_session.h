/* gw_mcp_session.h - the MCP sessions the gateway has issued.
 *
 * A session is what `initialize` starts: an id (128 random bits, as hex) the
 * client sends back in Mcp-Session-Id, the tenant it belongs to and the
 * protocol version agreed. It holds no job state (sessions with sandboxes
 * are another feature); it exists so the transport can tell a client whose
 * session is gone to initialise again (404). The table is bounded and
 * shared fairly: a tenant holds at most `per_tenant` sessions, and past that
 * (or when the table of `max` is full) its own least recently used session
 * is dropped (its client gets 404 and re-initialises); one tenant's
 * `initialize` calls never evict another tenant's session. When the table is
 * full of other tenants' sessions, opening one fails (-ENOSPC) until one
 * expires: a session idle longer than `idle_ms` is gone. Thread-safe.
 */
#ifndef SG_GW_MCP_SESSION_H
#define SG_GW_MCP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#define GW_MCP_SESSION_ID_BYTES 16 /* random bytes in an id (hex: twice as many chars) */
#define GW_MCP_SESSION_ID_LEN (2 * GW_MCP_SESSION_ID_BYTES)
#define GW_MCP_VERSION_MAX 16          /* "2025-06-18" and a NUL, with room */
#define GW_MCP_SESSIONS_MAX 1024       /* sessions held at once */
#define GW_MCP_SESSIONS_PER_TENANT 128 /* of them, one tenant's (with auth off: all clients') */
#define GW_MCP_SESSION_IDLE_MS (30ull * 60 * 1000)

struct gw_mcp_sessions;

/* A table of at most max sessions, per_tenant (1 or more; at most max) of
 * them one tenant's, idle at most idle_ms. NULL on out of memory or a 0. */
struct gw_mcp_sessions *gw_mcp_sessions_new_capped(size_t max, size_t per_tenant, uint64_t idle_ms);

/* gw_mcp_sessions_new_capped() with GW_MCP_SESSIONS_PER_TENANT. */
struct gw_mcp_sessions *gw_mcp_sessions_new(size_t max, uint64_t idle_ms);

/* NULL is a no-op. */
void gw_mcp_sessions_free(struct gw_mcp_sessions *s);

/* Start a session for tenant (NULL: auth off) speaking version; writes its
 * id (GW_MCP_SESSION_ID_LEN hex chars and a NUL). 0, -ENOSPC when the table
 * is full of other tenants' sessions, or -errno when no random id could be
 * made. */
int gw_mcp_session_open(struct gw_mcp_sessions *s, const char *tenant, const char *version,
                        uint64_t now_ns, char id[GW_MCP_SESSION_ID_LEN + 1]);

/* The session id names, if it is live and belongs to tenant: marks it used
 * at now_ns and copies its version out. -ENOENT otherwise (unknown, expired,
 * or another tenant's: indistinguishable to the caller on purpose). */
int gw_mcp_session_touch(struct gw_mcp_sessions *s, const char *id, const char *tenant,
                         uint64_t now_ns, char version[GW_MCP_VERSION_MAX]);

/* End the session id names (same ownership rule as touch). 0 or -ENOENT. */
int gw_mcp_session_close(struct gw_mcp_sessions *s, const char *id, const char *tenant,
                         uint64_t now_ns);

/* Live sessions now (expired ones are not counted). */
size_t gw_mcp_sessions_count(struct gw_mcp_sessions *s, uint64_t now_ns);

#endif
