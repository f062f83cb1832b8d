"""RAGFlow's newest client against POST /run (the real sandgate, fake
executors): its token headers, a real 429 in RAGFlow's result shape, the
optional base_image field, a job that may have run is never a 5xx (the Go
client retries those), and the admin's "Test connection" snippet."""
import base64
import unittest

import gateway_fakes
from gateway_fakes import FakeExecutor, Gateway

TOKEN = "ragflow-token-0123456789abcdef"
SLOW = "ragflow-slow-token-0123456789"
TOKENS = {"tenants": {"ragflow": {"tokens": [TOKEN]},
                      "slow": {"tokens": [SLOW], "rate_limit": {"per_second": 1, "burst": 1}}}}
# What RAGFlow's admin "Test connection" sends (sandbox settings page).
TEST_CONNECTION = ("import json, math\n\n"
                   "def main():\n"
                   "    print('TEST_PASSED')\n"
                   "    return json.dumps({'ok': math.isclose(math.sqrt(4), 2)})\n")


def run_body(code, **extra):
    body = {"code_b64": base64.b64encode(code.encode()).decode(), "language": "python"}
    body.update(extra)
    return body


class RagflowClient(gateway_fakes.GatewayWithFakes):
    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          tokens=TOKENS)

    def test_token_in_bearer_or_x_sandbox_token(self):
        for headers in ({"Authorization": f"Bearer {TOKEN}"}, {"X-Sandbox-Token": TOKEN}):
            st, hdrs, b = self.gw.call("POST", "/run", run_body(TEST_CONNECTION), headers)
            self.assertEqual((st, b["status"]), (200, "success"), (headers, b))
            self.assertEqual(self.gw.audit_line(hdrs["x-request-id"])["tenant"], "ragflow")
        for headers in ({"X-Sandbox-Token": "wrong-token-0123456789"}, {}):
            st, _, b = self.gw.call("POST", "/run", run_body("x = 1"), headers)
            self.assertEqual(st, 401, b)

    def test_over_rate_is_a_real_429_in_ragflows_shape(self):
        answers = [self.gw.call("POST", "/run", run_body("def main():\n    return 1\n"),
                                {"X-Sandbox-Token": SLOW}) for _ in range(3)]
        st, hdrs, b = answers[-1]
        self.assertEqual(st, 429, b)
        self.assertGreaterEqual(int(hdrs["retry-after"]), 1)
        self.assertEqual((b["status"], b["exit_code"], b["stderr"]),
                         ("program_runner_error", -429,
                          "Too many requests, please try again later"), b)
        self.assertEqual((b["stdout"], b["artifacts"], b["result"]["present"]), ("", [], False))
        self.assertEqual(self.gw.audit_line(hdrs["x-request-id"])["outcome"], "rate_limited")

    def test_base_image_naming_a_flavour_picks_it_else_is_ignored(self):
        for base_image, flavour in (("pandas", "pandas"), ("sandbox-base-python:latest", None),
                                    (7, None)):
            st, _, b = self.gw.call("POST", "/run",
                                    run_body("def main():\n    return 1\n",
                                             base_image=base_image),
                                    {"X-Sandbox-Token": TOKEN})
            self.assertEqual((st, b["status"]), (200, "success"), b)
            self.assertEqual(self.py.jobs[-1].get("flavour"), flavour, base_image)

    def test_a_job_that_may_have_run_is_200_never_5xx(self):
        self.py.mode = "hangup"  # the executor took the job and died: it may have run
        st, hdrs, b = self.gw.call("POST", "/run", run_body("def main():\n    return 1\n"),
                                   {"X-Sandbox-Token": TOKEN})
        self.assertEqual(st, 200, b)
        self.assertEqual((b["status"], b["detail"], b["exit_code"]),
                         ("program_runner_error", "executor_failed", -1), b)
        self.assertEqual(self.py.calls, 1, "sent once, never again")
        self.assertEqual(self.gw.audit_line(hdrs["x-request-id"])["outcome"], "executor_failed")
        # the native API keeps its status code
        st, _, b = self.gw.call("POST", "/v1/run", {"language": "python",
                                                   "code": "def main():\n    return 1\n"},
                                {"X-Sandbox-Token": TOKEN})
        self.assertEqual((st, b["error"]["code"]), (502, "executor_failed"), b)

    def test_test_connection_snippet_passes_the_policy_and_runs(self):
        calls = self.py.calls
        st, _, b = self.gw.call("POST", "/run", run_body(TEST_CONNECTION),
                                {"X-Sandbox-Token": TOKEN})
        self.assertEqual((st, b["status"]), (200, "success"), b)
        self.assertEqual(self.py.calls, calls + 1)
        self.assertEqual(self.py.jobs[-1]["code"], TEST_CONNECTION)


if __name__ == "__main__":
    unittest.main()
