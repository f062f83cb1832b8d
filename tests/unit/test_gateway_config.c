/* Unit tests for the gateway's configuration: defaults, the JSON file,
 * environment overrides (RAGFlow's names included) and validation. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gw_config.h"

static struct gw_config cfg;
static struct sg_error err;

static void setup(void)
{
    gw_config_defaults(&cfg);
    memset(&err, 0, sizeof(err));
}

static int load(const char *json)
{
    return gw_config_load_buf(&cfg, json, strlen(json), "test.json", &err);
}

TestSuite(gw_config, .init = setup);

Test(gw_config, defaults_are_valid_and_loopback)
{
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    cr_assert_str_eq(cfg.listen, "127.0.0.1");
    cr_assert_eq(cfg.port, 9385);
    cr_assert_str_eq(cfg.executors[0][0], "http://127.0.0.1:9401");
    cr_assert_str_eq(cfg.executors[1][0], "http://127.0.0.1:9402");
    cr_assert_eq(cfg.enable_seccomp, -1);
}

Test(gw_config, file_sets_keys_and_executors)
{
    cr_assert_eq(
        load("{\"port\": 1234, \"default_timeout_ms\": 5000, \"audit_log\": \"/tmp/a\","
             "\"executors\": {\"python\": [\"http://127.0.0.1:1/\", \"http://127.0.0.2:2\"]},"
             "\"enable_seccomp\": true, \"log_level\": \"debug\"}"),
        0, "%s", err.msg);
    cr_assert_eq(cfg.port, 1234);
    cr_assert_eq(cfg.default_timeout_ms, 5000);
    cr_assert_str_eq(cfg.audit_log, "/tmp/a");
    cr_assert_eq(cfg.executor_count[0], 2);
    cr_assert_str_eq(cfg.executors[0][0], "http://127.0.0.1:1", "trailing slash dropped");
    cr_assert_str_eq(cfg.executors[0][1], "http://127.0.0.2:2");
    cr_assert_eq(cfg.executor_count[1], 1, "nodejs untouched");
    cr_assert_eq(cfg.enable_seccomp, 1);
    cr_assert_eq(cfg.log_level, SG_LOG_DEBUG);
}

Test(gw_config, dify_keys_off_by_default_and_not_on_the_api_port)
{
    cr_assert_eq(cfg.dify_port, 0, "the Dify listener is off unless enabled");
    cr_assert_str_eq(cfg.dify_policy, "dify");
    cr_assert_eq(load("{\"dify_port\": 8194, \"dify_enable_network\": false, "
                      "\"dify_timeout_ms\": 20000, \"dify_api_key\": \"k\"}"),
                 0, "%s", err.msg);
    cr_assert_eq(cfg.dify_port, 8194);
    cr_assert_eq(cfg.dify_enable_network, 0);
    cr_assert_eq(cfg.dify_timeout_ms, 20000);
    cr_assert_eq(cfg.enable_seccomp, -1, "a switch sets its own field only");
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(load("{\"dify_port\": 9385}"), 0, "%s", err.msg);
    cr_assert_neq(gw_config_validate(&cfg, &err), 0);
    cr_assert(strstr(err.msg, "dify_port"), "%s", err.msg);
}

Test(gw_config, unknown_key_is_named)
{
    cr_assert_eq(load("{\"prot\": 1}"), -EINVAL);
    cr_assert(strstr(err.msg, "prot"), "%s", err.msg);
}

Test(gw_config, wrong_type_and_range_are_errors_and_leave_config_unchanged)
{
    cr_assert_eq(load("{\"port\": \"80\"}"), -EINVAL);
    cr_assert(strstr(err.msg, "port"), "%s", err.msg);
    cr_assert_eq(load("{\"port\": 70000}"), -ERANGE);
    cr_assert_eq(load("{\"max_body_bytes\": -1}"), -EINVAL);
    cr_assert_eq(load("{\"port\": 1, \"max_arguments_depth\": 0}"), -ERANGE);
    cr_assert_eq(cfg.port, 9385, "a failed load changes nothing");
}

Test(gw_config, bad_executor_urls_are_refused)
{
    cr_assert_neq(load("{\"executors\": {\"python\": [\"ftp://x\"]}}"), 0);
    cr_assert(strstr(err.msg, "executors.python[0]"), "%s", err.msg);
    cr_assert_neq(load("{\"executors\": {\"ruby\": [\"http://x:1\"]}}"), 0);
    cr_assert_neq(load("{\"executors\": {\"python\": []}}"), 0);
    cr_assert_neq(load("{\"executors\": {\"python\": [\"http://a b\"]}}"), 0);
}

Test(gw_config, discovery_urls_need_a_name_and_a_port)
{
    cr_assert_eq(load("{\"executors\": {\"python\": [\"http://tasks.sg_exec:9401\", "
                      "\"dns+http://exec.ns.svc:9401\"]}}"),
                 0, "%s", err.msg);
    cr_assert_str_eq(cfg.executors[0][1], "dns+http://exec.ns.svc:9401");
    cr_assert_neq(load("{\"executors\": {\"python\": [\"http://tasks.sg_exec\"]}}"), 0);
    cr_assert(strstr(err.msg, "executors.python[0]") && strstr(err.msg, ":PORT"), "%s", err.msg);
    cr_assert_neq(load("{\"executors\": {\"python\": [\"dns+http://127.0.0.1:1/x\"]}}"), 0);
    cr_assert_neq(load("{\"executors\": {\"python\": [\"dns+ftp://x:1\"]}}"), 0);
}

Test(gw_config, bad_json_and_duplicates)
{
    cr_assert_eq(load("{\"port\": 1,"), -EINVAL);
    cr_assert_eq(load("{\"port\": 1, \"port\": 2}"), -EINVAL);
    cr_assert_eq(load("[1]"), -EINVAL);
}

Test(gw_config, ragflow_timeout_in_both_forms)
{
    setenv("SANDBOX_TIMEOUT", "7s", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.default_timeout_ms, 7000);
    setenv("SANDBOX_TIMEOUT", "12", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.default_timeout_ms, 12000);
    setenv("SANDBOX_TIMEOUT", "1m", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.default_timeout_ms, 60000);
    setenv("SANDBOX_TIMEOUT", "ten", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "SANDBOX_TIMEOUT"), "%s", err.msg);
    unsetenv("SANDBOX_TIMEOUT");
}

Test(gw_config, ragflow_memory_and_seccomp)
{
    setenv("SANDBOX_MAX_MEMORY", "512m", 1);
    setenv("SANDBOX_ENABLE_SECCOMP", "true", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.default_memory_mb, 512);
    cr_assert_eq(cfg.enable_seccomp, 1);
    setenv("SANDBOX_MAX_MEMORY", "1g", 1);
    setenv("SANDBOX_ENABLE_SECCOMP", "False", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.default_memory_mb, 1024);
    cr_assert_eq(cfg.enable_seccomp, 0);
    setenv("SANDBOX_MAX_MEMORY", "256x", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "SANDBOX_MAX_MEMORY"), "%s", err.msg);
}

Test(gw_config, sandgate_env_overrides_ragflow_and_file)
{
    cr_assert_eq(load("{\"port\": 1000}"), 0);
    setenv("SANDGATE_PORT", "2000", 1);
    setenv("SANDBOX_TIMEOUT", "5", 1);
    setenv("SANDGATE_DEFAULT_TIMEOUT_MS", "3s", 1);
    setenv("SANDGATE_EXECUTORS_NODEJS", "http://127.0.0.1:5,http://127.0.0.1:6", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.port, 2000);
    cr_assert_eq(cfg.default_timeout_ms, 3000);
    cr_assert_eq(cfg.executor_count[1], 2);
    cr_assert_str_eq(cfg.executors[1][1], "http://127.0.0.1:6");
    setenv("SANDGATE_PORT", "12x", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -EINVAL);
    cr_assert_eq(cfg.port, 2000, "a failed override changes nothing");
}

Test(gw_config, non_loopback_needs_tokens)
{
    snprintf(cfg.listen, sizeof(cfg.listen), "0.0.0.0");
    cr_assert_eq(gw_config_validate(&cfg, &err), -EPERM);
    cr_assert(strstr(err.msg, "tokens_file"), "%s", err.msg);
    snprintf(cfg.tokens_file, sizeof(cfg.tokens_file), "/etc/tokens.json");
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    snprintf(cfg.listen, sizeof(cfg.listen), "::1");
    cfg.tokens_file[0] = '\0';
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    snprintf(cfg.listen, sizeof(cfg.listen), "localhost");
    cr_assert_eq(gw_config_validate(&cfg, &err), -EINVAL, "not an IP literal");
}

Test(gw_config, front_door_limits)
{
    cr_assert_eq(load("{\"max_connections_per_ip\": 8, \"receive_timeout_s\": 5, "
                      "\"max_inflight_requests\": 32, \"max_queued_requests\": 0, "
                      "\"max_bodies_bytes\": 16777216}"),
                 0, "%s", err.msg);
    cr_assert_eq(cfg.max_connections_per_ip, 8);
    cr_assert_eq(cfg.receive_timeout_s, 5);
    cr_assert_eq(cfg.max_inflight_requests, 32);
    cr_assert_eq(cfg.max_queued_requests, 0);
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    cr_assert_lt(load("{\"receive_timeout_s\": 0}"), 0, "a request needs some time");
    cfg.max_bodies_bytes = cfg.max_body_bytes - 1; /* one body could never fit */
    cr_assert_eq(gw_config_validate(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "max_bodies_bytes"), "%s", err.msg);
}

Test(gw_config, connection_limits_and_deadlines)
{
    cr_assert_eq(cfg.max_connections, GW_MAX_CONNECTIONS_DEFAULT);
    cr_assert_eq(cfg.header_timeout_s, 10);
    cr_assert_eq(load("{\"header_timeout_s\": 4, \"max_connections\": 100, "
                      "\"max_connections_per_ip\": 100}"),
                 0, "%s", err.msg);
    cr_assert_eq(cfg.header_timeout_s, 4);
    cr_assert_eq(gw_config_validate(&cfg, &err), 0, "%s", err.msg);
    struct sg_httpsrv_config http;
    gw_config_http(&cfg, 9385, 1024, NULL, &http);
    cr_assert_eq(http.header_timeout_s, 4);
    cr_assert_eq(http.max_connections, 100);
    cr_assert_lt(load("{\"header_timeout_s\": 0}"), 0, "a head needs some time");
    cr_assert_lt(load("{\"header_timeout_s\": 3601}"), 0, "bounded");
    cr_assert_lt(load("{\"max_connections\": 32769}"), 0, "a hostile config is bounded");
    cr_assert_eq(load("{\"max_connections_per_ip\": 101}"), 0, "%s", err.msg);
    cr_assert_eq(gw_config_validate(&cfg, &err), -EINVAL, "more per address than in all");
    cr_assert(strstr(err.msg, "max_connections_per_ip (101) exceeds max_connections (100)"), "%s",
              err.msg);
}

Test(gw_config, default_above_max_is_refused)
{
    cfg.default_timeout_ms = cfg.max_timeout_ms + 1;
    cr_assert_eq(gw_config_validate(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "max_timeout_ms"), "%s", err.msg);
}

Test(gw_config, values_use_the_shared_grammar)
{
    /* The grammar itself is tested in test_common.c (sg_parse); here: which
     * keys take which form, and that messages name the key. */
    setenv("SANDGATE_MAX_TIMEOUT_MS", "1m30s", 1);
    setenv("SANDGATE_MAX_BODY_BYTES", "2048", 1);
    setenv("SANDGATE_ENABLE_SECCOMP", "on", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.max_timeout_ms, 90000);
    cr_assert_eq(cfg.max_body_bytes, 2048);
    cr_assert_eq(cfg.enable_seccomp, 1);
    setenv("SANDGATE_MAX_BODY_BYTES", "2k", 1); /* a count of bytes, not a size */
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "SANDGATE_MAX_BODY_BYTES: max_body_bytes: '2k' is not an unsigned "
                              "integer"),
              "%s", err.msg);
    setenv("SANDGATE_MAX_BODY_BYTES", "", 1); /* empty: unset */
    setenv("SANDGATE_ENABLE_SECCOMP", "maybe", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -EINVAL);
    cr_assert(strstr(err.msg, "enable_seccomp: 'maybe' is not a boolean"), "%s", err.msg);
    unsetenv("SANDGATE_ENABLE_SECCOMP");
    setenv("SANDBOX_MAX_MEMORY", "99999999999999999999g", 1);
    cr_assert_eq(gw_config_apply_env(&cfg, &err), -ERANGE);
    cr_assert(strstr(err.msg, "SANDBOX_MAX_MEMORY: '99999999999999999999g' is too large"), "%s",
              err.msg);
    unsetenv("SANDBOX_MAX_MEMORY");
    unsetenv("SANDGATE_MAX_TIMEOUT_MS");
    unsetenv("SANDGATE_MAX_BODY_BYTES");
    cr_assert(gw_addr_is_loopback("127.8.9.1"));
    cr_assert(!gw_addr_is_loopback("10.0.0.1"));
    cr_assert(!gw_addr_is_loopback("::"));
}

Test(gw_config, file_loading_errors_name_the_file)
{
    char path[] = "/tmp/gwcfg-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "{\"port\": 5}", 11), 11);
    close(fd);
    cr_assert_eq(gw_config_load_file(&cfg, path, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.port, 5);
    unlink(path);
    cr_assert_eq(gw_config_load_file(&cfg, path, &err), -ENOENT);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
}

Test(gw_config, help_lists_every_key_and_env)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gw_config_print_help(f);
    fclose(f);
    const char *must[] = {"listen",
                          "SANDGATE_LISTEN",
                          "tokens_file",
                          "max_files_bytes",
                          "SANDBOX_TIMEOUT",
                          "SANDBOX_MAX_MEMORY",
                          "SANDBOX_ENABLE_SECCOMP",
                          "SANDGATE_EXECUTORS_PYTHON",
                          "drain_timeout_ms",
                          "busy_retries"};
    for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
        cr_assert(strstr(text, must[i]), "help lacks %s", must[i]);
    free(text);
}
