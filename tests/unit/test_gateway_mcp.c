/* Unit tests for the MCP endpoint's pure parts: JSON-RPC framing
 * (gw_rpc_parse) and the bounded session table (ids, tenants, idle expiry,
 * least-recently-used eviction at the cap). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "gw_mcp.h"
#include "gw_mcp_calls.h"
#include "gw_mcp_rpc.h"
#include "gw_mcp_session.h"

static int parse(const char *s, struct gw_rpc_batch *b, struct gw_rpc_error *e)
{
    return gw_rpc_parse(s, strlen(s), b, e);
}

Test(mcp_rpc, classifies_messages)
{
    struct gw_rpc_batch b;
    struct gw_rpc_error e;
    cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &b, &e), 0);
    cr_assert_eq(b.count, 1);
    cr_assert_eq(b.is_batch, 0);
    cr_assert_eq(b.msgs[0].kind, GW_RPC_REQUEST);
    cr_assert_str_eq(b.msgs[0].method, "ping");
    gw_rpc_batch_free(&b);
    cr_assert_eq(parse("[{\"jsonrpc\":\"2.0\",\"method\":\"n\"},{\"jsonrpc\":\"2.0\",\"id\":\"x\","
                       "\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"m\"},"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":[]},"
                       "{\"id\":4,\"method\":\"m\"},{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":1,"
                       "\"error\":{}},\"str\"]",
                       &b, &e),
                 0);
    cr_assert_eq(b.count, 7);
    enum gw_rpc_kind want[] = {GW_RPC_NOTIFICATION, GW_RPC_RESPONSE, GW_RPC_INVALID, GW_RPC_INVALID,
                               GW_RPC_INVALID,      GW_RPC_INVALID,  GW_RPC_INVALID};
    for (size_t i = 0; i < 7; i++)
        cr_expect_eq(b.msgs[i].kind, want[i], "message %zu", i);
    cr_expect_null(b.msgs[2].id, "a fractional id is not usable");
    cr_expect_eq(json_integer_value(b.msgs[3].id), 3, "an invalid message keeps a good id");
    gw_rpc_batch_free(&b);
}

Test(mcp_rpc, refuses_whole_bodies)
{
    static const struct {
        const char *body;
        int code;
    } bad[] = {{"", GW_RPC_PARSE_ERROR},
               {"{", GW_RPC_PARSE_ERROR},
               {"{\"a\":1,\"a\":2}", GW_RPC_PARSE_ERROR},
               {"\"\\u0000\"", GW_RPC_PARSE_ERROR},
               {"[]", GW_RPC_INVALID_REQUEST},
               {"7", GW_RPC_INVALID_REQUEST},
               {"null", GW_RPC_INVALID_REQUEST}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gw_rpc_batch b;
        struct gw_rpc_error e = {0};
        cr_expect_eq(gw_rpc_parse(bad[i].body, strlen(bad[i].body), &b, &e), -EINVAL, "%s",
                     bad[i].body);
        cr_expect_eq(e.code, bad[i].code, "%s: %d", bad[i].body, e.code);
        cr_expect_null(b.root);
    }
    char big[8 * (GW_RPC_BATCH_MAX + 1) + 2] = "[";
    for (int i = 0; i <= GW_RPC_BATCH_MAX; i++)
        strcat(big, i ? ",{}" : "{}");
    strcat(big, "]");
    struct gw_rpc_batch b;
    struct gw_rpc_error e;
    cr_expect_eq(gw_rpc_parse(big, strlen(big), &b, &e), -EINVAL);
    cr_expect_eq(e.code, GW_RPC_INVALID_REQUEST);
}

Test(mcp_rpc, long_method_and_id_are_invalid)
{
    char body[1024];
    char name[GW_RPC_METHOD_MAX + 2];
    memset(name, 'm', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", name);
    struct gw_rpc_batch b;
    cr_assert_eq(gw_rpc_parse(body, strlen(body), &b, NULL), 0);
    cr_expect_eq(b.msgs[0].kind, GW_RPC_INVALID);
    gw_rpc_batch_free(&b);
}

Test(mcp_session, ids_tenants_and_close)
{
    struct gw_mcp_sessions *s = gw_mcp_sessions_new(4, 1000);
    cr_assert_not_null(s);
    char a[GW_MCP_SESSION_ID_LEN + 1], b[GW_MCP_SESSION_ID_LEN + 1];
    char v[GW_MCP_VERSION_MAX];
    cr_assert_eq(gw_mcp_session_open(s, "t1", "2025-03-26", 1, a), 0);
    cr_assert_eq(gw_mcp_session_open(s, NULL, "2025-06-18", 1, b), 0);
    cr_assert_eq(strlen(a), 32);
    cr_assert_eq(strspn(a, "0123456789abcdef"), 32);
    cr_assert_str_neq(a, b);
    cr_assert_eq(gw_mcp_session_touch(s, a, "t1", 2, v), 0);
    cr_assert_str_eq(v, "2025-03-26");
    cr_assert_eq(gw_mcp_session_touch(s, a, "t2", 2, v), -ENOENT, "another tenant's");
    cr_assert_eq(gw_mcp_session_touch(s, a, NULL, 2, v), -ENOENT);
    cr_assert_eq(gw_mcp_session_touch(s, b, NULL, 2, v), 0);
    cr_assert_eq(gw_mcp_session_touch(s, "abc", NULL, 2, v), -ENOENT);
    cr_assert_eq(gw_mcp_session_touch(s, NULL, NULL, 2, v), -ENOENT);
    cr_assert_eq(gw_mcp_session_close(s, a, "t2", 3), -ENOENT);
    cr_assert_eq(gw_mcp_session_close(s, a, "t1", 3), 0);
    cr_assert_eq(gw_mcp_session_touch(s, a, "t1", 4, v), -ENOENT);
    cr_assert_eq(gw_mcp_sessions_count(s, 4), 1);
    gw_mcp_sessions_free(s);
}

Test(mcp_session, idle_sessions_expire)
{
    struct gw_mcp_sessions *s = gw_mcp_sessions_new(4, 10); /* 10 ms */
    char a[GW_MCP_SESSION_ID_LEN + 1], v[GW_MCP_VERSION_MAX];
    cr_assert_eq(gw_mcp_session_open(s, "t", "2025-06-18", 0, a), 0);
    cr_assert_eq(gw_mcp_session_touch(s, a, "t", 9000000, v), 0, "used at 9 ms");
    cr_assert_eq(gw_mcp_session_touch(s, a, "t", 18000000, v), 0, "9 ms idle is fine");
    cr_assert_eq(gw_mcp_session_touch(s, a, "t", 29000000, v), -ENOENT, "11 ms idle is gone");
    cr_assert_eq(gw_mcp_sessions_count(s, 29000000), 0);
    gw_mcp_sessions_free(s);
}

Test(mcp_session, the_cap_evicts_the_least_recently_used)
{
    struct gw_mcp_sessions *s = gw_mcp_sessions_new(3, 1000000);
    char id[4][GW_MCP_SESSION_ID_LEN + 1], v[GW_MCP_VERSION_MAX];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(gw_mcp_session_open(s, "t", "2025-06-18", 10 + (uint64_t)i, id[i]), 0);
    cr_assert_eq(gw_mcp_session_touch(s, id[0], "t", 20, v), 0); /* 1 is now the oldest */
    cr_assert_eq(gw_mcp_session_open(s, "t", "2025-06-18", 21, id[3]), 0);
    cr_assert_eq(gw_mcp_sessions_count(s, 21), 3);
    cr_expect_eq(gw_mcp_session_touch(s, id[1], "t", 22, v), -ENOENT);
    cr_expect_eq(gw_mcp_session_touch(s, id[0], "t", 22, v), 0);
    cr_expect_eq(gw_mcp_session_touch(s, id[2], "t", 22, v), 0);
    cr_expect_eq(gw_mcp_session_touch(s, id[3], "t", 22, v), 0);
    gw_mcp_sessions_free(s);
}

/* One tenant's initialize calls evict only its own sessions (1,100 of them
 * evicted another tenant's); a full table refuses a new tenant rather than
 * evict another's. */
Test(mcp_session, eviction_stays_within_the_tenant)
{
    struct gw_mcp_sessions *s = gw_mcp_sessions_new_capped(5, 2, 1000000);
    char a[GW_MCP_SESSION_ID_LEN + 1], b[GW_MCP_SESSION_ID_LEN + 1], c[GW_MCP_SESSION_ID_LEN + 1];
    char id[GW_MCP_SESSION_ID_LEN + 1], v[GW_MCP_VERSION_MAX];
    cr_assert_eq(gw_mcp_session_open(s, "victim", "2025-06-18", 1, a), 0);
    cr_assert_eq(gw_mcp_session_open(s, "other", "2025-06-18", 2, b), 0);
    for (uint64_t t = 10; t < 1110; t++)
        cr_assert_eq(gw_mcp_session_open(s, "flood", "2025-06-18", t, id), 0);
    cr_expect_eq(gw_mcp_session_touch(s, a, "victim", 2000, v), 0, "another tenant evicted it");
    cr_expect_eq(gw_mcp_session_touch(s, b, "other", 2000, v), 0);
    cr_expect_eq(gw_mcp_session_touch(s, id, "flood", 2000, v), 0, "the newest is kept");
    cr_expect_eq(gw_mcp_sessions_count(s, 2000), 4, "the flood holds its cap of 2, no more");
    /* so a new tenant still finds room */
    cr_assert_eq(gw_mcp_session_open(s, "late", "2025-06-18", 2001, c), 0);
    /* full now: a tenant under its cap replaces its own least recently used
     * session, never another tenant's */
    cr_assert_eq(gw_mcp_session_open(s, "other", "2025-06-18", 2002, c), 0);
    cr_expect_eq(gw_mcp_session_touch(s, b, "other", 2003, v), -ENOENT);
    cr_expect_eq(gw_mcp_session_touch(s, c, "other", 2003, v), 0);
    cr_expect_eq(gw_mcp_session_touch(s, id, "flood", 2003, v), 0);
    cr_expect_eq(gw_mcp_session_touch(s, a, "victim", 2003, v), 0);
    /* a tenant with no session in a full table waits (no id is handed out) */
    cr_expect_eq(gw_mcp_session_open(s, "later", "2025-06-18", 2004, id), -ENOSPC);
    cr_expect_eq(id[0], '\0');
    gw_mcp_sessions_free(s);
}

Test(mcp, versions)
{
    cr_expect(gw_mcp_version_supported("2025-06-18"));
    cr_expect(gw_mcp_version_supported("2025-03-26"));
    cr_expect_not(gw_mcp_version_supported("2024-11-05"));
    cr_expect_not(gw_mcp_version_supported(NULL));
}

Test(mcp_calls, found_only_by_its_session_and_id_until_it_ends)
{
    struct gw_mcp_calls t;
    gw_mcp_calls_init(&t);
    json_t *one = json_integer(1), *one_s = json_string("1"), *other = json_real(1.0);
    int a = gw_mcp_calls_begin(&t, "sess-a", one, GW_MCP_CALL_JOB, "0123456789abcdef");
    cr_assert_geq(a, 0);
    struct gw_mcp_call c;
    cr_assert_eq(gw_mcp_calls_find(&t, "sess-a", one, &c), 0);
    cr_assert_eq(c.kind, GW_MCP_CALL_JOB);
    cr_assert_str_eq(c.target, "0123456789abcdef");
    cr_assert_eq(gw_mcp_calls_find(&t, "sess-b", one, &c), -ENOENT, "another session's call");
    cr_assert_eq(gw_mcp_calls_find(&t, "sess-a", one_s, &c), -ENOENT, "\"1\" is not 1");
    cr_assert_eq(gw_mcp_calls_find(&t, "sess-a", other, &c), -ENOENT, "not an MCP id");
    cr_assert_eq(gw_mcp_calls_begin(&t, "sess-a", other, GW_MCP_CALL_JOB, "x"), -1);
    cr_assert_eq(gw_mcp_calls_find(&t, NULL, one, &c), -ENOENT, "no session");
    gw_mcp_calls_end(&t, a);
    cr_assert_eq(gw_mcp_calls_find(&t, "sess-a", one, &c), -ENOENT, "ended");
    gw_mcp_calls_end(&t, -1); /* a call that could not be noted */
    json_decref(one);
    json_decref(one_s);
    json_decref(other);
    gw_mcp_calls_destroy(&t);
}

Test(mcp_calls, the_table_is_bounded_and_long_ids_are_not_noted)
{
    struct gw_mcp_calls t;
    gw_mcp_calls_init(&t);
    char big[GW_MCP_CALL_KEY_MAX + 8];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    json_t *long_id = json_string(big);
    cr_assert_eq(gw_mcp_calls_begin(&t, "s", long_id, GW_MCP_CALL_SESSION, "py-x"), -1);
    json_decref(long_id);
    for (int i = 0; i < GW_MCP_CALLS_MAX; i++) {
        json_t *id = json_integer(i);
        cr_assert_eq(gw_mcp_calls_begin(&t, "s", id, GW_MCP_CALL_SESSION, "py-x"), i);
        json_decref(id);
    }
    json_t *id = json_integer(-1);
    cr_assert_eq(gw_mcp_calls_begin(&t, "s", id, GW_MCP_CALL_SESSION, "py-x"), -1, "full");
    gw_mcp_calls_end(&t, 3);
    cr_assert_eq(gw_mcp_calls_begin(&t, "s", id, GW_MCP_CALL_SESSION, "py-x"), 3);
    json_decref(id);
    gw_mcp_calls_destroy(&t);
}
