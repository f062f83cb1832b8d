"""The gateway's memory budget (common/membudget) over loopback with fake
executors: request bodies are reserved in it on their headers and jobs before
they are sent; past it the answer is the door's busy answer (503 + Retry-After
on the native API, RAGFlow's HTTP 200 with exit code -10 on /run) and once
the load is gone the same requests are served again; the figures are in
/metrics. A budget too small for one request at the body cap, or a memory
budget outside its bounds, stops the gateway at start."""
import base64
import json
import re
import subprocess
import threading
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes
from test_gateway_frontdoor import connect, exchange, post

TOKEN = "budget-token-0123456789abcdef"
AUTH = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
HEADERS = {"Authorization": "Bearer " + TOKEN}
JOB = {"language": "python", "code": "def main():\n    return 1\n"}
RAGFLOW_JOB = {"language": "python",
               "code_b64": base64.b64encode(JOB["code"].encode()).decode()}
MIB = 1 << 20
# what one job reserves beyond its body (gateway/doors/jobs/gw_jobs.h)
JOB_FIXED, JOB_ANSWER = 256 * 1024, 4 * MIB
BUDGET = 12 * MIB  # holds two jobs (2 x ~4.25 MiB), not three


def metric(text, name):
    m = re.search(r"^%s (\d+)$" % re.escape(name), text, re.M)
    assert m, f"{name} not in /metrics"
    return int(m.group(1))


class TestGatewayBudget(GatewayWithFakes):
    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.py.delay = 2  # jobs stay in flight, holding their reservation
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "memory_budget_bytes": BUDGET, "max_body_bytes": MIB,
                           "max_code_bytes": 65536, "busy_retries": 0, "log_level": "warn"},
                          tokens={"tenants": {"t": {"tokens": [TOKEN]}}})
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 200, what="ready")

    def metrics(self):
        st, _, body = self.gw.call("GET", "/metrics")
        self.assertEqual(st, 200)
        return body if isinstance(body, str) else body.decode()

    def burst(self, path, n, job=JOB):
        out = [None] * n

        def one(i):
            out[i] = self.gw.call("POST", path, job, HEADERS, timeout=30)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        return out

    def test_jobs_past_the_budget_get_the_native_busy_answer_then_service_resumes(self):
        answers = self.burst("/v1/run", 5)
        ok = [a for a in answers if a[0] == 200]
        busy = [a for a in answers if a[0] == 503]
        self.assertEqual(len(ok) + len(busy), 5, [a[0] for a in answers])
        self.assertEqual(len(ok), 2, [a[0] for a in answers])  # two jobs fit, three do not
        for st, hdrs, body in busy:
            self.assertEqual(body["error"]["code"], "executor_busy", body)
            self.assertIn("memory budget", body["error"]["message"])
            self.assertEqual(hdrs.get("retry-after"), "1")
        self.assertEqual(self.py.calls, 2, "a refused job never reached an executor")
        m = self.metrics()
        self.assertEqual(metric(m, "sandgate_gateway_memory_budget_bytes"), BUDGET)
        self.assertGreaterEqual(metric(m, "sandgate_gateway_memory_refused_total"), 3)
        self.assertLessEqual(metric(m, "sandgate_gateway_memory_peak_bytes"), BUDGET)
        self.assertGreaterEqual(metric(m, "sandgate_gateway_memory_peak_bytes"),
                                2 * (JOB_FIXED + JOB_ANSWER))
        self.assertEqual(metric(m, "sandgate_gateway_memory_used_bytes"), 0, "all released")
        self.py.delay = 0
        for _ in range(3):  # the load is gone: served again
            st, _, body = self.gw.call("POST", "/v1/run", JOB, HEADERS)
            self.assertEqual(st, 200, body)

    def test_ragflow_run_past_the_budget_is_its_pool_busy_result(self):
        answers = self.burst("/run", 4, RAGFLOW_JOB)
        self.assertTrue(all(a[0] == 200 for a in answers), [a[0] for a in answers])
        busy = [a[2] for a in answers if a[2].get("exit_code") == -10]
        self.assertEqual(len(busy), 2, [a[2] for a in answers])
        self.assertEqual(busy[0]["status"], "program_runner_error", busy[0])

    def test_bodies_are_reserved_on_their_headers(self):
        held = []
        for _ in range(11):  # 11 declared bodies of 1 MiB: 11 of the 12 MiB reserved
            s = connect(self.gw.port)
            s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: gw\r\n" + AUTH +
                      b"Content-Length: %d\r\n\r\n" % MIB + b"{")
            held.append(s)
        time.sleep(0.5)
        m = self.metrics()
        self.assertGreaterEqual(metric(m, "sandgate_gateway_memory_used_bytes"), 11 * MIB)
        # the next body does not fit (max_bodies_bytes, 64 MiB, would allow it)
        body = b"x" * MIB
        st, hdrs, raw, _ = exchange(self.gw.port, post(b"/v1/run", body, AUTH))
        self.assertEqual(st, 503, raw)
        self.assertEqual(json.loads(raw)["error"]["code"], "server_busy")
        self.assertIn("retry-after", hdrs)
        for s in held:
            s.close()
        self.gw.wait_for(lambda: metric(self.metrics(), "sandgate_gateway_memory_used_bytes")
                         == 0, what="the bodies released")
        self.py.delay = 0
        st, _, raw, _ = exchange(self.gw.port, post(b"/v1/run", json.dumps(JOB).encode(), AUTH))
        self.assertEqual(st, 200, raw)


class TestBudgetAtStart(unittest.TestCase):
    def start(self, config):
        gw = Gateway(config, start=False)
        try:
            r = subprocess.run([sgtest.binary("sandgate"), "-c", gw.config_path],
                               capture_output=True, text=True, timeout=30)
        finally:
            gw.stop()
        return r.returncode, r.stdout + r.stderr

    def test_a_budget_below_one_request_at_the_body_cap_stops_the_gateway(self):
        # one request at 4 MiB: the body, twice more for the job, 4 MiB of answer
        rc, out = self.start({"memory_budget_bytes": 8 * MIB, "max_body_bytes": 4 * MIB})
        self.assertNotEqual(rc, 0, out)
        self.assertIn("memory_budget_bytes", out)
        self.assertIn("cannot hold one request", out)

    def test_a_budget_under_the_minimum_stops_the_gateway(self):
        rc, out = self.start({"memory_budget_bytes": 1 * MIB})
        self.assertNotEqual(rc, 0, out)
        self.assertIn("memory_budget_bytes", out)


if __name__ == "__main__":
    unittest.main()
