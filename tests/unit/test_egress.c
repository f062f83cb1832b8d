/* egress_withdraw(): what the proxy's helper and logfile daemon recorded for a
 * job (decisions/<address>) becomes the job's network result; other jobs'
 * lines and malformed ones are skipped; the wait for log lines is bounded. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "egress.h"

static struct exec_config cfg;

static void setup(void)
{
    char tmpl[] = "/tmp/sg-egress-unit-XXXXXX";
    cr_assert(mkdtemp(tmpl));
    snprintf(cfg.egress_dir, sizeof(cfg.egress_dir), "%s", tmpl);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/allow", tmpl);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/decisions", tmpl);
    cr_assert_eq(mkdir(p, 0755), 0);
}

static void teardown(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cfg.egress_dir);
    cr_expect_eq(system(cmd), 0);
}

static void write_decisions(const char *ip, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/decisions/%s", cfg.egress_dir, ip);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

TestSuite(egress, .init = setup, .fini = teardown);

Test(egress, connections_of_this_job_only_with_their_bytes)
{
    json_t *allow = json_pack("[s]", "api.example.com");
    struct sg_error err = {0};
    cr_assert_eq(egress_grant(&cfg, "10.9.0.2", "job1", allow, &err), 0, "%s", err.msg);
    write_decisions(
        "10.9.0.2",
        "{\"job_id\":\"job1\",\"host\":\"api.example.com\",\"port\":443,\"verdict\":\"allowed\","
        "\"reason\":\"allowed\"}\n"
        "{\"job_id\":\"job1\",\"host\":\"x.example\",\"port\":443,\"verdict\":\"denied\","
        "\"reason\":\"not in this job's allow-list\"}\n"
        "{\"job_id\":\"job0\",\"host\":\"old.example\",\"port\":443,\"status\":200,"
        "\"bytes_in\":1,\"bytes_out\":2}\n"
        "{\"job_id\":\"job1\",\"host\":\"api.example.com\",\"port\":443,\"status\":200,"
        "\"bytes_in\":812,\"bytes_out\":5120}\n"
        "{\"job_id\":\"job1\",\"host\":\"api.example.com\",\"port\":443,\"status\":\"x\"}\n"
        "not json\n"
        "{\"job_id\":\"job1\",\"host\":\"partial.example\",\"port\":443,\"status\":200");
    json_t *net = NULL;
    cr_assert_eq(egress_withdraw(&cfg, "10.9.0.2", "job1", &net, &err), 0, "%s", err.msg);
    char *got = json_dumps(net, JSON_COMPACT | JSON_SORT_KEYS);
    cr_expect_str_eq(got, "{\"allowed\":[\"api.example.com:443\"],\"connections\":[{\"bytes_in\":"
                          "812,\"bytes_out\":5120,\"host\":\"api.example.com\",\"port\":443,"
                          "\"status\":200}],\"denied\":[\"x.example:443\"]}");
    free(got);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/decisions/10.9.0.2", cfg.egress_dir);
    cr_expect_eq(access(p, F_OK), -1, "the decisions file is removed");
    snprintf(p, sizeof(p), "%s/allow/10.9.0.2", cfg.egress_dir);
    cr_expect_eq(access(p, F_OK), -1, "the grant is withdrawn");
    json_decref(net);
    json_decref(allow);
}

Test(egress, waits_bounded_only_for_missing_log_lines)
{
    struct sg_error err = {0};
    json_t *net = NULL;
    double t0 = now_ms();
    cr_assert_eq(egress_withdraw(&cfg, "10.9.0.3", "job2", &net, &err), 0, "%s", err.msg);
    cr_expect_lt(now_ms() - t0, (double)EGRESS_LOG_WAIT_MS / 2, "nothing recorded: no wait");
    cr_expect_eq(json_array_size(json_object_get(net, "connections")), 0);
    json_decref(net);

    write_decisions("10.9.0.3",
                    "{\"job_id\":\"job2\",\"host\":\"a.example\",\"port\":80,\"verdict\":"
                    "\"allowed\",\"reason\":\"allowed\"}\n");
    t0 = now_ms();
    cr_assert_eq(egress_withdraw(&cfg, "10.9.0.3", "job2", &net, &err), 0, "%s", err.msg);
    double waited = now_ms() - t0;
    cr_expect_geq(waited, (double)EGRESS_LOG_WAIT_MS, "waited %.1f ms for the log line", waited);
    cr_expect_lt(waited, (double)EGRESS_LOG_WAIT_MS * 4, "waited %.1f ms", waited);
    cr_expect_eq(json_array_size(json_object_get(net, "allowed")), 1);
    cr_expect_eq(json_array_size(json_object_get(net, "connections")), 0);
    json_decref(net);
}

Test(egress, connections_are_bounded)
{
    struct sg_error err = {0};
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    for (int i = 0; i < EGRESS_HOSTS_MAX + 10; i++)
        fprintf(m,
                "{\"job_id\":\"job3\",\"host\":\"h%d.example\",\"port\":443,\"status\":200,"
                "\"bytes_in\":%d,\"bytes_out\":%d}\n",
                i, i, i);
    fclose(m);
    write_decisions("10.9.0.4", text);
    free(text);
    json_t *net = NULL;
    cr_assert_eq(egress_withdraw(&cfg, "10.9.0.4", "job3", &net, &err), 0, "%s", err.msg);
    cr_expect_eq(json_array_size(json_object_get(net, "connections")), EGRESS_HOSTS_MAX);
    json_decref(net);
}

/* The resolver guard: one runc container in the sandbox's network namespace,
 * only NET_ADMIN and NET_RAW, iptables refusing 127.0.0.11 there. */
Test(egress_guard, body_joins_the_sandbox_namespace_with_only_net_admin)
{
    struct exec_config c = {0};
    snprintf(c.egress_guard_image, sizeof(c.egress_guard_image), "sandgate/egress:t");
    snprintf(c.instance, sizeof(c.instance), "inst-1");
    char *body = NULL;
    cr_assert_eq(egress_guard_body(&c, "0123456789ab", &body, NULL), 0);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    cr_assert_not_null(j);
    json_t *hc = json_object_get(j, "HostConfig");
    cr_assert_str_eq(json_string_value(json_object_get(j, "Image")), "sandgate/egress:t");
    cr_assert_str_eq(json_string_value(json_object_get(hc, "NetworkMode")),
                     "container:0123456789ab");
    cr_assert_str_eq(json_string_value(json_object_get(hc, "Runtime")), "runc");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "ALL");
    cr_assert_eq(json_array_size(json_object_get(hc, "CapAdd")), 2);
    cr_assert(json_is_true(json_object_get(hc, "ReadonlyRootfs")));
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(j, "Labels"), EGRESS_GUARD_LABEL)),
        "inst-1");
    const char *want[] = {"iptables",      "-w", "5",     "-I", "OUTPUT", "-d",
                          "127.0.0.11/32", "-j", "REJECT"};
    json_t *ep = json_object_get(j, "Entrypoint");
    cr_assert_eq(json_array_size(ep), sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_assert_str_eq(json_string_value(json_array_get(ep, i)), want[i]);
    json_decref(j);
}

Test(egress_guard, a_network_without_a_guard_image_is_refused)
{
    char *argv[] = {(char[]){"sandgate-executor"},
                    (char[]){"--language"},
                    (char[]){"python"},
                    (char[]){"--egress-network"},
                    (char[]){"sg-net"},
                    (char[]){"--egress-proxy"},
                    (char[]){"172.30.0.2:3128"},
                    (char[]){"--egress-guard-image"},
                    (char[]){"sandgate/egress:t"},
                    NULL};
    struct exec_config c;
    struct sg_error e = {0};
    unsetenv("SANDGATE_EGRESS_GUARD_IMAGE");
    cr_assert_eq(exec_config_parse(9, argv, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.egress_guard_image, "sandgate/egress:t");
    cr_assert_lt(exec_config_parse(7, argv, &c, &e), 0);
    cr_assert(strstr(e.msg, "--egress-guard-image") != NULL, "%s", e.msg);
}
