"""The gateway's memory budget (common/membudget) over loopback with fake
executors: request bodies are reserved in it on their headers and jobs before
they are sent; past it the answer is the door's busy answer (503 + Retry-After
on the native API, RAGFlow's HTTP 200 with exit code -10 on /run) and once
the load is gone the same requests are served again; the figures are in
/metrics. An executor's answer is reserved as it arrives (GW_ANSWER_COPIES
times over, beyond what its job paid), and a session file passing through
until it is sent: one too large for the budget now gets the door's busy
answer, then service goes on. A budget too small for one request at the body
cap, or a memory budget outside its bounds, stops the gateway at start."""
import base64
import json
import re
import socket
import subprocess
import threading
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes
from test_gateway_frontdoor import connect, exchange, post  # noqa: F401

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


# an answer is held GW_ANSWER_COPIES times (gateway/core/gw_answer.h); a job
# paid JOB_ANSWER for it already
ANSWER_COPIES = 4
BIG = 7 * MIB // 2  # x4 = 14 MiB: never fits in BUDGET
SMALL = MIB // 2  # x4 = 2 MiB: within what its job paid, or a session call's budget


class TestAnswerBudget(GatewayWithFakes):
    """Answers and session downloads larger than the budget has room for."""

    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.stdout = "x" * BIG
        plain = self.py.answer
        self.py.answer = lambda job: dict(plain(job), stdout=self.stdout)
        self.dport = sgtest.free_port()
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "memory_budget_bytes": BUDGET, "max_body_bytes": MIB,
                           "max_code_bytes": 65536, "busy_retries": 0, "log_level": "warn",
                           "dify_port": self.dport},
                          tokens={"tenants": {"t": {"tokens": [TOKEN]},
                                              "d": {"tokens": ["dify-key-0123456789abcdef"]}}})
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 200, what="ready")

    def used(self):
        st, _, body = self.gw.call("GET", "/metrics")
        return metric(body, "sandgate_gateway_memory_used_bytes")

    def settled(self):
        self.gw.wait_for(lambda: self.used() == 0, what="every reservation released")

    def test_a_job_answer_over_the_budget_is_each_doors_busy_answer_then_service(self):
        st, hdrs, body = self.gw.call("POST", "/v1/run", JOB, HEADERS)
        self.assertEqual((st, body["error"]["code"]), (503, "executor_busy"), body)
        self.assertIn("memory budget", body["error"]["message"])
        self.assertEqual(hdrs.get("retry-after"), "1")
        self.assertEqual(self.py.calls, 1, "sent once, never failed over")
        st, _, body = self.gw.call("POST", "/run", RAGFLOW_JOB, HEADERS)
        self.assertEqual((st, body["exit_code"]), (200, -10), body)
        # streamed: the result event, which the gateway holds, is refused
        st, hdrs, text = self.gw.call("POST", "/v1/run", dict(JOB, stream=True), HEADERS)
        self.assertEqual((st, hdrs.get("content-type")), (200, "text/event-stream"), text)
        result = json.loads(text.split("event: result\ndata: ", 1)[1].split("\n", 1)[0])
        self.assertEqual(result["error"]["code"], "executor_busy", result)
        self.assertIn(f"{BIG // 1024} KiB and more", result["error"]["message"])
        st, _, body = sgtest.http("POST", f"http://127.0.0.1:{self.dport}/v1/sandbox/run",
                                  {"language": "python3", "code": "print(1)", "preload": "",
                                   "enable_network": False},
                                  {"X-Api-Key": "dify-key-0123456789abcdef"})
        self.assertEqual((st, body["code"]), (503, -503), body)
        self.settled()
        self.stdout = "y" * SMALL  # within the budget: served, whole
        st, _, body = self.gw.call("POST", "/v1/run", JOB, HEADERS)
        self.assertEqual(st, 200, body)
        self.assertEqual(len(body["stdout"]), SMALL)
        st, _, body = self.gw.call("GET", "/metrics")
        self.assertGreaterEqual(metric(body, "sandgate_gateway_memory_refused_total"), 3)
        self.settled()

    def test_a_streamed_event_is_counted_while_it_is_read(self):
        # The event parser holds an event (its line, then its data) before
        # the answer takes it: a 5 MiB stdout event needs ~10 MiB beside the
        # job's own ~4.25 MiB, which a 12 MiB budget cannot hold: the stream
        # ends with the busy result, and nothing stays reserved.
        self.stdout = ""
        self.py.script = [(0, "stdout", {"text": "z" * (5 * MIB)})]
        st, hdrs, text = self.gw.call("POST", "/v1/run", dict(JOB, stream=True), HEADERS)
        self.assertEqual((st, hdrs.get("content-type")), (200, "text/event-stream"), text[:200])
        self.assertFalse("z" * 1024 in text, "the event was not relayed")
        result = json.loads(text.split("event: result\ndata: ", 1)[1].split("\n", 1)[0])
        self.assertEqual(result["error"]["code"], "executor_busy", str(result)[:300])
        self.settled()
        self.py.script = [(0, "stdout", {"text": "z" * SMALL})]  # fits: relayed whole
        st, _, text = self.gw.call("POST", "/v1/run", dict(JOB, stream=True), HEADERS)
        self.assertEqual(st, 200)
        self.assertTrue("z" * SMALL in text, "relayed whole")
        self.settled()

    def test_a_session_download_over_the_budget_is_server_busy_then_service(self):
        st, _, s = self.gw.call("POST", "/v1/sessions", {"language": "python"}, HEADERS)
        self.assertEqual(st, 201, s)
        sid = s["session_id"]
        files = self.py.sessions[next(iter(self.py.sessions))].setdefault("files", {})
        files["big.bin"], files["small.bin"] = b"b" * BIG, b"s" * SMALL
        st, hdrs, body = self.gw.call("GET", f"/v1/sessions/{sid}/files/big.bin", None, HEADERS)
        self.assertEqual((st, body["error"]["code"]), (503, "server_busy"), body)
        self.assertIn("memory budget", body["error"]["message"])
        self.assertEqual(hdrs.get("retry-after"), "1")
        self.settled()
        st, _, body = self.gw.call("GET", f"/v1/sessions/{sid}/files/small.bin", None, HEADERS)
        self.assertEqual((st, len(body)), (200, SMALL))
        self.settled()
        # a cell's answer is counted the same way
        st, _, body = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, HEADERS)
        self.assertEqual((st, body["error"]["code"]), (503, "server_busy"), body)
        self.stdout = "ok"
        st, _, body = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, HEADERS)
        self.assertEqual((st, body["stdout"]), (200, "ok"), body)
        self.settled()



class TestDownloadHeld(GatewayWithFakes):
    """A download is held in the budget until the client has it: a client that
    does not read keeps it reserved (more than the kernel's socket buffers
    take, so the gateway still holds part of it)."""

    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "memory_budget_bytes": 64 * MIB, "log_level": "warn"},
                          tokens={"tenants": {"t": {"tokens": [TOKEN]}}})
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] == 200, what="ready")

    def used(self):
        st, _, body = self.gw.call("GET", "/metrics")
        return metric(body, "sandgate_gateway_memory_used_bytes")

    def test_a_download_is_held_until_it_is_sent(self):
        size = 10 * MIB
        st, _, s = self.gw.call("POST", "/v1/sessions", {"language": "python"}, HEADERS)
        self.assertEqual(st, 201, s)
        self.py.sessions[next(iter(self.py.sessions))]["files"] = {"f.bin": b"f" * size}
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # asks, then reads nothing
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before the window is agreed
        c.connect(("127.0.0.1", self.gw.port))
        c.sendall(b"GET /v1/sessions/%s/files/f.bin HTTP/1.1\r\nHost: gw\r\n"
                  % s["session_id"].encode() + AUTH + b"\r\n")
        self.gw.wait_for(lambda: self.used() >= size * ANSWER_COPIES,
                         what="the download held while it is sent")
        time.sleep(0.5)
        self.assertGreaterEqual(self.used(), size * ANSWER_COPIES, "still held: not sent yet")
        c.close()
        self.gw.wait_for(lambda: self.used() == 0, what="released once the client is gone")


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
