/* Unit tests for httpsrv's connection register: the per-address and global
 * limits, which connection is evicted to make room (and which never is), and
 * the head and request deadlines. Connections are socket pairs: the register
 * shuts down its end, the test reads EOF on the other. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpsrv_conns.h"

#define MAXC 16

struct conn {
    int ours, peer;
    struct sg_conn_rec *rec;
};

static struct sg_conns *reg;
static struct conn conns[MAXC];
static int nconns;

static struct sockaddr_in addr_of(const char *ip)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    cr_assert_eq(inet_pton(AF_INET, ip, &a.sin_addr), 1);
    return a;
}

static const struct sockaddr *sa(const struct sockaddr_in *a)
{
    return (const struct sockaddr *)(const void *)a;
}

static unsigned per_owner; /* the next start()'s per_owner limit */

static void start(unsigned max_open, unsigned per_address, uint64_t head_ms, uint64_t request_ms)
{
    struct sg_conn_limits lim = {max_open, per_address, head_ms, request_ms, per_owner};
    per_owner = 0;
    reg = sg_conns_new(&lim);
    cr_assert_not_null(reg);
    nconns = 0;
}

/* Admit and add a connection from ip; its index, or -1 when refused. */
static int dial(const char *ip)
{
    struct sockaddr_in a = addr_of(ip);
    if (sg_conns_admit(reg, sa(&a)) < 0)
        return -1;
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_lt(nconns, MAXC);
    conns[nconns] = (struct conn){sv[0], sv[1], sg_conns_add(reg, sv[0], sa(&a))};
    cr_assert_not_null(conns[nconns].rec);
    return nconns++;
}

/* 1 when the register shut the connection down (its peer reads EOF). */
static int was_cut(int i)
{
    char c;
    return recv(conns[i].peer, &c, 1, MSG_DONTWAIT) == 0;
}

/* The event loop closes a connection the register shut down. */
static void close_conn(int i)
{
    sg_conns_remove(reg, conns[i].rec);
    conns[i].rec = NULL;
    close(conns[i].ours);
    close(conns[i].peer);
    conns[i].ours = conns[i].peer = -1;
}

static void teardown(void)
{
    for (int i = 0; i < nconns; i++)
        if (conns[i].rec)
            close_conn(i);
    sg_conns_free(reg);
    reg = NULL;
}

static struct sg_conn_stats stats(void)
{
    struct sg_conn_stats s;
    sg_conns_get_stats(reg, &s);
    return s;
}

TestSuite(httpsrv_conns, .fini = teardown);

Test(httpsrv_conns, per_address_limit_evicts_the_oldest_head_of_that_address)
{
    start(100, 3, 60000, 60000);
    int a = dial("10.0.0.1"), b = dial("10.0.0.1"), c = dial("10.0.0.1");
    int other = dial("10.0.0.2");
    cr_assert(a >= 0 && b >= 0 && c >= 0 && other >= 0);
    int d = dial("10.0.0.1"); /* past the limit: the address's oldest makes room */
    cr_assert_geq(d, 0);
    cr_assert(was_cut(a), "the oldest connection waiting for its head is evicted");
    cr_assert(!was_cut(b) && !was_cut(c) && !was_cut(d) && !was_cut(other));
    cr_assert_eq(stats().evicted, 1);
    /* an evicted connection no longer counts, even before the loop closes it */
    cr_assert_eq(stats().open, 5);
    close_conn(a);
    cr_assert_eq(stats().open, 4);
}

Test(httpsrv_conns, a_connection_whose_head_was_accepted_is_never_evicted)
{
    start(100, 2, 60000, 60000);
    int a = dial("10.0.0.1"), b = dial("10.0.0.1");
    sg_conns_mark(reg, conns[a].rec, SG_CONN_BODY);
    sg_conns_mark(reg, conns[b].rec, SG_CONN_BODY);
    cr_assert_eq(dial("10.0.0.1"), -1, "nothing to evict: refused");
    cr_assert(!was_cut(a) && !was_cut(b));
    struct sg_conn_stats s = stats();
    cr_assert_eq(s.refused_per_address, 1);
    cr_assert_eq(s.evicted, 0);
    /* a request being handled counts in the total only */
    sg_conns_mark(reg, conns[a].rec, SG_CONN_BUSY);
    int c = dial("10.0.0.1");
    cr_assert_geq(c, 0);
    cr_assert(!was_cut(a) && !was_cut(b));
    /* kept alive after its answer, it waits for a head again: evictable */
    sg_conns_mark(reg, conns[a].rec, SG_CONN_HEAD);
    sg_conns_mark(reg, conns[c].rec, SG_CONN_BODY);
    cr_assert_geq(dial("10.0.0.1"), 0);
    cr_assert(was_cut(a));
}

Test(httpsrv_conns, global_limit_evicts_from_the_address_holding_most)
{
    start(5, 0, 60000, 60000);
    int small = dial("10.0.0.9");
    int big[4];
    for (int i = 0; i < 4; i++)
        big[i] = dial("10.0.0.1");
    cr_assert_geq(small, 0);
    int n = dial("10.0.0.3");
    cr_assert_geq(n, 0);
    cr_assert(!was_cut(small), "the address holding one is spared");
    cr_assert(was_cut(big[0]), "the biggest holder's oldest goes");
    for (int i = 1; i < 4; i++)
        cr_assert(!was_cut(big[i]));
    /* nothing evictable anywhere: refused and counted */
    for (int i = 0; i < nconns; i++)
        if (!was_cut(i))
            sg_conns_mark(reg, conns[i].rec, SG_CONN_BODY);
    cr_assert_eq(dial("10.0.0.4"), -1);
    cr_assert_eq(stats().refused_global, 1);
}

/* dial() for an IPv6 address. */
static int dial6(const char *ip)
{
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    cr_assert_eq(inet_pton(AF_INET6, ip, &a6.sin6_addr), 1);
    const struct sockaddr *p = (const struct sockaddr *)(const void *)&a6;
    if (sg_conns_admit(reg, p) < 0)
        return -1;
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_lt(nconns, MAXC);
    conns[nconns] = (struct conn){sv[0], sv[1], sg_conns_add(reg, sv[0], p)};
    cr_assert_not_null(conns[nconns].rec);
    return nconns++;
}

Test(httpsrv_conns, ipv6_addresses_count_by_their_slash_64)
{
    start(100, 1, 60000, 60000);
    int a = dial6("2001:db8:1:2::1");
    int other = dial6("2001:db8:1:3::1"); /* another /64: another client */
    int m1 = dial6("::ffff:10.0.0.1"), m2 = dial6("::ffff:10.0.0.2"); /* IPv4, dual stack */
    cr_assert(a >= 0 && other >= 0 && m1 >= 0 && m2 >= 0);
    cr_assert_eq(stats().evicted, 0, "four clients, one connection each");
    int b = dial6("2001:db8:1:2:ffff:1:2:3"); /* the same /64: its limit is held */
    cr_assert_geq(b, 0);
    cr_assert(was_cut(a), "the /64's oldest waiting connection made room");
    cr_assert(!was_cut(other) && !was_cut(m1) && !was_cut(m2) && !was_cut(b));
    cr_assert_eq(stats().evicted, 1);
}

Test(httpsrv_conns, an_owner_s_requests_still_arriving_are_limited_from_any_address)
{
    per_owner = 2;
    start(100, 10, 60000, 60000);
    int a = dial("10.0.0.1"), b = dial("10.0.0.2"), c = dial("10.0.0.3"), d = dial("10.0.0.4");
    cr_assert(a >= 0 && b >= 0 && c >= 0 && d >= 0);
    cr_assert_eq(sg_conns_own(reg, conns[a].rec, "t.alice"), 0);
    sg_conns_mark(reg, conns[a].rec, SG_CONN_BODY);
    cr_assert_eq(sg_conns_own(reg, conns[b].rec, "t.alice"), 0);
    sg_conns_mark(reg, conns[b].rec, SG_CONN_BODY);
    cr_assert_eq(sg_conns_own(reg, conns[c].rec, "t.alice"), -EBUSY, "two slow bodies held");
    cr_assert_eq(stats().refused_per_owner, 1);
    cr_assert_eq(sg_conns_own(reg, conns[d].rec, "t.bob"), 0, "another tenant is not held");
    sg_conns_mark(reg, conns[a].rec, SG_CONN_BUSY); /* a's request is complete */
    cr_assert_eq(sg_conns_own(reg, conns[c].rec, "t.alice"), 0);
    close_conn(b); /* gone: counts no more */
    cr_assert_eq(sg_conns_own(reg, conns[a].rec, "t.alice"), 0, "kept alive, its next request");
    cr_assert_eq(stats().refused_per_owner, 1);
}

Test(httpsrv_conns, ipv6_and_ipv4_addresses_are_told_apart)
{
    start(100, 1, 60000, 60000);
    cr_assert_geq(dial("10.0.0.1"), 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    cr_assert_eq(inet_pton(AF_INET6, "::1", &a6.sin6_addr), 1);
    cr_assert_eq(sg_conns_admit(reg, (const struct sockaddr *)(const void *)&a6), 0);
    cr_assert_eq(stats().evicted, 0);
}

Test(httpsrv_conns, slow_heads_and_slow_bodies_are_cut_at_their_deadlines)
{
    start(100, 0, 300, 2000);
    int head = dial("10.0.0.1"), body = dial("10.0.0.1"), busy = dial("10.0.0.1");
    sg_conns_mark(reg, conns[body].rec, SG_CONN_BODY);
    sg_conns_mark(reg, conns[busy].rec, SG_CONN_BUSY);
    usleep(1000 * 1000);
    cr_assert(was_cut(head), "no complete head within head_ms");
    cr_assert(!was_cut(body), "a body has the request deadline");
    usleep(1500 * 1000);
    cr_assert(was_cut(body));
    cr_assert(!was_cut(busy), "a request being handled has no receive deadline");
    struct sg_conn_stats s = stats();
    cr_assert_eq(s.cut_head, 1);
    cr_assert_eq(s.cut_request, 1);
}
