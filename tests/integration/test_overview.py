"""GET /v1/overview with the real sandgate binary and fake executors: the
warm pools per flavour and the jobs and sessions in flight from the router's
last health round (an executor's /healthz, reduced to known fields), the
console reads' auth, the executors' URLs for an admin only, an audit line
with endpoint "console", and no request of its own to an executor."""
import unittest

from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes

TOKEN_A = "tenant-a-token-0123456789"
TOKEN_OPS = "operator-token-0123456789"
TOKENS = {"tenants": {"alpha": {"tokens": [TOKEN_A]},
                      "ops": {"tokens": [TOKEN_OPS], "admin": True}}}
FLAVOUR = {"name": "plain", "preimport": "", "size": 2, "target": 3, "idle": 1, "busy": 1,
           "creating": 1, "memory_mb": 180, "memory_measured": True, "create_ms": 849.7,
           "hits": 7, "fallbacks": 2, "arrivals": 9, "secret": "dropped"}
HEALTH = {"pool": {"target": 3, "idle": 1, "busy": 1, "creating": 1, "tearing_down": 0},
          "flavours": [FLAVOUR, {"name": "x" * 300, "hits": -5, "idle": "many"}],
          "sessions": {"open": 2, "max": 8}}


def auth(token):
    return {"Authorization": "Bearer " + token}


class Overview(GatewayWithFakes):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.py.health_extra = HEALTH
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          tokens=TOKENS)

    def overview(self, token):
        st, hdr, body = self.gw.call("GET", "/v1/overview", None, auth(token))
        self.assertEqual(st, 200, body)
        return hdr, body

    def test_pools_per_flavour_and_work_in_flight(self):
        _, body = self.overview(TOKEN_OPS)
        py = [e for e in body["executors"] if e["language"] == "python"]
        self.assertEqual(len(py), 1)
        self.assertEqual(py[0]["url"], self.py.url)
        self.assertTrue(py[0]["healthy"])
        self.assertEqual(py[0]["jobs_in_flight"], 0)
        pools = py[0]["pools"]
        self.assertEqual(pools["jobs"], 1)
        self.assertEqual(pools["sessions"], {"open": 2, "max": 8})
        self.assertEqual(pools["flavours"][0],
                         {"name": "plain", "size": 2, "target": 3, "idle": 1, "busy": 1,
                          "creating": 1, "hits": 7, "fallbacks": 2, "create_ms": 850})
        odd = pools["flavours"][1]
        self.assertEqual((len(odd["name"]), odd["hits"], odd["idle"]), (64, 0, 0))
        js = [e for e in body["executors"] if e["language"] == "nodejs"][0]
        self.assertEqual(js["pools"], None)  # its /healthz says no pool
        self.assertEqual((body["jobs_in_flight"], body["sessions_open"]), (0, 2))

    def test_a_tenant_sees_the_pools_without_urls(self):
        hdr, body = self.overview(TOKEN_A)
        self.assertTrue(body["executors"])
        for e in body["executors"]:
            self.assertNotIn("url", e)
        py = [e for e in body["executors"] if e["language"] == "python"][0]
        self.assertEqual(py["pools"]["flavours"][0]["hits"], 7)
        self.assertEqual(hdr["cache-control"], "no-store")
        line = self.gw.audit_line(hdr["x-request-id"])
        self.assertEqual((line["endpoint"], line["path"], line["tenant"], line["status"]),
                         ("console", "/v1/overview", "alpha", 200))

    def test_auth_and_method(self):
        st, _, body = self.gw.call("GET", "/v1/overview")
        self.assertEqual(st, 401, body)
        st, _, body = self.gw.call("GET", "/v1/overview", None, auth("wrong-token-0123456789"))
        self.assertEqual(st, 401, body)
        st, hdr, body = self.gw.call("POST", "/v1/overview", {}, auth(TOKEN_A))
        self.assertEqual((st, hdr.get("allow")), (405, "GET"), body)

    def test_never_asks_an_executor_itself(self):
        self.assertEqual(self.gw.stop(), 0)
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "health_interval_ms": 3600000}, tokens=TOKENS)
        before = self.py.health_calls
        for _ in range(20):
            _, body = self.overview(TOKEN_OPS)
        self.assertEqual(self.py.health_calls, before)
        py = [e for e in body["executors"] if e["language"] == "python"][0]
        self.assertEqual(py["pools"]["flavours"][0]["hits"], 7)

    def test_the_next_health_round_updates_it(self):
        self.py.health_extra = dict(HEALTH, flavours=[dict(FLAVOUR, hits=8)])

        def updated():
            _, body = self.overview(TOKEN_OPS)
            py = [e for e in body["executors"] if e["language"] == "python"][0]
            return py["pools"]["flavours"][0]["hits"] == 8
        self.gw.wait_for(updated, 10, "the next health round's figures")

if __name__ == "__main__":
    unittest.main()
