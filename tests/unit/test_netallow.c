/* Network allow-list entries (common/sg_netallow): syntax, canonical form,
 * the subset check behind 403 network_not_allowed, and the match the egress
 * proxy's helper makes. */
#include <criterion/criterion.h>
#include <string.h>

#include "sg_netallow.h"

static struct sg_netallow_entry entry(const char *s)
{
    struct sg_netallow_entry e;
    struct sg_error err = {0};
    cr_assert_eq(sg_netallow_parse(s, &e, &err), 0, "%s: %s", s, err.msg);
    return e;
}

static void canon(const char *in, const char *want)
{
    struct sg_netallow_entry e = entry(in);
    char out[SG_NETALLOW_TEXT_MAX];
    sg_netallow_format(&e, out, sizeof(out));
    cr_assert_str_eq(out, want, "%s", in);
}

Test(sg_netallow, parses_names_wildcards_networks_and_ports)
{
    canon("api.example.com", "api.example.com");
    canon("API.Example.COM:8443", "api.example.com:8443");
    canon("*.corp.internal:443", "*.corp.internal:443");
    canon("*", "*");
    canon("*:8080", "*:8080");
    canon("10.20.0.0/16:8080", "10.20.0.0/16:8080");
    canon("10.1.2.3", "10.1.2.3/32");
    canon("[2001:db8::/32]:443", "[2001:db8::/32]:443");
    canon("[::1]", "[::1/128]");
    canon("origin", "origin");
    canon("a_b-c.d", "a_b-c.d");
}

Test(sg_netallow, refuses_malformed_entries_with_a_message)
{
    static const char *const bad[] = {
        "",
        " api.example.com",
        "api example.com",
        "api.example.com:",
        "api.example.com:0",
        "api.example.com:65536",
        "api.example.com:80:80",
        "api.example.com:+80",
        "*.com:x",
        "*.com",
        "*.",
        "**.example.com",
        "a.*.example.com",
        "exa*mple.com",
        "-a.example.com",
        "a-.example.com",
        "a..b",
        ".a.b",
        "a.b.",
        "10.0.0.0/33",
        "10.0.0.1/8",
        "0.0.0.0/0",
        "2001:db8::1",
        "[10.0.0.1]",
        "[2001:db8::1",
        "[2001:db8::1]x",
        "example.com/8",
        "[*]",
        "caf\xc3\xa9.example.com",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example.com"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct sg_netallow_entry e;
        struct sg_error err = {0};
        cr_expect_lt(sg_netallow_parse(bad[i], &e, &err), 0, "accepted \"%s\"", bad[i]);
        cr_expect(err.msg[0] != '\0', "no message for \"%s\"", bad[i]);
    }
    struct sg_netallow_entry e;
    cr_expect_lt(sg_netallow_parse(NULL, &e, NULL), 0);
    char longname[SG_NETALLOW_TEXT_MAX + 8];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cr_expect_lt(sg_netallow_parse(longname, &e, NULL), 0);
}

static int covers(const char *outer, const char *inner)
{
    struct sg_netallow_entry o = entry(outer), i = entry(inner);
    return sg_netallow_covers(&o, &i);
}

Test(sg_netallow, subset_by_host_network_and_port)
{
    cr_expect(covers("api.example.com", "API.example.com"));
    cr_expect(covers("api.example.com", "api.example.com:443"));
    cr_expect(covers("api.example.com", "api.example.com:80"));
    cr_expect_not(covers("api.example.com", "api.example.com:8080"));
    cr_expect_not(covers("api.example.com:443", "api.example.com"));
    cr_expect(covers("api.example.com:8080", "api.example.com:8080"));
    cr_expect_not(covers("api.example.com", "other.example.com"));
    cr_expect(covers("*.corp.internal:443", "tools.corp.internal:443"));
    cr_expect(covers("*.corp.internal", "*.a.corp.internal"));
    cr_expect(covers("*.corp.internal:443", "*.corp.internal:443"));
    cr_expect(covers("*.corp.internal", "*.corp.internal"));
    cr_expect_not(covers("*.corp.internal", "corp.internal"));
    cr_expect_not(covers("*.corp.internal", "evilcorp.internal"));
    cr_expect_not(covers("*.a.corp.internal", "*.corp.internal"));
    cr_expect_not(covers("*.corp.internal", "*"));
    cr_expect_not(covers("*.corp.internal", "10.0.0.1"));
    cr_expect(covers("*", "anything.example"));
    cr_expect(covers("*", "10.0.0.0/8"));
    cr_expect(covers("*", "*"));
    cr_expect_not(covers("*", "*:22"));
    cr_expect(covers("*:22", "host.example:22"));
    cr_expect(covers("10.20.0.0/16:8080", "10.20.3.0/24:8080"));
    cr_expect(covers("10.20.0.0/16:8080", "10.20.3.4:8080"));
    cr_expect_not(covers("10.20.0.0/16:8080", "10.0.0.0/8:8080"));
    cr_expect_not(covers("10.20.0.0/16", "api.example.com"));
    cr_expect_not(covers("api.example.com", "10.20.0.1"));
    cr_expect(covers("[2001:db8::/32]", "[2001:db8:1::/48]"));
    cr_expect_not(covers("[2001:db8::/32]", "10.0.0.0/8"));
}

Test(sg_netallow, list_covers_when_any_entry_does)
{
    struct sg_netallow_entry list[2] = {entry("api.example.com"), entry("*.corp.internal:443")};
    struct sg_netallow_entry a = entry("x.corp.internal:443"), b = entry("x.corp.internal");
    cr_expect(sg_netallow_list_covers(list, 2, &a));
    cr_expect_not(sg_netallow_list_covers(list, 2, &b));
    cr_expect_not(sg_netallow_list_covers(list, 0, &a));
}

static int matches(const char *e, const char *host, unsigned port)
{
    struct sg_netallow_entry x = entry(e);
    return sg_netallow_matches(&x, host, port);
}

Test(sg_netallow, matches_what_the_proxy_decides)
{
    cr_expect(matches("api.example.com", "api.example.com", 443));
    cr_expect(matches("api.example.com", "API.example.com", 80));
    cr_expect_not(matches("api.example.com", "api.example.com", 8443));
    cr_expect_not(matches("api.example.com", "api.example.com.evil", 443));
    cr_expect(matches("*.example.com", "a.b.example.com", 443));
    cr_expect_not(matches("*.example.com", "example.com", 443));
    cr_expect_not(matches("*.example.com", "badexample.com", 443));
    cr_expect(matches("10.0.0.0/8:8080", "10.9.8.7", 8080));
    cr_expect_not(matches("10.0.0.0/8:8080", "11.0.0.1", 8080));
    cr_expect_not(matches("10.0.0.0/8", "10.example.com", 443));
    cr_expect_not(matches("api.example.com", "10.0.0.1", 443));
    cr_expect(matches("*", "169.254.169.254", 80)); /* the proxy's address check refuses it */
    cr_expect_not(matches("*", "x", 0));
}
