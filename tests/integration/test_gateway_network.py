"""Network allow-lists at the gateway (README, "Network"), real sandgate with
fake executors: a tenant's "network" lists in the tokens file; /v1/run's
"network": {"allow": [...]} must lie inside the tenant's allow-list (403
network_not_allowed naming the entry, nothing reaches an executor); the job
then goes out with its canonical list and the networked run-time policy, and
its imports are checked under the networked policy (requests accepted);
without network the same code is rejected as network.disabled; RAGFlow's /run
takes the tenant's default list; a bad tokens file is refused at start."""
import base64
import subprocess
import unittest

import sgtest
from gateway_fakes import GatewayWithFakes, FakeExecutor, Gateway

TOKEN = "net-tenant-token-0123456789"
OTHER = "plain-tenant-token-0123456789"
TENANTS = {"tenants": {
    "net": {"tokens": [TOKEN],
            "network": {"allow": ["api.example.com", "*.corp.internal:443", "10.20.0.0/16:8080"],
                        "default": ["api.example.com"]}},
    "plain": {"tokens": [OTHER]},
}}
NET_PY = "import requests\n\ndef main():\n    return requests.get('https://api.example.com').status_code\n"


def auth(token):
    return {"Authorization": f"Bearer {token}"}


class TestNetworkAllowLists(GatewayWithFakes):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          tokens=TENANTS)

    def run_job(self, token, network=None, code=NET_PY, lang="python"):
        body = {"language": lang, "code": code}
        if network is not None:
            body["network"] = network
        st, _, resp = self.gw.call("POST", "/v1/run", body, auth(token))
        return st, resp

    def test_a_subset_runs_networked_with_its_canonical_list(self):
        st, body = self.run_job(TOKEN, {"allow": ["API.example.com:443", "x.corp.internal:443",
                                                  "10.20.3.0/24:8080"]})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "success", body)
        job = self.py.jobs[-1]
        self.assertEqual(job["network"], {"allow": ["api.example.com:443",
                                                    "x.corp.internal:443", "10.20.3.0/24:8080"]})
        self.assertTrue(job["runtime"]["network"])
        self.assertIn("requests", job["runtime"]["imports"]["modules"])
        self.gw.wait_for(lambda: self.gw.audit_lines(), what="audit")
        self.assertEqual(self.gw.audit_lines()[-1]["network"]["allow"][0], "api.example.com:443")

    def test_outside_the_tenants_list_is_403_naming_the_entry(self):
        for token, entry in ((TOKEN, "other.example.com"), (TOKEN, "corp.internal:443"),
                             (TOKEN, "x.corp.internal"), (TOKEN, "10.0.0.0/8:8080"),
                             (TOKEN, "*"), (OTHER, "api.example.com")):
            st, body = self.run_job(token, {"allow": ["api.example.com", entry]
                                            if token == TOKEN else [entry]})
            self.assertEqual(st, 403, (entry, body))
            self.assertEqual(body["error"]["code"], "network_not_allowed")
            self.assertIn(entry.lower(), body["error"]["message"])
        self.assertEqual(self.py.calls, 0)

    def test_malformed_network_is_400(self):
        for net in ({"allow": []}, {"allow": "api.example.com"}, {"deny": ["x"]},
                    {"allow": ["bad host"]}, {"allow": ["a.example:99999"]}, ["api.example.com"],
                    {"allow": ["x.example"] * 65}):
            st, body = self.run_job(TOKEN, net)
            self.assertEqual(st, 400, (net, body))
            self.assertEqual(body["error"]["code"], "bad_network")
        self.assertEqual(self.py.calls, 0)

    def test_without_network_network_modules_are_network_disabled(self):
        st, body = self.run_job(TOKEN)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "program_runner_error")
        self.assertEqual([v["rule"] for v in body["violations"]], ["network.disabled"])
        self.assertIn('"network": {"allow"', body["violations"][0]["message"])
        st, _, body = self.gw.call("POST", "/v1/analyze", {"language": "python", "code": NET_PY,
                                                        "network": {"allow": ["api.example.com"]}},
                                auth(TOKEN))
        self.assertEqual((st, body["verdict"]), (200, "accept"), body)
        js = "const axios = require('axios');\nasync function main() { return 1; }\n"
        st, body = self.run_job(TOKEN, code=js, lang="nodejs")
        self.assertEqual([v["rule"] for v in body["violations"]], ["network.disabled"])
        st, body = self.run_job(TOKEN, {"allow": ["api.example.com"]}, code=js, lang="nodejs")
        self.assertEqual(body["status"], "success", body)
        self.assertTrue(self.js.jobs[-1]["runtime"]["network"])
        self.assertEqual(self.py.calls, 0)

    def test_ragflow_run_takes_the_tenants_default(self):
        b64 = base64.b64encode(NET_PY.encode()).decode()
        st, _, body = self.gw.call("POST", "/run", {"code_b64": b64, "language": "python"},
                                auth(TOKEN))
        self.assertEqual((st, body["status"]), (200, "success"), body)
        self.assertEqual(self.py.jobs[-1]["network"], {"allow": ["api.example.com"]})
        st, _, body = self.gw.call("POST", "/run", {"code_b64": b64, "language": "python"},
                                auth(OTHER))
        self.assertEqual(body["status"], "program_runner_error", body)
        self.assertIn("network is off", body["stderr"])
        self.assertEqual(self.py.calls, 1)  # the rejected job never left the gateway


class TestTenantNetworkConfig(unittest.TestCase):
    def test_bad_lists_are_refused_at_start(self):
        for net, words in (({"allow": ["ok.example"], "default": ["other.example"]},
                            "not covered by allow"),
                           ({"allow": ["bad host"]}, "network.allow[0]"),
                           ({"allow": ["x.example"], "deny": []}, "unknown key")):
            tokens = {"tenants": {"t": {"tokens": [TOKEN], "network": net}}}
            gw = Gateway(tokens=tokens, start=False)
            try:
                proc = subprocess.run([sgtest.binary("sandgate"), "-c", gw.config_path, "-t"],
                                      capture_output=True, text=True, timeout=60)
                self.assertNotEqual(proc.returncode, 0, net)
                self.assertIn(words, proc.stderr, net)
            finally:
                gw.stop()


if __name__ == "__main__":
    unittest.main()
