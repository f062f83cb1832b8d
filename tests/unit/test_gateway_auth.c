/* Unit tests for tokens/tenants (parsing, constant-time lookup, header
 * extraction) and the per-tenant token-bucket rate limiter. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_ratelimit.h"
#include "gw_tenants.h"
#include "sha256.h"

#define TOK_A "alpha-token-0123456789"
#define TOK_B "bravo-token-0123456789"

static struct gw_tenants *load(const char *json, struct sg_error *err)
{
    struct gw_tenants *t = NULL;
    int r = gw_tenants_load_buf(json, strlen(json), "tokens.json", &t, err);
    return r == 0 ? t : NULL;
}

Test(gw_tenants, lookup_by_plain_and_hashed_token)
{
    char hex[65];
    sg_sha256_hex(TOK_B, strlen(TOK_B), hex);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"policies\": [\"default\","
             "\"strict\"], \"default_policy\": \"strict\", \"rate_limit\": {\"per_second\": 5},"
             "\"max_limits\": {\"timeout_ms\": 2000, \"memory_mb\": 64}, \"max_sessions\": 3},"
             "\"b\": {\"token_sha256\": [\"%s\"]}}}",
             hex);
    struct sg_error err = {0};
    struct gw_tenants *t = load(json, &err);
    cr_assert_not_null(t, "%s", err.msg);
    const struct gw_tenant *a = gw_tenants_lookup(t, TOK_A, strlen(TOK_A));
    cr_assert_not_null(a);
    cr_assert_str_eq(a->name, "a");
    cr_assert_str_eq(a->default_policy, "strict");
    cr_assert_eq(a->rate, 5);
    cr_assert_eq(a->burst, 5, "burst defaults to the rate");
    cr_assert_eq(a->max_timeout_ms, 2000);
    cr_assert_eq(a->max_memory_mb, 64);
    cr_assert_eq(a->max_sessions, 3);
    cr_assert(gw_tenant_may_use(a, "strict"));
    cr_assert(!gw_tenant_may_use(a, "permissive"));
    const struct gw_tenant *b = gw_tenants_lookup(t, TOK_B, strlen(TOK_B));
    cr_assert_not_null(b);
    cr_assert_str_eq(b->name, "b");
    cr_assert_eq(b->max_sessions, -1, "not given: the configured max_sessions");
    cr_assert_null(gw_tenants_lookup(t, TOK_A, strlen(TOK_A) - 1), "prefix must not match");
    cr_assert_null(gw_tenants_lookup(t, "alpha-token-0123456780", 22));
    cr_assert_null(gw_tenants_lookup(t, "short", 5));
    cr_assert_null(gw_tenants_lookup(NULL, TOK_A, strlen(TOK_A)));
    gw_tenants_free(t);
}

Test(gw_tenants, invalid_documents_are_refused_with_the_path)
{
    struct sg_error err = {0};
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"tenants\": {\"a\": {\"tokens\": [\"short\"]}}}", "tokens[0]"},
        {"{\"tenants\": {\"a\": {}}}", "no tokens"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"colour\": 1}}}", "colour"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"]}, \"b\": {\"tokens\": [\"" TOK_A
         "\"]}}}",
         "share a token"},
        {"{\"tenants\": {\"a b\": {\"tokens\": [\"" TOK_A "\"]}}}", "tenant name"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"policies\": [\"x\"], "
         "\"default_policy\": \"y\"}}}",
         "not in policies"},
        {"{\"tenants\": {\"a\": {\"token_sha256\": [\"abc\"]}}}", "64 hex"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"rate_limit\": {\"per_second\": "
         "-1}}}}",
         "per_second"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"max_sessions\": -1}}}",
         "max_sessions"},
        {"{\"tenants\": {\"a\": {\"tokens\": [\"" TOK_A "\"], \"max_sessions\": \"2\"}}}",
         "max_sessions"},
        {"{\"users\": {}}", "expected"},
        {"{\"tenants\": ", "line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&err, 0, sizeof(err));
        cr_assert_null(load(cases[i].json, &err), "case %zu loaded", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].needle);
    }
}

Test(gw_tenants, token_from_headers)
{
    size_t n = 0;
    const char *t = gw_auth_token("Bearer  abc ", NULL, &n);
    cr_assert_not_null(t);
    cr_assert_eq(n, 3);
    cr_assert_eq(strncmp(t, "abc", 3), 0);
    t = gw_auth_token("bearer xyz", "other", &n);
    cr_assert_eq(strncmp(t, "xyz", n), 0, "Authorization wins");
    t = gw_auth_token(NULL, "sandbox-tok", &n);
    cr_assert_eq(n, 11);
    t = gw_auth_token("Basic dXNlcg==", "fallback", &n);
    cr_assert_eq(strncmp(t, "fallback", n), 0, "non-Bearer Authorization is ignored");
    cr_assert_null(gw_auth_token(NULL, NULL, &n));
    cr_assert_null(gw_auth_token("Bearer   ", NULL, &n));
    cr_assert_null(gw_auth_token(NULL, "", &n));
}

#define SEC 1000000000ull

Test(gw_ratelimit, burst_then_refill_with_retry_after)
{
    struct gw_ratelimit *rl = gw_ratelimit_new();
    uint64_t retry = 0, now = 5 * SEC;
    for (int i = 0; i < 3; i++)
        cr_assert(gw_ratelimit_take(rl, "t", 2, 3, now, &retry), "burst request %d", i);
    cr_assert_not(gw_ratelimit_take(rl, "t", 2, 3, now, &retry));
    cr_assert(retry >= 500 && retry <= 501, "retry after %llu ms", (unsigned long long)retry);
    cr_assert_not(gw_ratelimit_take(rl, "t", 2, 3, now + SEC / 4, &retry));
    cr_assert(gw_ratelimit_take(rl, "t", 2, 3, now + SEC / 2, &retry), "refilled after 0.5 s");
    cr_assert(gw_ratelimit_take(rl, "other", 2, 3, now, &retry), "tenants are independent");
    gw_ratelimit_free(rl);
}

Test(gw_ratelimit, zero_rate_is_unlimited_and_lower_burst_applies)
{
    struct gw_ratelimit *rl = gw_ratelimit_new();
    uint64_t retry = 0;
    for (int i = 0; i < 1000; i++)
        cr_assert(gw_ratelimit_take(rl, "u", 0, 0, SEC, &retry));
    for (int i = 0; i < 10; i++)
        cr_assert(gw_ratelimit_take(rl, "v", 1, 100, SEC, &retry));
    /* A reload lowers the burst to 1: the stored tokens are clipped at once. */
    cr_assert(gw_ratelimit_take(rl, "v", 1, 1, SEC, &retry));
    cr_assert_not(gw_ratelimit_take(rl, "v", 1, 1, SEC, &retry));
    gw_ratelimit_free(rl);
}

Test(gw_ratelimit, table_overflow_shares_one_bucket)
{
    struct gw_ratelimit *rl = gw_ratelimit_new();
    uint64_t retry = 0;
    char name[32];
    for (int i = 0; i < GW_RATELIMIT_SLOTS; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        cr_assert(gw_ratelimit_take(rl, name, 1, 1, SEC, &retry));
    }
    cr_assert(gw_ratelimit_take(rl, "late-1", 1, 1, SEC, &retry));
    cr_assert_not(gw_ratelimit_take(rl, "late-2", 1, 1, SEC, &retry),
                  "names past the table share the overflow bucket");
    gw_ratelimit_free(rl);
}
