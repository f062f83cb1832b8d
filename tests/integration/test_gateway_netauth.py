"""Trusted networks over real HTTP: a tenant bound to source networks is
who a request without a token is when it comes from there (RAGFlow's client
sends no token); a token still decides when there is one; any other source
without a token is 401. Sources are distinct loopback addresses (127.0.0.2,
127.0.0.3, ...): the client binds its socket to one of them. /v1/whoami and
/v1/policies show how the caller was identified; an overlapping reload is
refused and the old set stays; the start-up log names every network."""
import base64
import http.client
import json
import signal
import unittest

import sgtest
from gateway_fakes import GatewayWithFakes, FakeExecutor, Gateway

OK_PY = "def main(x=1):\n    return {'x': x}\n"
TOKEN_B = "tenant-b-token-0123456789"
TENANTS = {"tenants": {
    "ragflow": {"networks": ["127.0.0.2/32", "127.0.7.0/24"], "policies": ["strict"],
                "max_limits": {"timeout_ms": 5000}},
    "b": {"tokens": [TOKEN_B], "networks": ["127.0.0.3"]},
}}


def call_from(source, port, method, path, body=None, headers=None):
    """One request from the loopback source address `source`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(source, 0))
    hdrs = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body)
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    return resp.status, json.loads(raw)


def ragflow_body(code):
    return {"code_b64": base64.b64encode(code.encode()).decode(), "language": "python",
            "arguments": {}}


class TestTrustedNetworks(GatewayWithFakes):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          tokens=TENANTS)


    def test_no_token_from_a_bound_network_is_that_tenant(self):
        for source in ("127.0.0.2", "127.0.7.200"):
            st, body = call_from(source, self.gw.port, "POST", "/run", ragflow_body(OK_PY))
            self.assertEqual((st, body["status"]), (200, "success"), body)
        self.assertEqual(self.py.calls, 2)
        st, body = call_from("127.0.0.2", self.gw.port, "GET", "/v1/whoami")
        self.assertEqual(st, 200, body)
        self.assertEqual(body["tenant"], {"name": "ragflow", "identified_by": "network",
                                          "network": "127.0.0.2/32"})
        self.assertEqual(body["peer"], "127.0.0.2")
        self.assertEqual(body["default_policy"], "default")
        self.assertEqual(sorted(body["policies"]), ["default", "strict"])
        self.assertEqual(body["max_limits"]["timeout_ms"], 5000)
        self.assertEqual(body["networks"], ["127.0.0.2/32", "127.0.7.0/24"])
        st, body = call_from("127.0.7.9", self.gw.port, "GET", "/v1/policies")
        self.assertEqual(body["tenant"]["identified_by"], "network")
        self.assertEqual(body["tenant"]["network"], "127.0.7.0/24")
        self.gw.wait_for(lambda: len(self.gw.audit_lines()) >= 2, what="audit")
        lines = self.gw.audit_lines()
        self.assertEqual([(x["tenant"], x["peer"]) for x in lines[:2]],
                         [("ragflow", "127.0.0.2"), ("ragflow", "127.0.7.200")])

    def test_other_sources_without_token_are_401(self):
        for source in ("127.0.0.1", "127.0.0.4", "127.0.8.1"):
            st, body = call_from(source, self.gw.port, "POST", "/run", ragflow_body(OK_PY))
            self.assertEqual(st, 401, body)
            self.assertEqual(body["error"]["code"], "unauthorized")
            st, _ = call_from(source, self.gw.port, "GET", "/v1/whoami")
            self.assertEqual(st, 401)
            st, body = call_from(source, self.gw.port, "GET", "/healthz")
            self.assertEqual((st, body), (200, {"status": "ok"}), "healthz needs no auth")
        self.assertEqual(self.py.calls, 0)

    def test_a_token_decides_even_from_a_bound_network(self):
        hb = {"X-Sandbox-Token": TOKEN_B}
        st, body = call_from("127.0.0.2", self.gw.port, "GET", "/v1/whoami", headers=hb)
        self.assertEqual(body["tenant"], {"name": "b", "identified_by": "token"})
        st, body = call_from("127.0.0.2", self.gw.port, "GET", "/v1/whoami",
                             headers={"Authorization": "Bearer wrong-token-0123456789"})
        self.assertEqual(st, 401, "a bad token is never rescued by the network")
        st, body = call_from("127.0.0.3", self.gw.port, "GET", "/v1/whoami")
        self.assertEqual(body["tenant"]["name"], "b", "b has a token and a network")

    def test_overlapping_reload_is_refused_and_the_old_set_stays(self):
        self.assertIn("event=trusted_network", self.gw.daemon.tail())
        self.assertIn("tenant=ragflow network=127.0.7.0/24", self.gw.daemon.tail())
        bad = json.loads(json.dumps(TENANTS))
        bad["tenants"]["b"]["networks"] = ["127.0.0.0/16"]
        self.gw.write_tokens(bad)
        self.gw.daemon.signal(signal.SIGHUP)
        self.gw.wait_for(lambda: "reload_failed" in self.gw.daemon.tail(), what="reload")
        self.assertIn("networks of tenants ragflow (127.0.0.2/32) and b (127.0.0.0/16) overlap",
                      self.gw.daemon.tail())
        st, body = call_from("127.0.0.2", self.gw.port, "GET", "/v1/whoami")
        self.assertEqual(body["tenant"]["name"], "ragflow", "the old set stays")
        good = json.loads(json.dumps(TENANTS))
        good["tenants"]["ragflow"]["networks"] = ["127.0.0.5/32"]
        self.gw.write_tokens(good)
        self.gw.daemon.signal(signal.SIGHUP)
        self.gw.wait_for(lambda: call_from("127.0.0.2", self.gw.port, "GET",
                                           "/v1/whoami")[0] == 401, what="reload applied")
        st, body = call_from("127.0.0.5", self.gw.port, "GET", "/v1/whoami")
        self.assertEqual(body["tenant"]["name"], "ragflow")

    def test_check_mode_names_both_tenants(self):
        bad = json.loads(json.dumps(TENANTS))
        bad["tenants"]["b"]["networks"] = ["127.0.7.128/25"]
        self.gw.write_tokens(bad)
        import subprocess
        r = subprocess.run([sgtest.binary("sandgate"), "-t", "-c", self.gw.config_path],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("tenants ragflow (127.0.7.0/24) and b (127.0.7.128/25) overlap", r.stderr)


class TestWhoamiWithoutAuth(unittest.TestCase):
    def test_anonymous_on_loopback(self):
        py, js = FakeExecutor("python"), FakeExecutor("nodejs")
        gw = Gateway({"executors": {"python": [py.url], "nodejs": [js.url]}})
        try:
            st, _, body = gw.call("GET", "/v1/whoami")
            self.assertEqual(st, 200, body)
            self.assertEqual(body["tenant"], {"name": "anonymous", "identified_by": "none"})
            self.assertEqual(body["auth"], "off")
            self.assertNotIn("networks", body)
        finally:
            self.assertEqual(gw.stop(), 0)
            py.stop()
            js.stop()
