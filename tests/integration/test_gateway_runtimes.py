"""GET /v1/runtimes over real HTTP with fake executors: the gateway asks each
language's executor for its image's listing (with the executor secret) and
adds, for each policy the caller may use, which of the listed modules a job
may import. Tenant-scoped: only the caller's policies appear; a language
whose executor has no listing says so."""
import os
import unittest

import sgtest
from gateway_fakes import GatewayWithFakes, FakeExecutor, Gateway

TOKEN_A = "tenant-a-token-0123456789"
TOKEN_B = "tenant-b-token-0123456789"
PY_LISTING = {
    "language": "python", "interpreter": {"name": "CPython", "version": "3.11.2"},
    "stdlib_modules": ["json", "os", "pathlib", "re", "subprocess"],
    "packages": [{"name": "numpy", "version": "1.24.2", "modules": ["numpy"]},
                 {"name": "tabulate", "version": "0.8.9", "modules": ["tabulate"]}],
    "system_packages": [{"name": "python3", "version": "3.11.2-1+b1"}],
}
TENANTS = {"tenants": {
    "a": {"tokens": [TOKEN_A], "policies": ["default", "strict"]},
    "b": {"tokens": [TOKEN_B], "default_policy": "strict"},
}}


class TestRuntimes(GatewayWithFakes):
    def setUp(self):
        self.secret = os.path.join(sgtest.ROOT, "build", f"rt-secret-{os.getpid()}")
        with open(self.secret, "w") as f:
            f.write("executor-shared-secret\n")
        self.addCleanup(os.unlink, self.secret)
        self.py = FakeExecutor("python")
        self.py.runtime = PY_LISTING
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "executor_token_file": self.secret}, tokens=TENANTS)


    def test_listing_with_what_each_of_the_callers_policies_allows(self):
        self.assertEqual(self.gw.call("GET", "/v1/runtimes")[0], 401)
        st, _, body = self.gw.call("GET", "/v1/runtimes", headers={"X-Sandbox-Token": TOKEN_A})
        self.assertEqual(st, 200, body)
        py = body["runtimes"]["python"]
        self.assertTrue(py["available"])
        self.assertEqual(py["interpreter"]["version"], "3.11.2")
        self.assertEqual([p["name"] for p in py["packages"]], ["numpy", "tabulate"])
        self.assertEqual(sorted(py["policies"]), ["default", "strict"], "a's policies only")
        default = py["policies"]["default"]["importable"]
        self.assertIn("json", default)
        self.assertIn("numpy", default)
        self.assertNotIn("os", default)
        self.assertNotIn("subprocess", default)
        self.assertNotIn("tabulate", default, "installed is not importable: the policy decides")
        self.assertEqual(self.py.headers[-1].get("Authorization"),
                         "Bearer executor-shared-secret")
        js = body["runtimes"]["nodejs"]
        self.assertFalse(js["available"])
        self.assertIn("executor", js["error"])
        st, _, body = self.gw.call("GET", "/v1/runtimes", headers={"X-Sandbox-Token": TOKEN_B})
        self.assertEqual(sorted(body["runtimes"]["python"]["policies"]), ["strict"])
        self.assertEqual(body["default_policy"], "strict")

    def test_no_healthy_executor_is_reported_not_fatal(self):
        self.py.healthy = False
        self.gw.wait_for(lambda: '"healthy":false' in
                         str(self.gw.call("GET", "/readyz")[2]).replace(" ", "").replace(
                             "False", "false").replace("'", '"'), what="python down")
        st, _, body = self.gw.call("GET", "/v1/runtimes", headers={"X-Sandbox-Token": TOKEN_A})
        self.assertEqual(st, 200, body)
        self.assertFalse(body["runtimes"]["python"]["available"])
        self.assertIn("no healthy python executor", body["runtimes"]["python"]["error"])
