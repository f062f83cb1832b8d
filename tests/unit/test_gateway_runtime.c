/* Unit tests for the gateway's runtime pieces: routing (against in-process
 * fake executors built on httpsrv), the reloadable ruleset, the audit writer,
 * metrics and the RAGFlow result shapes. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw_audit.h"
#include "gw_discover.h"
#include "gw_metrics.h"
#include "gw_respond.h"
#include "gw_router.h"
#include "gw_ruleset.h"
#include "httpsrv.h"
#include "rules.h"

/* A fake executor: answers /v1/exec with `status` and counts calls. */
struct fake {
    struct sg_httpsrv *srv;
    int status;
    atomic_int calls;
    char url[64];
};

static void fake_handler(void *ctx, const struct sg_http_request *req,
                         struct sg_http_response *resp)
{
    struct fake *f = ctx;
    if (strcmp(req->url, "/healthz") == 0) {
        resp->body = strdup("{\"status\":\"ok\"}");
        return;
    }
    atomic_fetch_add(&f->calls, 1);
    resp->status = f->status;
    resp->body = strdup(f->status == 200 ? "{\"status\":\"success\"}"
                                         : "{\"error\":{\"code\":\"pool_busy\"}}");
}

static void fake_start(struct fake *f, int status)
{
    memset(f, 0, sizeof(*f));
    f->status = status;
    struct sg_httpsrv_config c = {.max_body = 1 << 20, .max_connections = 16, .timeout_s = 5};
    cr_assert_eq(
        sg_httpsrv_start(&c, &(struct sg_http_handlers){.handle = fake_handler}, f, &f->srv, NULL),
        0);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", sg_httpsrv_port(f->srv));
}

static void dead_url(char *out, size_t n)
{
    /* Bind-and-release a port: nothing listens there afterwards. */
    struct fake f;
    fake_start(&f, 200);
    snprintf(out, n, "%s", f.url);
    sg_httpsrv_stop(f.srv);
}

static struct gw_router *router_for(const char *const *urls, size_t n, uint64_t busy_retries)
{
    struct gw_config cfg;
    gw_config_defaults(&cfg);
    for (size_t i = 0; i < n; i++)
        snprintf(cfg.executors[0][i], GW_URL_MAX, "%s", urls[i]);
    cfg.executor_count[0] = n;
    cfg.busy_retries = busy_retries;
    cfg.connect_timeout_ms = 500;
    cfg.health_interval_ms = 600000;
    struct gw_router *r = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_router_new(&cfg, "secret", &r, &err), 0, "%s", err.msg);
    return r;
}

static enum gw_exec_outcome exec_once(struct gw_router *r, struct gw_exec_result *res)
{
    gw_router_exec(r, SG_LANG_PYTHON, "{}", 2, 2000, NULL, res);
    return res->outcome;
}

Test(gw_router, round_robin_and_health)
{
    struct fake a, b;
    fake_start(&a, 200);
    fake_start(&b, 200);
    const char *urls[] = {a.url, b.url};
    struct gw_router *r = router_for(urls, 2, 1);
    cr_assert_eq(gw_router_healthy(r, 0), 2);
    for (int i = 0; i < 4; i++) {
        struct gw_exec_result res;
        cr_assert_eq(exec_once(r, &res), GW_EXEC_OK, "%s", res.message);
        cr_assert_str_eq(res.body, "{\"status\":\"success\"}");
        gw_exec_result_free(&res);
    }
    cr_assert_eq(atomic_load(&a.calls), 2);
    cr_assert_eq(atomic_load(&b.calls), 2);
    gw_router_free(r);
    sg_httpsrv_stop(a.srv);
    sg_httpsrv_stop(b.srv);
}

Test(gw_router, connect_failure_fails_over_and_marks_down)
{
    struct fake b;
    char dead[64];
    dead_url(dead, sizeof(dead));
    fake_start(&b, 200);
    const char *urls[] = {dead, b.url};
    struct gw_router *r = router_for(urls, 2, 0);
    cr_assert_eq(gw_router_healthy(r, 0), 1, "the health round saw the dead one");
    for (int i = 0; i < 3; i++) {
        struct gw_exec_result res;
        cr_assert_eq(exec_once(r, &res), GW_EXEC_OK, "%s", res.message);
        gw_exec_result_free(&res);
    }
    cr_assert_eq(atomic_load(&b.calls), 3);
    gw_router_free(r);
    sg_httpsrv_stop(b.srv);
}

Test(gw_router, all_down_is_unreachable)
{
    char d1[64], d2[64];
    dead_url(d1, sizeof(d1));
    dead_url(d2, sizeof(d2));
    const char *urls[] = {d1, d2};
    struct gw_router *r = router_for(urls, 2, 1);
    struct gw_exec_result res;
    cr_assert_eq(exec_once(r, &res), GW_EXEC_UNREACHABLE);
    cr_assert_eq(res.attempts, 2, "each executor tried once");
    cr_assert(strstr(res.message, "unreachable"), "%s", res.message);
    gw_exec_result_free(&res);
    gw_router_free(r);
}

Test(gw_router, busy_retries_are_bounded)
{
    struct fake a, b, c;
    fake_start(&a, 503);
    fake_start(&b, 503);
    fake_start(&c, 200);
    const char *urls[] = {a.url, b.url, c.url};
    struct gw_router *r = router_for(urls, 3, 1);
    struct gw_exec_result res;
    cr_assert_eq(exec_once(r, &res), GW_EXEC_BUSY, "two busy answers use up one retry");
    cr_assert_eq(res.attempts, 2);
    cr_assert_eq(atomic_load(&c.calls), 0);
    gw_exec_result_free(&res);
    gw_router_free(r);
    r = router_for(urls, 3, 2);
    cr_assert_eq(exec_once(r, &res), GW_EXEC_OK, "with two retries the third one runs it");
    cr_assert_eq(atomic_load(&c.calls), 1);
    gw_exec_result_free(&res);
    gw_router_free(r);
    sg_httpsrv_stop(a.srv);
    sg_httpsrv_stop(b.srv);
    sg_httpsrv_stop(c.srv);
}

Test(gw_router, other_errors_are_not_retried)
{
    struct fake a, b;
    fake_start(&a, 500);
    fake_start(&b, 200);
    const char *urls[] = {a.url, b.url};
    struct gw_router *r = router_for(urls, 2, 3);
    struct gw_exec_result res;
    cr_assert_eq(exec_once(r, &res), GW_EXEC_FAILED);
    cr_assert_eq(res.http_status, 500);
    cr_assert_eq(atomic_load(&b.calls), 0);
    gw_exec_result_free(&res);
    json_t *st = gw_router_status(r);
    cr_assert(
        json_is_true(json_object_get(json_array_get(json_object_get(st, "python"), 0), "healthy")));
    json_decref(st);
    gw_router_free(r);
    sg_httpsrv_stop(a.srv);
    sg_httpsrv_stop(b.srv);
}

/* ---- discovery (tasks.<service>): a resolver hook stands in for Swarm's DNS ---- */

struct fake_dns {
    int answer; /* >= 0: that many of addrs; < 0: no answer (-errno) */
    int many;   /* > 0: answer that many generated addresses instead */
    const char *addrs[4];
    char host[64];
    atomic_int calls;
};

static int fake_resolve(void *ud, const char *host, char (*addrs)[INET6_ADDRSTRLEN], size_t max)
{
    struct fake_dns *d = ud;
    atomic_fetch_add(&d->calls, 1);
    snprintf(d->host, sizeof(d->host), "%s", host);
    if (d->answer < 0)
        return d->answer;
    int n = 0;
    for (int i = 0; i < d->many && (size_t)i < max; i++)
        snprintf(addrs[n++], INET6_ADDRSTRLEN, "127.0.10.%d", i + 1);
    if (d->many)
        return n;
    for (int i = 0; i < d->answer && (size_t)i < max; i++)
        snprintf(addrs[n++], INET6_ADDRSTRLEN, "%s", d->addrs[i]);
    return n;
}

/* A fake executor on a given loopback address and port (0: any free one). */
static int fake_start_at(struct fake *f, const char *addr, uint16_t port)
{
    memset(f, 0, sizeof(*f));
    f->status = 200;
    struct sg_httpsrv_config c = {.bind_addr = addr,
                                  .port = port,
                                  .max_body = 1 << 20,
                                  .max_connections = 16,
                                  .timeout_s = 5};
    const struct sg_http_handlers h = {.handle = fake_handler};
    if (sg_httpsrv_start(&c, &h, f, &f->srv, NULL) != 0)
        return -1;
    snprintf(f->url, sizeof(f->url), "http://%s:%u", addr, sg_httpsrv_port(f->srv));
    return 0;
}

static size_t status_count(struct gw_router *r, const char *lang, const char *url)
{
    json_t *st = gw_router_status(r);
    json_t *arr = json_object_get(st, lang), *v;
    size_t i, n = 0;
    json_array_foreach(arr, i, v) n +=
        !url || strcmp(json_string_value(json_object_get(v, "url")), url) == 0;
    json_decref(st);
    return n;
}

Test(gw_router, discovery_follows_dns_without_reload)
{
    /* Two executors on one port, on two loopback addresses (as two Swarm tasks). */
    struct fake a, b;
    uint16_t port = 0;
    int ok = 0;
    for (int tries = 0; tries < 20 && !ok; tries++) {
        cr_assert_eq(fake_start_at(&a, "127.0.0.2", 0), 0);
        port = sg_httpsrv_port(a.srv);
        if (fake_start_at(&b, "127.0.0.3", port) == 0)
            ok = 1;
        else
            sg_httpsrv_stop(a.srv);
    }
    cr_assert(ok, "no port free on both 127.0.0.2 and 127.0.0.3");
    char url[GW_URL_MAX];
    snprintf(url, sizeof(url), "http://tasks.sg_executor-python:%u", port);
    const char *urls[] = {url};
    struct gw_router *r = router_for(urls, 1, 0);
    /* The system resolver found no such name: no executor, and no crash. */
    cr_assert_eq(status_count(r, "python", NULL), 0);
    struct gw_exec_result res;
    cr_assert_eq(exec_once(r, &res), GW_EXEC_UNREACHABLE);
    gw_exec_result_free(&res);

    struct fake_dns dns = {.answer = 1, .addrs = {"127.0.0.2", "127.0.0.3"}};
    gw_router_set_resolver(r, fake_resolve, &dns);
    gw_router_check_now(r);
    cr_assert_str_eq(dns.host, "tasks.sg_executor-python");
    cr_assert_eq(status_count(r, "python", a.url), 1);
    cr_assert_eq(gw_router_healthy(r, SG_LANG_PYTHON), 1);
    cr_assert_eq(exec_once(r, &res), GW_EXEC_OK);
    gw_exec_result_free(&res);

    /* A task joins: both are used, round robin, without a reload. */
    dns.answer = 2;
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), 2);
    cr_assert_eq(gw_router_healthy(r, SG_LANG_PYTHON), 2);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(exec_once(r, &res), GW_EXEC_OK);
        gw_exec_result_free(&res);
    }
    cr_assert_eq(atomic_load(&b.calls), 2, "the new task takes its share");

    /* No answer (DNS down): the last known set stays. */
    dns.answer = -EAGAIN;
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), 2);

    /* The first task leaves: dropped, its jobs go to the other. */
    dns.answer = 1;
    dns.addrs[0] = "127.0.0.3";
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", a.url), 0);
    cr_assert_eq(status_count(r, "python", b.url), 1);
    int before = atomic_load(&a.calls);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(exec_once(r, &res), GW_EXEC_OK);
        gw_exec_result_free(&res);
    }
    cr_assert_eq(atomic_load(&a.calls), before, "a dropped task gets no job");

    /* It comes back (its slot is reused), then the name disappears: none left. */
    dns.answer = 2;
    dns.addrs[1] = "127.0.0.2";
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), 2);
    dns.answer = 0;
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), 0);
    cr_assert_eq(exec_once(r, &res), GW_EXEC_UNREACHABLE);
    gw_exec_result_free(&res);
    gw_router_free(r);
    sg_httpsrv_stop(a.srv);
    sg_httpsrv_stop(b.srv);
}

Test(gw_router, discovery_is_bounded_and_static_urls_stay)
{
    struct fake s;
    fake_start(&s, 200);
    const char *urls[] = {s.url, "dns+http://pool.invalid:9401"};
    struct gw_router *r = router_for(urls, 2, 0);
    struct fake_dns dns = {.answer = 4, .addrs = {"127.0.9.1", "::1", "127.0.9.1", "127.0.9.2"}};
    gw_router_set_resolver(r, fake_resolve, &dns);
    gw_router_check_now(r);
    cr_assert_str_eq(dns.host, "pool.invalid");
    cr_assert_eq(status_count(r, "python", NULL), 4, "static + 3 distinct addresses");
    cr_assert_eq(status_count(r, "python", s.url), 1);
    cr_assert_eq(status_count(r, "python", "http://[::1]:9401"), 1, "IPv6 in brackets");
    cr_assert_eq(status_count(r, "python", "http://127.0.9.1:9401"), 1, "duplicates once");
    /* A name with more addresses than slots: bounded, the static URL stays. */
    dns.many = 60;
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), GW_ROUTER_SLOTS_MAX);
    cr_assert_eq(status_count(r, "python", s.url), 1);
    dns.many = 0;
    dns.answer = 0;
    gw_router_check_now(r);
    cr_assert_eq(status_count(r, "python", NULL), 1);
    cr_assert_eq(status_count(r, "python", s.url), 1, "static URLs are never dropped");
    gw_router_free(r);
    sg_httpsrv_stop(s.srv);
}

Test(gw_discover, urls)
{
    struct gw_discover *d = NULL;
    struct sg_error err = {0};
    cr_assert(gw_discover_is_dynamic("http://tasks.svc:9401"));
    cr_assert(gw_discover_is_dynamic("dns+http://any.name:1"));
    cr_assert_not(gw_discover_is_dynamic("http://executor-python:9401"));
    cr_assert_not(gw_discover_is_dynamic("http://127.0.0.1:9401"));
    cr_assert_eq(gw_discover_new("http://tasks.svc:9401", &d, &err), 0, "%s", err.msg);
    cr_assert_str_eq(gw_discover_source(d), "http://tasks.svc:9401");
    gw_discover_free(d);
    const char *bad[] = {"http://tasks.svc",         "http://tasks.svc:0", "http://tasks.svc:70000",
                         "http://tasks.svc:9401/v1", "dns+http://[::1]:1", "dns+http://a@b:1",
                         "http://tasks.x:9401x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_lt(gw_discover_new(bad[i], &d, &err), 0, "%s", bad[i]);
}

Test(gw_discover, system_resolver_is_bounded_and_sorted)
{
    /* "localhost" through the real resolver (getaddrinfo_a): 127.0.0.1 and
     * maybe ::1, sorted, each once, within the round's time bound. */
    struct gw_discover *d = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_discover_new("dns+http://localhost:9401", &d, &err), 0, "%s", err.msg);
    char urls[GW_DISCOVER_ADDRS_MAX][GW_URL_MAX];
    size_t n = 0;
    cr_assert_eq(gw_discover_resolve(d, NULL, NULL, urls, GW_DISCOVER_ADDRS_MAX, &n),
                 GW_DISCOVER_ADDRS);
    cr_assert_geq(n, 1);
    int v4 = 0;
    for (size_t i = 0; i < n; i++) {
        v4 += strcmp(urls[i], "http://127.0.0.1:9401") == 0;
        if (i)
            cr_assert_lt(strcmp(urls[i - 1], urls[i]), 0, "sorted, no duplicates");
    }
    cr_assert_eq(v4, 1);
    gw_discover_free(d);
}

/* ---- ruleset ---- */

static char policies_dir[] = "/tmp/gwrs-XXXXXX";

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *policy_text(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof(buf),
             "{\"name\": \"%s\", \"python\": {\"imports\": {\"mode\": \"deny\", \"modules\": "
             "[]}}, \"javascript\": {\"imports\": {\"mode\": \"deny\", \"modules\": []}}}",
             name);
    return buf;
}

static void rs_setup(void)
{
    cr_assert_not_null(mkdtemp(policies_dir));
    write_file(policies_dir, "a.json", policy_text("a"));
    write_file(policies_dir, "b.json", policy_text("b"));
}

static void rs_teardown(void)
{
    const char *names[] = {"a.json", "b.json", "c.json", "tokens.txt"};
    char path[512];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", policies_dir, names[i]);
        unlink(path);
    }
    rmdir(policies_dir);
}

TestSuite(gw_ruleset, .init = rs_setup, .fini = rs_teardown);

Test(gw_ruleset, load_swap_and_references)
{
    struct gw_ruleset *rs = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_ruleset_load(policies_dir, "a", "", &rs, &err), 0, "%s", err.msg);
    cr_assert_str_eq(rs->default_policy->name, "a");
    cr_assert_null(rs->tenants);
    struct gw_ruleset_slot slot;
    gw_ruleset_slot_init(&slot, rs);
    struct gw_ruleset *held = gw_ruleset_slot_get(&slot); /* an in-flight request */
    struct gw_ruleset *next = NULL;
    cr_assert_eq(gw_ruleset_load(policies_dir, "b", "", &next, &err), 0, "%s", err.msg);
    gw_ruleset_slot_swap(&slot, next);
    cr_assert_str_eq(held->default_policy->name, "a", "the old set lives while held");
    cr_assert_eq(atomic_load(&held->refs), 1);
    gw_ruleset_unref(held);
    struct gw_ruleset *cur = gw_ruleset_slot_get(&slot);
    cr_assert_str_eq(cur->default_policy->name, "b");
    cr_assert_eq(cur->generation, 2);
    cr_assert_eq(gw_ruleset_policy(cur, NULL, "a")->name[0], 'a');
    cr_assert_null(gw_ruleset_policy(cur, NULL, "zzz"));
    gw_ruleset_unref(cur);
    gw_ruleset_slot_destroy(&slot);
}

Test(gw_ruleset, runtime_sections_are_built_once_per_load)
{
    struct gw_ruleset *rs = NULL;
    struct sg_error err = {0};
    cr_assert_eq(gw_ruleset_load(policies_dir, "a", "", &rs, &err), 0, "%s", err.msg);
    const struct sg_policy *a = gw_ruleset_policy(rs, NULL, "a");
    for (int js = 0; js < 2; js++) {
        json_t *built = gw_ruleset_runtime(rs, a, js);
        json_t *fresh = sg_policy_runtime_json(js ? &a->javascript : &a->python, js);
        cr_assert_not_null(built);
        cr_assert(json_equal(built, fresh), "the same section as built per request before");
        cr_assert_eq(gw_ruleset_runtime(rs, a, js), built, "built once, not per call");
        json_decref(fresh);
    }
    cr_assert_not_null(json_object_get(gw_ruleset_runtime(rs, a, 0), "read_paths"));
    cr_assert_not_null(json_object_get(gw_ruleset_runtime(rs, a, 1), "process_properties"));
    /* a policy of another load is not this set's */
    struct gw_ruleset *other = NULL;
    cr_assert_eq(gw_ruleset_load(policies_dir, "a", "", &other, &err), 0, "%s", err.msg);
    cr_assert_null(gw_ruleset_runtime(rs, gw_ruleset_policy(other, NULL, "a"), 0));
    gw_ruleset_unref(other);
    gw_ruleset_unref(rs);
}

Test(gw_ruleset, bad_inputs_are_refused)
{
    struct gw_ruleset *rs = NULL;
    struct sg_error err = {0};
    cr_assert_neq(gw_ruleset_load(policies_dir, "nosuch", "", &rs, &err), 0);
    cr_assert(strstr(err.msg, "nosuch"), "%s", err.msg);
    /* not *.json: the policy loader reads every *.json of the directory */
    write_file(policies_dir, "tokens.txt",
               "{\"tenants\": {\"t\": {\"tokens\": [\"tenant-token-0123456789\"], "
               "\"policies\": [\"a\", \"gone\"]}}}");
    char tokens[600];
    snprintf(tokens, sizeof(tokens), "%s/tokens.txt", policies_dir);
    cr_assert_neq(gw_ruleset_load(policies_dir, "a", tokens, &rs, &err), 0,
                  "a tenant naming a missing policy fails the set");
    cr_assert(strstr(err.msg, "gone"), "%s", err.msg);
    write_file(policies_dir, "tokens.txt",
               "{\"tenants\": {\"t\": {\"tokens\": [\"tenant-token-0123456789\"], "
               "\"default_policy\": \"b\"}}}");
    cr_assert_eq(gw_ruleset_load(policies_dir, "a", tokens, &rs, &err), 0, "%s", err.msg);
    const struct gw_tenant *t = gw_tenants_lookup(rs->tenants, "tenant-token-0123456789",
                                                  strlen("tenant-token-0123456789"));
    cr_assert_not_null(t);
    cr_assert_str_eq(gw_ruleset_policy(rs, t, NULL)->name, "b", "tenant default wins");
    cr_assert_str_eq(gw_ruleset_policy(rs, t, "a")->name, "a", "a request names its policy");
    gw_ruleset_unref(rs);
    write_file(policies_dir, "c.json", "{\"name\": \"c\"");
    cr_assert_neq(gw_ruleset_load(policies_dir, "a", "", &rs, &err), 0);
}

/* ---- audit ---- */

static size_t count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    int c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

Test(gw_audit, lines_are_written_in_order)
{
    char path[] = "/tmp/gwaudit-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct gw_audit *a = NULL;
    cr_assert_eq(gw_audit_open(path, 1000, &a, NULL), 0);
    char line[32];
    for (int i = 0; i < 500; i++) {
        int n = snprintf(line, sizeof(line), "{\"i\":%d}", i);
        gw_audit_write(a, line, (size_t)n);
    }
    cr_assert_eq(gw_audit_flush(a, 5000), 0);
    struct gw_audit_stats st;
    gw_audit_get_stats(a, &st);
    cr_assert_eq(st.written, 500);
    cr_assert_eq(st.dropped, 0);
    cr_assert(st.writable);
    gw_audit_close(a);
    cr_assert_eq(count_lines(path), 500);
    FILE *f = fopen(path, "r");
    char buf[64];
    for (int i = 0; i < 500; i++) {
        cr_assert_not_null(fgets(buf, sizeof(buf), f));
        snprintf(line, sizeof(line), "{\"i\":%d}\n", i);
        cr_assert_str_eq(buf, line);
    }
    fclose(f);
    unlink(path);
}

/* A disk that fills up in the middle of a line: half of the first line is
 * written, then ENOSPC, until the test says there is room again. */
static atomic_int disk_full_calls, disk_has_room;

static ssize_t filling_disk_writev(int fd, const struct iovec *iov, int n)
{
    if (atomic_load(&disk_has_room))
        return writev(fd, iov, n);
    if (atomic_fetch_add(&disk_full_calls, 1) == 0)
        return write(fd, iov[0].iov_base, iov[0].iov_len / 2);
    errno = ENOSPC;
    return -1;
}

Test(gw_audit, a_line_cut_by_enospc_leaves_no_fragment)
{
    char path[] = "/tmp/gwaudit-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    struct gw_audit *a = NULL;
    cr_assert_eq(gw_audit_open(path, 1000, &a, NULL), 0);
    gw_audit_write(a, "{\"i\":0}", 7);
    cr_assert_eq(gw_audit_flush(a, 5000), 0);
    gw_audit_set_writer(a, filling_disk_writev);
    gw_audit_write(a, "{\"i\":1,\"pad\":\"xxxxxxxxxxxxxxxx\"}", 32);
    gw_audit_write(a, "{\"i\":2}", 7);
    cr_assert_eq(gw_audit_flush(a, 5000), 0);
    struct gw_audit_stats st;
    gw_audit_get_stats(a, &st);
    cr_assert_eq(st.write_errors, 2);
    cr_assert_not(st.writable);
    atomic_store(&disk_has_room, 1);
    gw_audit_reopen(a);
    gw_audit_write(a, "{\"i\":3}", 7);
    cr_assert_eq(gw_audit_flush(a, 5000), 0);
    gw_audit_close(a);
    FILE *f = fopen(path, "r");
    char buf[128];
    cr_assert_str_eq(fgets(buf, sizeof(buf), f), "{\"i\":0}\n");
    cr_assert_str_eq(fgets(buf, sizeof(buf), f), "{\"i\":3}\n");
    cr_assert_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    unlink(path);
}

Test(gw_audit, full_disk_and_full_queue_are_counted)
{
    struct gw_audit *a = NULL;
    cr_assert_eq(gw_audit_open("/dev/full", 4, &a, NULL), 0);
    for (int i = 0; i < 200; i++)
        gw_audit_write(a, "{}", 2);
    gw_audit_flush(a, 5000);
    struct gw_audit_stats st;
    gw_audit_get_stats(a, &st);
    cr_assert_not(st.writable);
    cr_assert_eq(st.written, 0);
    cr_assert_eq(st.write_errors + st.dropped, 200, "every line is accounted for");
    cr_assert_gt(st.write_errors, 0);
    gw_audit_close(a);
}

Test(gw_audit, unopenable_path_is_reported_and_disabled_is_a_no_op)
{
    struct gw_audit *a = NULL;
    cr_assert_eq(gw_audit_open("/nonexistent-dir/audit.log", 8, &a, NULL), 0);
    gw_audit_write(a, "{}", 2);
    gw_audit_flush(a, 5000);
    struct gw_audit_stats st;
    gw_audit_get_stats(a, &st);
    cr_assert_not(st.writable);
    cr_assert_eq(st.write_errors, 1);
    gw_audit_close(a);
    cr_assert_eq(gw_audit_open("", 8, &a, NULL), 0);
    gw_audit_write(a, "{}", 2);
    gw_audit_get_stats(a, &st);
    cr_assert(st.writable);
    cr_assert_eq(st.written + st.dropped + st.write_errors, 0);
    gw_audit_close(a);
}

/* ---- metrics and result shapes ---- */

Test(gw_metrics, render_counts_and_histograms)
{
    struct gw_metrics *m = gw_metrics_new();
    gw_metrics_request(m, GW_EP_RUN, 200);
    gw_metrics_request(m, GW_EP_RUN, 200);
    gw_metrics_request(m, GW_EP_V1_ANALYZE, 418);
    gw_metrics_verdict(m, 0);
    gw_metrics_rule(m, SG_RULE_IMPORT_NOT_ALLOWED);
    gw_metrics_rule(m, SG_RULE_IMPORT_NOT_ALLOWED);
    gw_metrics_observe(m, GW_HIST_ANALYSIS, 300);
    gw_metrics_observe(m, GW_HIST_ANALYSIS, 2000000);
    struct sg_buf b;
    sg_buf_init(&b, 1 << 20);
    cr_assert_eq(gw_metrics_render(m, &b), 0);
    const char *must[] = {
        "sandgate_requests_total{endpoint=\"run\",status=\"200\"} 2",
        "sandgate_requests_total{endpoint=\"v1_analyze\",status=\"other\"} 1",
        "sandgate_verdicts_total{verdict=\"reject\"} 1",
        "sandgate_violations_total{rule=\"import.not-allowed\"} 2",
        "sandgate_analysis_seconds_bucket{le=\"0.00025\"} 0",
        "sandgate_analysis_seconds_bucket{le=\"0.0005\"} 1",
        "sandgate_analysis_seconds_bucket{le=\"2.5\"} 2",
        "sandgate_analysis_seconds_count 2",
    };
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
        cr_assert(strstr(b.data, must[i]), "missing %s", must[i]);
    sg_buf_free(&b);
    gw_metrics_free(m);
}

Test(gw_metrics, rule_table_is_bounded)
{
    struct gw_metrics *m = gw_metrics_new();
    char name[32];
    for (int i = 0; i < GW_METRICS_RULES_MAX + 5; i++) {
        snprintf(name, sizeof(name), "r.%d", i);
        gw_metrics_rule(m, name);
    }
    struct sg_buf b;
    sg_buf_init(&b, 1 << 20);
    gw_metrics_render(m, &b);
    cr_assert(strstr(b.data, "sandgate_violations_total{rule=\"other\"} 5"));
    sg_buf_free(&b);
    gw_metrics_free(m);
}

Test(gw_respond, rejection_shape)
{
    struct sg_violations vs = {0};
    const char *src = "import os\nimport sys\n";
    sg_violations_add_at(&vs, SG_RULE_IMPORT_NOT_ALLOWED, src, strlen(src), 0, 9, "no %s", "os");
    sg_violations_add_at(&vs, SG_RULE_IMPORT_NOT_ALLOWED, src, strlen(src), 10, 20, "no sys");
    json_t *o = gw_result_rejected(&vs);
    cr_assert_str_eq(json_string_value(json_object_get(o, "status")), "program_runner_error");
    cr_assert_eq(json_integer_value(json_object_get(o, "exit_code")), -999);
    cr_assert_str_eq(json_string_value(json_object_get(o, "detail")), "Code is unsafe");
    cr_assert_str_eq(json_string_value(json_object_get(o, "stderr")),
                     "Line 1: no os [import.not-allowed]\nLine 2: no sys [import.not-allowed]");
    cr_assert_eq(json_array_size(json_object_get(o, "violations")), 2);
    cr_assert(json_is_false(json_object_get(json_object_get(o, "result"), "present")));
    json_decref(o);
    sg_violations_free(&vs);
}

Test(gw_respond, executor_fields_are_filtered_and_defaulted)
{
    json_t *exec = json_loads("{\"status\":\"success\",\"stdout\":\"hi\",\"exit_code\":0,"
                              "\"result\":{\"present\":true,\"value\":[1]},\"secret\":1,"
                              "\"artifacts\":\"nope\"}",
                              0, NULL);
    json_t *o = gw_result_from_executor(exec);
    cr_assert_eq(json_object_size(o), 12);
    cr_assert_null(json_object_get(o, "secret"));
    cr_assert_str_eq(json_string_value(json_object_get(o, "stdout")), "hi");
    cr_assert(json_is_array(json_object_get(o, "artifacts")));
    cr_assert_eq(json_array_size(json_object_get(o, "artifacts")), 0);
    json_t *res = json_object_get(o, "result");
    cr_assert(json_is_true(json_object_get(res, "present")));
    cr_assert_str_eq(json_string_value(json_object_get(res, "type")), "json");
    cr_assert(json_is_null(json_object_get(o, "detail")));
    json_decref(o);
    json_decref(exec);
}

Test(gw_respond, runtime_violations_keep_known_rules_only)
{
    json_t *exec = json_loads("{\"denials\":["
                              "{\"rule\":\"runtime.process_or_network\",\"target\":\"a socket?\"},"
                              "{\"rule\":\"runtime.made_up\",\"target\":\"x\"},"
                              "{\"rule\":\"runtime.process\",\"target\":\"os.system\"}]}",
                              0, NULL);
    json_t *v = gw_runtime_violations(exec);
    cr_assert_eq(json_array_size(v), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "rule")),
                     "runtime.process_or_network");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 0), "phase")), "runtime");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(v, 1), "rule")),
                     "runtime.process");
    json_decref(v);
    json_decref(exec);
}
