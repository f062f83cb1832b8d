/* Unit tests for trusted source networks: CIDR parsing (IPv4, IPv6, mapped),
 * overlap, lookup of a peer address, and their place in the tokens file
 * (a tenant with networks only, overlap refused naming both, token wins). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "gw_netauth.h"
#include "gw_tenants.h"

#define TOK_A "alpha-token-0123456789"

static struct sg_cidr cidr(const char *s)
{
    struct sg_cidr c;
    struct sg_error err = {0};
    cr_assert_eq(sg_cidr_parse(s, &c, &err), 0, "%s: %s", s, err.msg);
    return c;
}

static void assert_canon(const char *in, const char *want)
{
    struct sg_cidr c = cidr(in);
    char out[SG_CIDR_TEXT_MAX];
    sg_cidr_format(&c, out, sizeof(out));
    cr_assert_str_eq(out, want, "%s", in);
}

Test(sg_cidr, parses_ipv4_ipv6_bare_and_mapped)
{
    assert_canon("172.28.0.0/16", "172.28.0.0/16");
    assert_canon("127.0.0.1", "127.0.0.1/32");
    assert_canon("10.1.2.3/32", "10.1.2.3/32");
    assert_canon("fd00:1::/64", "fd00:1::/64");
    assert_canon("::1", "::1/128");
    assert_canon("::ffff:192.168.0.0/112", "192.168.0.0/16");
    assert_canon("::ffff:10.0.0.7", "10.0.0.7/32");
    cr_assert_eq(cidr("10.0.0.0/8").family, AF_INET);
    cr_assert_eq(cidr("fe80::/10").family, AF_INET6);
}

Test(sg_cidr, refuses_malformed_and_dangerous_networks)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"", "expected"},
        {"10.0.0.0/33", "prefix length"},
        {"::/129", "prefix length"},
        {"10.0.0.0/", "prefix length"},
        {"10.0.0.0/+8", "prefix length"},
        {"10.0.0.0/ 8", "expected an address"},
        {"10.0.0.0/0008", "prefix length"},
        {"10.0.0.1/8", "bits set"},
        {"0.0.0.0/0", "every address"},
        {"::/0", "every address"},
        {"::ffff:0.0.0.0/95", "IPv4-mapped"},
        {"10.0.0", "not an IPv4"},
        {"example.com/24", "not an IPv4"},
        {"10.0.0.0/8/8", "prefix length"},
        {"1.2.3.4 ", "expected an address"},
        {"10.0.0.0/8\n", "expected an address"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sg_cidr c;
        struct sg_error err = {0};
        cr_assert_lt(sg_cidr_parse(cases[i].text, &c, &err), 0, "'%s' parsed", cases[i].text);
        cr_assert(strstr(err.msg, cases[i].needle), "'%s': '%s' lacks '%s'", cases[i].text, err.msg,
                  cases[i].needle);
    }
}

Test(sg_cidr, overlap_by_the_shorter_prefix)
{
    struct sg_cidr a = cidr("172.28.0.0/16"), b = cidr("172.28.5.0/24"), c = cidr("172.29.0.0/16");
    struct sg_cidr d = cidr("172.28.255.255"), e = cidr("fd00::/8"), f = cidr("fd12::1");
    cr_assert(sg_cidr_overlap(&a, &b));
    cr_assert(sg_cidr_overlap(&b, &a));
    cr_assert(!sg_cidr_overlap(&a, &c));
    cr_assert(sg_cidr_overlap(&a, &d));
    cr_assert(!sg_cidr_overlap(&b, &d));
    cr_assert(sg_cidr_overlap(&e, &f));
    cr_assert(!sg_cidr_overlap(&a, &e), "families never overlap");
    struct sg_cidr g = cidr("10.0.0.0/9"), h = cidr("10.128.0.0/9");
    cr_assert(!sg_cidr_overlap(&g, &h), "a partial byte is compared by its bits");
}

static struct gw_tenants *load(const char *json, struct sg_error *err)
{
    struct gw_tenants *t = NULL;
    return gw_tenants_load_buf(json, strlen(json), "tokens.json", &t, err) == 0 ? t : NULL;
}

Test(gw_netauth, tenant_by_network_and_token_wins)
{
    struct sg_error err = {0};
    struct gw_tenants *t =
        load("{\"tenants\": {"
             "\"ragflow\": {\"networks\": [\"172.28.0.0/16\", \"fd00:28::/64\"]},"
             "\"default\": {\"tokens\": [\"" TOK_A "\"], "
             "\"networks\": [\"172.18.0.1/32\"]}}}",
             &err);
    cr_assert_not_null(t, "%s", err.msg);
    const struct sg_cidr *net = NULL;
    const struct gw_tenant *r = gw_tenants_lookup_peer(t, "172.28.3.4", &net);
    cr_assert_not_null(r);
    cr_assert_str_eq(r->name, "ragflow");
    cr_assert_eq(r->network_count, 2);
    char txt[SG_CIDR_TEXT_MAX];
    sg_cidr_format(net, txt, sizeof(txt));
    cr_assert_str_eq(txt, "172.28.0.0/16");
    cr_assert_str_eq(gw_tenants_lookup_peer(t, "fd00:28::9", NULL)->name, "ragflow");
    cr_assert_str_eq(gw_tenants_lookup_peer(t, "::ffff:172.28.0.9", NULL)->name, "ragflow",
                     "an IPv4-mapped peer is its IPv4 address");
    cr_assert_str_eq(gw_tenants_lookup_peer(t, "172.18.0.1", NULL)->name, "default");
    cr_assert_null(gw_tenants_lookup_peer(t, "172.18.0.2", NULL));
    cr_assert_null(gw_tenants_lookup_peer(t, "127.0.0.1", NULL));
    cr_assert_null(gw_tenants_lookup_peer(t, "unknown", NULL));
    cr_assert_null(gw_tenants_lookup_peer(t, NULL, NULL));
    cr_assert_null(gw_tenants_lookup_peer(t, "172.28.0.0/16", NULL), "a peer is one address");
    /* the token still identifies its tenant, whatever the network */
    cr_assert_str_eq(gw_tenants_lookup(t, TOK_A, strlen(TOK_A))->name, "default");
    cr_assert_null(gw_tenants_lookup_peer(NULL, "172.28.3.4", NULL));
    gw_tenants_free(t);
}

Test(gw_netauth, invalid_networks_are_refused_naming_tenants)
{
    static const struct {
        const char *json, *needle;
    } cases[] = {
        {"{\"tenants\": {\"a\": {\"networks\": [\"10.0.0.0/8\"]}, \"b\": {\"networks\": "
         "[\"10.20.0.0/16\"]}}}",
         "tenants a (10.0.0.0/8) and b (10.20.0.0/16) overlap"},
        {"{\"tenants\": {\"a\": {\"networks\": [\"10.0.0.0/8\"]}, \"b\": {\"tokens\": [\"" TOK_A
         "\"], \"networks\": [\"192.168.0.0/16\", \"::ffff:10.9.9.9\"]}}}",
         "overlap"},
        {"{\"tenants\": {\"a\": {\"networks\": []}}}", "no tokens and no networks"},
        {"{\"tenants\": {\"a\": {\"networks\": \"10.0.0.0/8\"}}}", "tenants.a.networks: expected"},
        {"{\"tenants\": {\"a\": {\"networks\": [8]}}}", "networks[0]: expected a string"},
        {"{\"tenants\": {\"a\": {\"networks\": [\"10.0.0.0/8\", \"10.0.0.1/8\"]}}}",
         "networks[1]: '10.0.0.1/8' has bits set"},
        {"{\"tenants\": {\"a\": {\"networks\": [\"0.0.0.0/0\"]}}}", "every address"},
        {"{\"tenants\": {\"a\": {\"networks\": [\"1.0.0.0/8\",\"2.0.0.0/8\",\"3.0.0.0/8\","
         "\"4.0.0.0/8\",\"5.0.0.0/8\",\"6.0.0.0/8\",\"7.0.0.0/8\",\"8.0.0.0/8\",\"9.0.0.0/8\","
         "\"10.0.0.0/8\",\"11.0.0.0/8\",\"12.0.0.0/8\",\"13.0.0.0/8\",\"14.0.0.0/8\","
         "\"15.0.0.0/8\",\"16.0.0.0/8\",\"17.0.0.0/8\"]}}}",
         "at most 16"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sg_error err = {0};
        struct gw_tenants *t = load(cases[i].json, &err);
        cr_assert_null(t, "case %zu loaded", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].needle);
    }
}

Test(gw_netauth, same_tenant_may_repeat_itself)
{
    struct sg_error err = {0};
    struct gw_tenants *t = load("{\"tenants\": {\"a\": {\"networks\": [\"10.0.0.0/8\", "
                                "\"10.1.0.0/16\"]}, \"b\": {\"networks\": [\"11.0.0.0/8\"]}}}",
                                &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_str_eq(gw_tenants_lookup_peer(t, "10.1.2.3", NULL)->name, "a");
    cr_assert_str_eq(gw_tenants_lookup_peer(t, "11.255.255.255", NULL)->name, "b");
    cr_assert_null(gw_tenants_lookup_peer(t, "12.0.0.0", NULL));
    gw_tenants_free(t);
}
