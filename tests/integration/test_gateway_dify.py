"""Dify's sandbox API on its own listener (the real sandgate, fake executors):
dify-sandbox's routes and answer shapes exactly, X-Api-Key as a tenant's
token, script mode, the preload, enable_network as the tenant's default
list, policy rejections in `error`, MAX_REQUESTS, the rate limit, the
dependency listing and dify-sandbox's environment names."""
import threading
import time
import unittest

import gateway_fakes
import sgtest
from gateway_fakes import FakeExecutor, Gateway

KEY = "dify-tenant-key-0123456789"
NET_KEY = "dify-networked-key-0123456789"
SLOW_KEY = "dify-slow-key-0123456789"
TOKENS = {"tenants": {
    "dify": {"tokens": [KEY], "policies": ["dify"]},
    "difynet": {"tokens": [NET_KEY], "policies": ["dify"],
                "network": {"allow": ["api.example.com:443"],
                            "default": ["api.example.com:443"]}},
    "slow": {"tokens": [SLOW_KEY], "rate_limit": {"per_second": 1, "burst": 1}},
}}
H = {"X-Api-Key": KEY}


def ran(job, status="success", stdout="", stderr="", exit_code=0, limit=None, violations=None):
    return {"job_id": job["job_id"], "status": status, "stdout": stdout, "stderr": stderr,
            "exit_code": exit_code, "detail": None, "time_used_ms": 1.0,
            "memory_used_kb": 1024, "resource_limit_type": limit,
            "unauthorized_access_type": None, "runtime_error_type": None, "artifacts": [],
            "result": {"present": False, "value": None, "type": "json"},
            "denials": violations or []}


class DifyCase(gateway_fakes.GatewayWithFakes):
    config = {}

    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.dport = sgtest.free_port()
        cfg = {"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
               "dify_port": self.dport}
        cfg.update(self.config)
        self.gw = Gateway(cfg, tokens=TOKENS, env=getattr(self, "env", None))

    def dify(self, method, path, body=None, headers=H):
        return sgtest.http(method, f"http://127.0.0.1:{self.dport}{path}", body, headers)

    def run_code(self, code, language="python3", headers=H, **extra):
        return self.dify("POST", "/v1/sandbox/run",
                         dict({"language": language, "code": code, "preload": "",
                               "enable_network": True}, **extra), headers)


class DifyApi(DifyCase):
    def test_health_needs_no_key(self):
        self.assertEqual(self.dify("GET", "/health", headers={})[::2], (200, "ok"))

    def test_wrong_or_missing_key_is_401_with_an_empty_body(self):
        for headers in ({}, {"X-Api-Key": "nope"}, {"Authorization": f"Bearer {KEY}"}):
            st, _, body = self.run_code("print(1)", headers=headers)
            self.assertEqual((st, body), (401, ""), headers)
        self.assertEqual(self.py.calls, 0)

    def test_malformed_bodies_answer_as_dify_sandbox(self):
        st, _, b = self.dify("POST", "/v1/sandbox/run", {"language": "python3"})
        self.assertEqual((st, b["code"], b["data"]), (200, -400, None), b)
        self.assertIn("'code'", b["message"])
        st, _, b = self.dify("POST", "/v1/sandbox/run", {"language": "ruby", "code": "1"})
        self.assertEqual((st, b), (400, {"code": -400, "message": "unsupported language",
                                         "data": None}))
        st, _, b = self.dify("POST", "/v1/sandbox/run", "not json")
        self.assertEqual((st, b["code"]), (200, -400), b)
        self.assertEqual(self.py.calls, 0)

    def test_python_script_mode_and_preload_first(self):
        self.py.answer = lambda job: ran(job, stdout="Hello World\n")
        st, _, b = self.run_code('print("Hello World")', preload="import json")
        self.assertEqual(st, 200, b)
        self.assertEqual(b, {"code": 0, "message": "success",
                             "data": {"stdout": "Hello World\n", "stderr": "", "error": "",
                                      "exit_code": 0}})
        job = self.py.jobs[-1]
        self.assertEqual((job["mode"], job["code"]), ("script", 'import json\nprint("Hello World")'))
        self.assertEqual(job["arguments"], {})
        self.assertNotIn("network", job)  # this tenant has no network

    def test_nodejs_goes_to_the_node_executor(self):
        self.js.answer = lambda job: ran(job, stdout="Hello World\n")
        st, _, b = self.run_code('console.log("Hello World")', language="nodejs")
        self.assertEqual((st, b["data"]["stdout"]), (200, "Hello World\n"), b)
        self.assertEqual((self.js.calls, self.js.jobs[-1]["mode"]), (1, "script"))

    def test_error_is_built_as_dify_sandbox_builds_it(self):
        cases = (
            (dict(stderr="WARNING:root:log\n"), 0, ""),  # logging alone is no error
            (dict(status="program_error", stderr="Traceback ...\nValueError: x\n", exit_code=1),
             1, "process exited with code 1\nTraceback ...\nValueError: x\n"),
            (dict(status="program_error", exit_code=3), 3, "process exited with code 3"),
            (dict(status="resource_limit_exceeded", limit="time", exit_code=-124), -1,
             "process exited with code -1\nerror: timeout\n"),
            (dict(status="resource_limit_exceeded", limit="memory", exit_code=-9,
                  stderr="partial\n"), -1,
             "process exited with code -1\nerror: memory limit exceeded\npartial\n"),
        )
        for fields, exit_code, error in cases:
            self.py.answer = lambda job, f=fields: ran(job, **f)
            st, _, b = self.run_code("print(1)")
            self.assertEqual((st, b["code"]), (200, 0), b)
            self.assertEqual((b["data"]["exit_code"], b["data"]["error"]), (exit_code, error),
                             fields)

    def test_runner_failure_is_code_minus_500(self):
        self.py.answer = lambda job: dict(ran(job, status="program_runner_error"),
                                          detail="sandbox start failed")
        st, _, b = self.run_code("print(1)")
        self.assertEqual((st, b["code"], b["message"], b["data"]),
                         (200, -500, "sandbox start failed", None), b)

    def test_policy_rejection_names_rule_line_and_column_and_runs_nothing(self):
        code = "print(1)\nimport subprocess\nsubprocess.run(['id'])\n"
        st, _, b = self.run_code(code, preload="import json\n")
        self.assertEqual((st, b["code"]), (200, 0), b)
        self.assertIn("line 2, column 8:", b["data"]["error"])
        self.assertIn("[import.not-allowed]", b["data"]["error"])
        self.assertIn("rejected by policy 'dify'", b["data"]["error"])
        self.assertEqual(b["data"]["stdout"], "")
        self.assertEqual(self.py.calls, 0)

    def test_jinja2_and_httpx_pass_the_dify_policy(self):
        self.py.answer = lambda job: ran(job, stdout="<<RESULT>>Hello World<<RESULT>>\n")
        st, _, b = self.run_code("import jinja2\nprint(jinja2.Template('x').render())\n")
        self.assertEqual((st, b["data"]["error"]), (200, ""), b)

    def test_enable_network_is_the_tenants_default_list_never_a_refusal(self):
        st, _, b = self.run_code("import httpx\nprint(httpx.get('https://api.example.com/'))\n")
        self.assertEqual((st, b["code"]), (200, 0), b)
        self.assertIn("[network.disabled]", b["data"]["error"])
        self.assertEqual(self.py.calls, 0)
        st, _, b = self.run_code("import httpx\nprint(httpx.get('https://api.example.com/'))\n",
                                 headers={"X-Api-Key": NET_KEY})
        self.assertEqual((st, b["data"]["error"]), (200, ""), b)
        self.assertEqual(self.py.jobs[-1]["network"], {"allow": ["api.example.com:443"]})
        st, _, b = self.run_code("print(1)", headers={"X-Api-Key": NET_KEY},
                                 enable_network=False)
        self.assertNotIn("network", self.py.jobs[-1])

    def test_over_rate_is_429_minus_429(self):
        answers = [self.run_code("print(1)", headers={"X-Api-Key": SLOW_KEY}) for _ in range(3)]
        st, hdrs, b = answers[-1]
        self.assertEqual((st, b["code"]), (429, -429), b)
        self.assertGreaterEqual(int(hdrs["retry-after"]), 1)

    def test_dependencies_from_the_runtime_listing(self):
        self.py.runtime = {"language": "python", "stdlib_modules": ["json"],
                           "packages": [{"name": "requests", "version": "2.28.1",
                                         "modules": ["requests"]}]}
        for path in ("/v1/sandbox/dependencies?language=python3",
                     "/v1/sandbox/dependencies/refresh?language=python3"):
            st, _, b = self.dify("GET", path)
            self.assertEqual((st, b), (200, {"code": 0, "message": "success", "data": {
                "dependencies": [{"name": "requests", "version": "2.28.1"}]}}), path)
        st, _, b = self.dify("GET", "/v1/sandbox/dependencies?language=nodejs")
        self.assertEqual((st, b["message"]), (400, "unsupported language"))
        st, _, b = self.dify("GET", "/v1/sandbox/dependencies?language=python3", headers={})
        self.assertEqual((st, b), (401, ""))

    def test_audited_as_endpoint_dify(self):
        self.py.answer = lambda job: ran(job, stdout="x\n")
        st, hdrs, _ = self.run_code("print('x')")
        a = self.gw.audit_line(hdrs["x-request-id"])
        self.assertEqual((a["endpoint"], a["tenant"], a["policy"], a["verdict"], a["outcome"]),
                         ("dify", "dify", "dify", "accept", "success"), a)
        st, hdrs, _ = self.run_code("print(1)", headers={"X-Api-Key": "wrong"})
        self.assertEqual(self.gw.audit_line(hdrs["x-request-id"])["outcome"], "unauthorized")


class DifyMaxRequests(DifyCase):
    config = {"dify_max_requests": 1}

    def test_more_than_max_requests_at_once_is_503(self):
        self.py.delay = 1.5
        first = []
        t = threading.Thread(target=lambda: first.append(self.run_code("print(1)")))
        t.start()
        self.gw.wait_for(lambda: self.py.calls == 1, what="the first run at the executor")
        st, _, b = self.run_code("print(2)")
        t.join()
        self.assertEqual((st, b), (503, {"code": -503, "message": "Too many requests",
                                         "data": None}))
        self.assertEqual(first[0][0], 200)


class DifyEnvironment(DifyCase):
    """dify-sandbox's own variable names, without a tokens file."""
    env = {"API_KEY": "dify-sandbox", "WORKER_TIMEOUT": "3", "ENABLE_NETWORK": "false"}

    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.dport = sgtest.free_port()
        env = dict(self.env, SANDGATE_DIFY_PORT=str(self.dport))
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          env=env)

    def test_api_key_worker_timeout_and_enable_network(self):
        st, _, b = self.run_code("print(1)", headers={"X-Api-Key": "dify-sandbox"})
        self.assertEqual((st, b["code"]), (200, 0), b)
        self.assertEqual(self.py.jobs[-1]["limits"]["timeout_ms"], 3000)
        st, _, b = self.run_code("print(1)", headers={"X-Api-Key": "other"})
        self.assertEqual(st, 401)
        st, _, b = self.run_code("import requests\n", headers={"X-Api-Key": "dify-sandbox"})
        self.assertIn("network.disabled", b["data"]["error"])


if __name__ == "__main__":
    unittest.main()
