"""GET /v1/runtimes over real HTTP with fake executors: the gateway asks each
language's executor for its image's listing (with the executor secret) and
adds, for each policy the caller may use, which of the listed modules a job
may import. Tenant-scoped: only the caller's policies appear; a language
whose executor has no listing says so."""
import base64
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


SET_LISTING = dict(PY_LISTING, sets=[{
    "set": "xl", "language": "python", "image": "sandgate/set-python-xl:t", "preimport": [],
    "packages": [{"name": "openpyxl", "version": "3.1.2", "kind": "wheel",
                  "source": "openpyxl-3.1.2-py2.py3-none-any.whl sha256:00",
                  "modules": ["openpyxl"]}]}])
XL_POLICY = {"name": "xl", "extends": "default",
             "python": {"imports": {"modules": ["openpyxl", "yaml", "shapes"]}}}


class TestPackageSetsAtTheGateway(GatewayWithFakes):
    """The gateway knows what the executors install (their listings, with
    package sets): a set's modules are listed with what each policy allows,
    and a job importing a module that nothing installs is rejected at the
    gateway, saying so, instead of failing at run time."""

    def setUp(self):
        self.py = FakeExecutor("python")
        self.py.runtime = SET_LISTING
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          policies={"xl": XL_POLICY})

    def run_job(self, code, policy="xl", **extra):
        body = dict({"language": "python", "code": code, "policy": policy}, **extra)
        st, _, out = self.gw.call("POST", "/v1/run", body)
        self.assertEqual(st, 200, out)
        return out

    def test_the_listing_shows_each_set_with_what_each_policy_allows(self):
        st, _, body = self.gw.call("GET", "/v1/runtimes")
        py = body["runtimes"]["python"]
        xl = py["sets"][0]
        self.assertEqual(xl["policies"]["xl"]["importable"], ["openpyxl"])
        self.assertEqual(xl["policies"]["default"]["importable"], [])
        self.assertIn("openpyxl", py["policies"]["xl"]["importable"])

    def test_a_module_nothing_installs_is_rejected_saying_so(self):
        out = self.run_job("import json\nimport yaml\n\ndef main():\n    return 1\n")
        self.assertEqual(out["exit_code"], -999, out)
        rules = [v["rule"] for v in out["violations"]]
        self.assertEqual(rules, ["import.not-installed"])
        self.assertIn("module 'yaml' is not installed: no image or package set", out["stderr"])
        self.assertEqual((out["violations"][0]["line"], out["violations"][0]["column"]), (2, 8))
        self.assertEqual(self.py.jobs, [], "never reaches an executor")

    def test_installed_modules_run(self):
        out = self.run_job("import openpyxl, numpy, json\n\ndef main():\n    return 1\n")
        self.assertEqual(out["status"], "success", out)

    def test_an_input_file_is_data_not_a_module(self):
        # The runners never put the workspace on the import path (README,
        # "Who keeps each run-time promise"): shapes.py in files provides no
        # module, so the job is refused before it runs rather than failing.
        out = self.run_job("import shapes\n\ndef main():\n    return 1\n",
                           files={"shapes.py": "eD0x"})
        self.assertEqual([v["rule"] for v in out["violations"]], ["import.not-installed"], out)
        self.assertEqual(self.py.jobs, [], "never reaches an executor")

    def test_in_an_image_but_not_in_the_policy_names_the_policy(self):
        out = self.run_job("import openpyxl\n\ndef main():\n    return 1\n", policy="default")
        self.assertEqual([v["rule"] for v in out["violations"]], ["import.not-allowed"])
        self.assertIn("not allowed by policy 'default'", out["stderr"])

    def test_modules_of_two_sets_at_once_are_the_jobs_fault_not_busy(self):
        # The executor refuses (422 no_package_set) a job whose modules no one
        # set installs together: no retry, no 503, and RAGFlow's /run answers
        # 200 (its client retries a 5xx).
        self.py.mode = "no_package_set"
        code = "import openpyxl\n\ndef main():\n    return 1\n"
        st, _, out = self.gw.call("POST", "/v1/run",
                                  {"language": "python", "code": code, "policy": "xl"})
        self.assertEqual((st, out["error"]["code"]), (422, "no_package_set"), out)
        self.assertIn("no package set of this executor installs", out["error"]["message"])
        self.assertEqual(len(self.py.jobs), 1, "sent once, never retried")
        plain = b"import json\n\ndef main():\n    return 1\n"
        st, _, out = self.gw.call("POST", "/run", {"language": "python", "code_b64":
                                                   base64.b64encode(plain).decode()})
        self.assertEqual((st, out["status"]), (200, "program_runner_error"), out)
        self.assertIn("no package set", out["stderr"])

    def test_without_a_listing_jobs_run_as_before(self):
        self.py.runtime = None
        gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                     policies={"xl": XL_POLICY})
        try:
            st, _, out = gw.call("POST", "/v1/run", {"language": "python", "policy": "xl",
                                                     "code": "import yaml\n\ndef main():\n"
                                                             "    return 1\n"})
            self.assertEqual((st, out["status"]), (200, "success"), out)
        finally:
            self.assertEqual(gw.stop(), 0)
