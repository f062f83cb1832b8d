"""The real sandgate binary over HTTP with fake executors: request
validation (every 4xx path), the RAGFlow rejection shape, accepted-job
forwarding, the native endpoints, auth and tenants, rate limits, the audit
log, configuration (RAGFlow's env names, -t) and the informational endpoints."""
import base64
import hashlib
import json
import os
import subprocess
import unittest

import sgtest
from gateway_fakes import GatewayWithFakes, FakeExecutor, Gateway, policy_with

OK_PY = "def main(x=1):\n    return {'x': x}\n"
BAD_PY = "import os\n\ndef main():\n    return os.system('id')\n"
TOKEN_A = "tenant-a-token-0123456789"
TOKEN_B = "tenant-b-token-0123456789"
RAGFLOW_KEYS = {"status", "stdout", "stderr", "exit_code", "detail", "time_used_ms",
                "memory_used_kb", "resource_limit_type", "unauthorized_access_type",
                "runtime_error_type", "artifacts", "result"}


def b64(s):
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


class GatewayCase(GatewayWithFakes):
    gw_config = None
    gw_env = None
    gw_tokens = None

    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        cfg = {"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
               "max_body_bytes": 64 * 1024, "max_code_bytes": 8 * 1024}
        cfg.update(self.gw_config or {})
        self.gw = Gateway(cfg, env=self.gw_env, tokens=self.gw_tokens,
                          policies={"closed": policy_with("closed", enabled=False)})


    def run_ragflow(self, code, language="python", arguments=None, headers=None):
        body = {"code_b64": b64(code), "language": language, "arguments": arguments or {}}
        return self.gw.call("POST", "/run", body, headers)

    def assert_error(self, resp, status, code, needle=None):
        st, _, body = resp
        self.assertEqual(st, status, body)
        self.assertEqual(body["error"]["code"], code, body)
        if needle:
            self.assertIn(needle, body["error"]["message"])


class TestValidation(GatewayCase):
    def test_every_malformed_request_is_refused_before_any_executor(self):
        cases = [
            ("/run", b"{not json", 400, "bad_json", "invalid JSON"),
            ("/run", b"[1,2]", 400, "bad_json", None),
            ("/run", {"language": "python"}, 400, "bad_request", "code_b64"),
            ("/run", {"code_b64": 12}, 400, "bad_type", "code_b64"),
            ("/run", {"code_b64": "###="}, 400, "bad_base64", "code_b64"),
            ("/run", {"code_b64": b64(OK_PY), "language": "ruby"}, 400, "unknown_language",
             "language"),
            ("/run", {"code_b64": b64(OK_PY), "language": ["python"]}, 400, "bad_type",
             "language"),
            ("/run", {"code_b64": b64(OK_PY), "arguments": [1]}, 400, "bad_type", "arguments"),
            ("/run", {"code_b64": b64(OK_PY), "arguments": {"a": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[
                [[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}, 400, "arguments_too_deep",
             "arguments"),
            ("/run", {"code_b64": b64("x" * 9000)}, 413, "code_too_large", "code_b64"),
            ("/v1/run", {"code": OK_PY}, 400, "bad_request", "language"),
            ("/v1/run", {"language": "python", "code": OK_PY, "nope": 1}, 400, "unknown_field",
             "nope"),
            ("/v1/run", {"language": "python", "code": OK_PY, "limits": {"timeout_ms": "1"}},
             400, "bad_type", "limits.timeout_ms"),
            ("/v1/run", {"language": "python", "code": OK_PY,
                         "limits": {"timeout_ms": 10 ** 9}}, 400, "limit_too_high",
             "limits.timeout_ms"),
            ("/v1/run", {"language": "python", "code": OK_PY, "files": {"../etc": ""}}, 400,
             "bad_file_name", "../etc"),
            ("/v1/run", {"language": "python", "code": OK_PY, "files": {"a": "!!"}}, 400,
             "bad_base64", "files.a"),
            ("/v1/run", {"language": "python", "code": OK_PY, "policy": "nosuch"}, 400,
             "unknown_policy", "nosuch"),
            ("/v1/analyze", {"language": "python"}, 400, "bad_request", "code_b64"),
        ]
        for path, body, status, code, needle in cases:
            with self.subTest(path=path, body=str(body)[:60]):
                self.assert_error(self.gw.call("POST", path, body), status, code, needle)
        self.assertEqual(self.py.calls + self.js.calls, 0, "nothing malformed is forwarded")

    def test_body_over_the_cap_is_413(self):
        st, _, body = self.gw.call("POST", "/run", b"{" + b" " * (70 * 1024) + b"}")
        self.assertEqual(st, 413)
        self.assertEqual(body["error"]["code"], "body_too_large")
        self.assertEqual(self.py.calls, 0)

    def test_unknown_path_and_wrong_method(self):
        self.assert_error(self.gw.call("GET", "/nope"), 404, "not_found")
        st, hdrs, body = self.gw.call("GET", "/run")
        self.assertEqual(st, 405)
        self.assertEqual(hdrs.get("allow"), "POST")
        st, _, _ = self.gw.call("POST", "/healthz", {})
        self.assertEqual(st, 405)


class TestPolicyAndForwarding(GatewayCase):
    def test_rejection_has_ragflows_unsafe_shape_and_never_runs(self):
        st, hdrs, body = self.run_ragflow(BAD_PY)
        self.assertEqual(st, 200, body)
        self.assertTrue(RAGFLOW_KEYS <= set(body), body)
        self.assertEqual(body["status"], "program_runner_error")
        self.assertEqual(body["exit_code"], -999)
        self.assertEqual(body["detail"], "Code is unsafe")
        self.assertTrue(body["stderr"].startswith("Line 1: "), body["stderr"])
        self.assertEqual(body["result"], {"present": False, "value": None, "type": "json"})
        rules = [v["rule"] for v in body["violations"]]
        self.assertIn("import.not-allowed", rules)
        v = body["violations"][0]
        self.assertEqual((v["line"], v["column"]), (1, 8), "points at the module name")
        self.assertEqual(self.py.calls, 0, "a rejected job never reaches an executor")
        self.assertEqual(len(hdrs.get("x-request-id", "")), 16)

    def test_canonicalisation_rejects_nul_before_parsing(self):
        st, _, body = self.run_ragflow(b"def main():\n    return 1\x00\n")
        self.assertEqual(st, 200)
        self.assertEqual(body["exit_code"], -999)
        self.assertIn("source.nul-byte", [v["rule"] for v in body["violations"]])
        self.assertEqual(self.py.calls, 0)

    def test_disabled_language_policy_rejects(self):
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": OK_PY,
                                                       "policy": "closed"})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["violations"][0]["rule"], "language.disabled")
        self.assertEqual(body["policy"]["name"], "closed")
        self.assertEqual(self.py.calls, 0)

    def test_accepted_job_is_forwarded_with_the_checked_bytes(self):
        st, _, body = self.run_ragflow(OK_PY, arguments={"x": 5})
        self.assertEqual(st, 200, body)
        self.assertEqual(set(body), RAGFLOW_KEYS, "exactly RAGFlow's fields on /run")
        self.assertEqual(body["status"], "success")
        self.assertEqual(body["stdout"], "hello\n")
        self.assertEqual(body["result"], {"present": True, "value": {"echo": {"x": 5}},
                                          "type": "json"})
        self.assertEqual(self.py.calls, 1)
        job = self.py.jobs[0]
        self.assertEqual(job["code"], OK_PY)
        self.assertEqual(job["language"], "python")
        self.assertEqual(job["arguments"], {"x": 5})
        self.assertEqual(job["limits"], {"timeout_ms": 10000, "memory_mb": 256})
        self.assertRegex(job["job_id"], r"^[0-9a-f]{16}$")
        self.assertEqual(self.py.headers[0].get("Authorization"), None)

    def test_javascript_alias_goes_to_the_nodejs_executor(self):
        st, _, body = self.run_ragflow("function main(a) { return a; }\nmodule.exports = "
                                       "{ main };\n", language="javascript")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "success")
        self.assertEqual((self.js.calls, self.py.calls), (1, 0))
        self.assertEqual(self.js.jobs[0]["language"], "nodejs")

    def test_native_run_carries_job_policy_and_timings(self):
        st, _, body = self.gw.call("POST", "/v1/run", {
            "language": "python", "code": OK_PY, "arguments": {"x": 2}, "policy": "strict",
            "limits": {"timeout_ms": 1500, "memory_mb": 128}, "files": {"in.csv": b64("a,b")}})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "success")
        self.assertRegex(body["job_id"], r"^[0-9a-f]{16}$")
        self.assertEqual(body["policy"]["name"], "strict")
        self.assertEqual(len(body["policy"]["sha256"]), 64)
        self.assertEqual(body["violations"], [])
        for k in ("analysis_ms", "exec_ms", "total_ms"):
            self.assertIn(k, body["timings"])
        job = self.py.jobs[0]
        self.assertEqual(job["job_id"], body["job_id"])
        self.assertEqual(job["limits"], {"timeout_ms": 1500, "memory_mb": 128})
        self.assertEqual(job["files"], {"in.csv": b64("a,b")})
        self.assertEqual(body["limits"], {"timeout_ms": 1500, "memory_mb": 128})

    def test_analyze_endpoint(self):
        st, _, body = self.gw.call("POST", "/v1/analyze", {"language": "python", "code": OK_PY})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["verdict"], "accept")
        self.assertEqual(body["violations"], [])
        self.assertEqual(body["policy"]["name"], "default")
        self.assertGreater(body["stats"]["nodes"], 0)
        st, _, body = self.gw.call("POST", "/v1/analyze", {"language": "python",
                                                           "code_b64": b64(BAD_PY)})
        self.assertEqual(body["verdict"], "reject")
        self.assertEqual(body["violations"][0]["rule"], "import.not-allowed")
        self.assertEqual(self.py.calls, 0)

    def test_executor_result_fields_are_sanitised(self):
        self.py.answer = lambda job: {"status": "program_error", "exit_code": "x",
                                      "stdout": 5, "result": {"present": "yes"}}
        st, _, body = self.run_ragflow(OK_PY)
        self.assertEqual(st, 200)
        self.assertEqual(set(body), RAGFLOW_KEYS)
        self.assertEqual(body["status"], "program_error")
        self.assertEqual(body["stdout"], "")
        self.assertEqual(body["result"]["present"], False)

    def test_audit_line_per_request_without_code(self):
        self.run_ragflow(OK_PY)
        self.run_ragflow(BAD_PY)
        self.gw.call("POST", "/run", b"{bad")
        self.gw.wait_for(lambda: len(self.gw.audit_lines()) >= 3, what="3 audit lines")
        ok, bad, broken = self.gw.audit_lines()[:3]
        self.assertEqual(ok["verdict"], "accept")
        self.assertEqual(ok["outcome"], "success")
        self.assertEqual(ok["executor"], self.py.url)
        self.assertEqual(ok["code_bytes"], len(OK_PY))
        self.assertEqual(ok["code_sha256"], hashlib.sha256(OK_PY.encode()).hexdigest())
        self.assertEqual(len(ok["policy_sha256"]), 64)
        self.assertEqual(ok["tenant"], "anonymous")
        self.assertEqual(bad["verdict"], "reject")
        self.assertEqual(bad["rules"][0], "import.not-allowed")
        self.assertIsNone(bad["executor"])
        self.assertEqual((broken["status"], broken["outcome"]), (400, "bad_json"))
        # code is kept only as audit_code says: by default a rejection's, for
        # the console's job page (gateway.md, "What the audit keeps of the code")
        self.assertEqual(bad["code"], BAD_PY)
        self.assertEqual(bad["violations"][0]["rule"], "import.not-allowed")
        self.assertNotIn("code", ok)
        with open(self.gw.audit_path) as f:
            text = f.read()
        self.assertNotIn("return {'x'", text, "an accepted job's code is not kept")

    def test_informational_endpoints(self):
        st, _, body = self.gw.call("GET", "/healthz")
        self.assertEqual((st, body), (200, {"status": "ok"}))
        st, _, body = self.gw.call("GET", "/readyz")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "ready")
        self.assertTrue(body["audit"]["writable"])
        self.assertTrue(body["executors"]["python"][0]["healthy"])
        st, _, body = self.gw.call("GET", "/v1/policies")
        names = {p["name"] for p in body["policies"]}
        self.assertTrue({"default", "strict", "permissive", "closed"} <= names)
        self.assertEqual(body["default"], "default")
        self.run_ragflow(BAD_PY)
        st, hdrs, text = self.gw.call("GET", "/metrics")
        self.assertEqual(st, 200)
        self.assertTrue(hdrs["content-type"].startswith("text/plain"))
        for needle in ('sandgate_requests_total{endpoint="run",status="200"} 1',
                       'sandgate_violations_total{rule="import.not-allowed"} 1',
                       'sandgate_verdicts_total{verdict="reject"} 1',
                       "sandgate_analysis_seconds_count 1",
                       f'sandgate_executor_up{{language="python",url="{self.py.url}"}} 1',
                       "sandgate_audit_writable 1"):
            self.assertIn(needle, text)

    def test_readyz_reports_a_down_executor(self):
        self.js.healthy = False
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 503, what="not ready")
        st, _, body = self.gw.call("GET", "/readyz")
        self.assertFalse(body["executors"]["nodejs"][0]["healthy"])
        self.js.healthy = True
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 200, what="ready again")


class TestRagflowEnv(GatewayCase):
    gw_env = {"SANDBOX_TIMEOUT": "3s", "SANDBOX_MAX_MEMORY": "512m",
              "SANDBOX_ENABLE_SECCOMP": "true"}

    def test_ragflow_env_names_become_job_limits(self):
        st, _, body = self.run_ragflow(OK_PY)
        self.assertEqual(st, 200, body)
        self.assertEqual(self.py.jobs[0]["limits"],
                         {"timeout_ms": 3000, "memory_mb": 512, "enable_seccomp": True})


TENANTS = {"tenants": {
    "a": {"tokens": [TOKEN_A], "policies": ["default", "strict"], "default_policy": "default",
          "rate_limit": {"per_second": 1, "burst": 3},
          "max_limits": {"timeout_ms": 2000}},
    "b": {"tokens": [TOKEN_B], "default_policy": "closed"},
}}


class TestAuth(GatewayCase):
    gw_tokens = TENANTS

    def setUp(self):
        self.secret = os.path.join(sgtest.ROOT, "build", f"exec-secret-{os.getpid()}")
        with open(self.secret, "w") as f:
            f.write("executor-shared-secret\n")
        self.addCleanup(os.unlink, self.secret)
        self.gw_config = {"executor_token_file": self.secret}
        super().setUp()

    def test_tokens_required_and_both_headers_accepted(self):
        self.assert_error(self.run_ragflow(OK_PY), 401, "unauthorized", "missing token")
        self.assert_error(self.run_ragflow(OK_PY, headers={"X-Sandbox-Token": "wrong-token-"
                                                           "0123456789"}), 401, "unauthorized",
                          "invalid token")
        self.assert_error(self.run_ragflow(OK_PY, headers={"Authorization": "Bearer " +
                                                           TOKEN_A[:-1]}), 401, "unauthorized")
        st, _, body = self.run_ragflow(OK_PY, headers={"X-Sandbox-Token": TOKEN_A})
        self.assertEqual((st, body["status"]), (200, "success"))
        st, _, body = self.run_ragflow(OK_PY, headers={"Authorization": "Bearer " + TOKEN_A})
        self.assertEqual(st, 200)
        self.assertEqual(self.py.calls, 2, "only authenticated jobs ran")
        self.assertEqual(self.py.headers[0].get("Authorization"),
                         "Bearer executor-shared-secret")
        self.assert_error(self.gw.call("GET", "/v1/policies"), 401, "unauthorized")
        self.gw.wait_for(lambda: len(self.gw.audit_lines()) >= 5, what="audit")
        self.assertEqual([x["tenant"] for x in self.gw.audit_lines()[3:5]], ["a", "a"])

    def test_tenant_default_policy_and_allowed_policies(self):
        hb = {"X-Sandbox-Token": TOKEN_B}
        st, _, body = self.run_ragflow(OK_PY, headers=hb)
        self.assertEqual(body["violations"][0]["rule"], "language.disabled",
                         "tenant b runs under its default policy 'closed'")
        self.assert_error(self.gw.call("POST", "/v1/run", {"language": "python", "code": OK_PY,
                                                           "policy": "permissive"}, hb),
                          403, "policy_not_allowed")
        ha = {"X-Sandbox-Token": TOKEN_A}
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": OK_PY,
                                                       "policy": "strict"}, ha)
        self.assertEqual((st, body["policy"]["name"]), (200, "strict"))
        self.assert_error(self.gw.call("POST", "/v1/run", {"language": "python", "code": OK_PY,
                                                           "limits": {"timeout_ms": 2001}}, ha),
                          400, "limit_too_high", "2000")
        st, _, body = self.gw.call("GET", "/v1/policies", headers=ha)
        allowed = {p["name"]: p["allowed"] for p in body["policies"]}
        self.assertEqual((allowed["strict"], allowed["permissive"]), (True, False))

    def test_rate_limit_is_per_tenant_with_retry_after(self):
        ha = {"X-Sandbox-Token": TOKEN_A}
        codes = [self.gw.call("POST", "/v1/analyze", {"language": "python", "code": OK_PY},
                              ha)[0] for _ in range(3)]
        self.assertEqual(codes, [200, 200, 200])
        st, hdrs, body = self.gw.call("POST", "/v1/analyze", {"language": "python",
                                                              "code": OK_PY}, ha)
        self.assertEqual(st, 429, body)
        self.assertEqual(body["error"]["code"], "rate_limited")
        self.assertEqual(hdrs.get("retry-after"), "1")
        st, _, _ = self.gw.call("POST", "/v1/analyze", {"language": "python", "code": OK_PY},
                                {"X-Sandbox-Token": TOKEN_B})
        self.assertEqual(st, 200, "another tenant is not limited")


class TestStartup(unittest.TestCase):
    def run_sandgate(self, args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        return subprocess.run([sgtest.binary("sandgate")] + args, capture_output=True,
                              text=True, env=e, timeout=30)

    def test_non_loopback_without_tokens_refuses_to_start(self):
        r = self.run_sandgate([], {"SANDGATE_LISTEN": "0.0.0.0",
                                   "SANDGATE_PORT": str(sgtest.free_port())})
        self.assertEqual(r.returncode, 1)
        self.assertIn("tokens_file", r.stderr)

    def test_check_mode(self):
        gw = Gateway({"executors": {"python": ["http://127.0.0.1:1"]}}, start=False)
        try:
            r = self.run_sandgate(["-t", "-c", gw.config_path])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("valid", r.stdout)
            gw.write_policy("broken", '{"name": "broken", "python": 1}')
            r = self.run_sandgate(["-t", "-c", gw.config_path])
            self.assertEqual(r.returncode, 1)
            self.assertIn("broken", r.stderr)
            os.unlink(os.path.join(gw.policies_dir, "broken.json"))
            r = self.run_sandgate(["-t", "-c", gw.config_path],
                                  {"SANDGATE_TOKENS_FILE": "/nonexistent/tokens.json"})
            self.assertEqual(r.returncode, 1)
            self.assertIn("/nonexistent/tokens.json", r.stderr)
            r = self.run_sandgate(["-t", "-c", gw.config_path], {"SANDBOX_TIMEOUT": "soon"})
            self.assertEqual(r.returncode, 1)
            self.assertIn("SANDBOX_TIMEOUT", r.stderr)
        finally:
            gw.stop()

    def test_help_lists_endpoints_and_keys(self):
        r = self.run_sandgate(["--help"])
        self.assertEqual(r.returncode, 0)
        for needle in ("/v1/analyze", "X-Sandbox-Token", "SANDBOX_TIMEOUT", "tokens_file",
                       "SIGHUP"):
            self.assertIn(needle, r.stdout)


class TestAuditFailure(GatewayCase):
    gw_config = {"audit_log": "/dev/full"}

    def test_full_disk_is_reported_not_fatal(self):
        st, _, body = self.run_ragflow(OK_PY)
        self.assertEqual(st, 200, "requests are still served")
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 503, what="not ready")
        st, _, body = self.gw.call("GET", "/readyz")
        self.assertFalse(body["audit"]["writable"])
        self.assertGreaterEqual(body["audit"]["write_errors"], 1)
        _, _, text = self.gw.call("GET", "/metrics")
        self.assertIn("sandgate_audit_writable 0", text)


if __name__ == "__main__":
    unittest.main()
