"""The gateway's /v1/sessions against fake executors: routing by the
executor's boot id (never by anything else in the id), tenancy, the
per-tenant cap counted on the executors, and the analysis of each cell
together with the session's earlier cells."""
import threading
import time
import unittest

import gateway_fakes
import sgtest
from gateway_fakes import FakeExecutor, Gateway

TOKEN_A, TOKEN_B = "tok-a-" + "a" * 26, "tok-b-" + "b" * 26
TOKENS = {"tenants": {"alice": {"tokens": [TOKEN_A], "max_sessions": 2},
                      "bob": {"tokens": [TOKEN_B]}}}
A = {"Authorization": f"Bearer {TOKEN_A}"}
B = {"Authorization": f"Bearer {TOKEN_B}"}


class GatewaySessions(gateway_fakes.GatewayWithFakes):
    def setUp(self):
        self.py, self.py2, self.js = FakeExecutor("python"), FakeExecutor("python"), \
            FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url, self.py2.url],
                                         "nodejs": [self.js.url]}}, tokens=TOKENS)

    def tearDown(self):
        try:
            super().tearDown()
        finally:
            self.py2.stop()

    def create(self, headers=A):
        status, _, b = self.gw.call("POST", "/v1/sessions", {"language": "python"}, headers)
        self.assertEqual(status, 201, b)
        return b

    def fake_of(self, sid):
        return self.py if sid[3:19] == self.py.boot_id else self.py2

    def test_calls_go_to_the_executor_that_holds_the_session(self):
        a, b = self.create(), self.create()
        self.assertNotEqual(self.fake_of(a["session_id"]), self.fake_of(b["session_id"]))
        self.assertEqual(a["policy"]["name"], "default")
        for _ in range(3):
            status, _, r = self.gw.call("POST", f"/v1/sessions/{a['session_id']}/exec",
                                        {"code": "x = 1"}, A)
            self.assertEqual((status, r["session_id"]), (200, a["session_id"]), r)
        holder, other = self.fake_of(a["session_id"]), self.fake_of(b["session_id"])
        self.assertEqual(len([c for c in holder.session_calls if c[1].endswith("/exec")]), 3)
        self.assertEqual([c for c in other.session_calls if c[1].endswith("/exec")], [])
        self.assertTrue(all(c[2] == "t.alice" for c in holder.session_calls))

    def test_unknown_boot_id_is_session_lost_and_nothing_is_called(self):
        sid = "py-" + "f" * 16 + "-" + "0" * 32
        before = len(self.py.session_calls) + len(self.py2.session_calls)
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, A)
        self.assertEqual((status, b["error"]["code"]), (410, "session_lost"), b)
        self.assertEqual(len(self.py.session_calls) + len(self.py2.session_calls), before)
        for bad in ("py-../../x", "py-" + "F" * 16 + "-" + "0" * 32, "rb-" + "0" * 49, "x"):
            status, _, b = self.gw.call("GET", f"/v1/sessions/{bad}", None, A)
            self.assertEqual(status, 404, (bad, b))

    def test_an_executor_restart_loses_its_sessions(self):
        sid = self.create()["session_id"]
        holder = self.fake_of(sid)
        holder.boot_id = "0" * 16  # a new life: its /healthz says another boot id
        time.sleep(0.8)  # a few health rounds
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, A)
        self.assertEqual((status, b["error"]["code"]), (410, "session_lost"), b)

    def test_an_unreachable_executor_is_503_retry_not_lost(self):
        """An executor that is down (restarting, it may take its sessions
        back) is no proof that the session is gone: 503 with Retry-After."""
        sid = self.create()["session_id"]
        holder = self.fake_of(sid)
        holder.stop()
        status, hdrs, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, A)
        self.assertEqual((status, b["error"]["code"]), (503, "executor_unreachable"), b)
        self.assertEqual(hdrs.get("retry-after"), "1")

    def test_another_tenant_gets_404_even_naming_the_tenant_header(self):
        sid = self.create()["session_id"]
        forged = dict(B, **{"X-Sandgate-Tenant": "t.alice"})
        for method, path in (("GET", ""), ("POST", "/exec"), ("DELETE", ""),
                             ("GET", "/files/a.txt")):
            status, _, b = self.gw.call(method, f"/v1/sessions/{sid}{path}", {"code": "1"},
                                        forged)
            self.assertEqual(status, 404, (method, path, b))
        status, _, listing = self.gw.call("GET", "/v1/sessions", None, forged)
        self.assertEqual((listing["sessions"], listing["open"]), ([], 0))
        status, _, listing = self.gw.call("GET", "/v1/sessions", None, A)
        self.assertEqual([s["session_id"] for s in listing["sessions"]], [sid])
        self.assertNotIn("container", listing["sessions"][0])
        self.assertEqual(listing["sessions"][0]["policy"], "default")

    def test_cap_counts_every_executor_and_holds_for_a_fresh_gateway(self):
        first = self.create()
        self.create()  # one on each fake (round robin)
        status, _, b = self.gw.call("POST", "/v1/sessions", {"language": "python"}, A)
        self.assertEqual((status, b["error"]["code"]), (429, "too_many_sessions"), b)
        # a gateway that never saw these sessions (a restart, or a second replica)
        other = Gateway({"executors": {"python": [self.py.url, self.py2.url],
                                       "nodejs": [self.js.url]}}, tokens=TOKENS)
        try:
            status, _, b = other.call("POST", "/v1/sessions", {"language": "python"}, A)
            self.assertEqual((status, b["error"]["code"]), (429, "too_many_sessions"), b)
            status, _, b = other.call("POST", f"/v1/sessions/{first['session_id']}/exec",
                                      {"code": "1"}, A)  # and it routes the old session
            self.assertEqual((status, b["session_id"]), (200, first["session_id"]), b)
        finally:
            self.assertEqual(other.stop(), 0)
        self.create(B)  # bob's own count is his
        status, _, _ = self.gw.call("DELETE", f"/v1/sessions/{first['session_id']}", None, A)
        self.assertEqual(status, 204)
        self.create()  # a place is free again

    def test_cells_are_analysed_with_the_earlier_cells(self):
        sid = self.create()["session_id"]
        holder = self.fake_of(sid)
        for code in ("import functools", "f = functools"):
            status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": code}, A)
            self.assertEqual((status, b["violations"]), (200, []), b)
        sent = len(holder.session_calls)
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec",
                                    {"code": "y = 1\nf.singledispatch(len)"}, A)
        self.assertEqual(status, 200, b)
        self.assertEqual([(v["rule"], v["line"]) for v in b["violations"]],
                         [("call.forbidden", 2)], b)
        self.assertIn("Line 2:", b["stderr"])
        # only the GET of the earlier cells reached the executor, not the cell
        self.assertEqual([c[0] for c in holder.session_calls[sent:]], ["GET"])
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec",
                                    {"code": "functools.reduce(max, [1, 2])"}, A)
        self.assertEqual((status, b["status"]), (200, "success"), b)

    def test_history_is_bounded_by_its_own_limit_not_by_a_cells(self):
        """The policy's max_source_bytes and max_nodes hold for a cell; the
        cells before it are bounded by the session's history limit (1 MiB,
        the executor's 413), not by them. A policy with small limits (4 KiB,
        1,000 nodes) shows it in a few small cells."""
        small = gateway_fakes.policy_with("small", limits={
            "max_source_bytes": 4096, "max_depth": 256, "max_nodes": 1000})
        tokens = {"tenants": {"alice": {"tokens": [TOKEN_A], "default_policy": "small",
                                        "policies": ["small"]}}}
        gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                     tokens=tokens, policies={"small": small})
        self.addCleanup(gw.stop)
        status, _, b = gw.call("POST", "/v1/sessions", {"language": "python"}, A)
        self.assertEqual((status, b.get("policy", {}).get("name")), (201, "small"), b)
        sid = b["session_id"]

        def cell(code):
            status, _, b = gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": code}, A)
            self.assertEqual(status, 200, b)
            return b

        body = "".join(f"a{i} = {i}\n" for i in range(150))  # 1.6 KB, about 750 nodes
        self.assertLess(len(body), 4096)
        for code in ["import functools\nf = functools"] + [body] * 6:  # each alone is fine
            self.assertEqual(cell(code)["violations"], [])
        # 10 KB and 4,500 nodes before it: the next cell still runs
        b = cell("a1 + a149")
        self.assertEqual((b["violations"], b["status"]), ([], "success"), b)
        # names bound long ago still resolve
        b = cell("f.singledispatch(len)")
        self.assertEqual([(v["rule"], v["line"]) for v in b["violations"]],
                         [("call.forbidden", 1)], b)
        # one cell over the policy's limit is refused as a job would be
        b = cell("# " + "x" * 4096)
        self.assertEqual([v["rule"] for v in b["violations"]], ["limit.source-bytes"], b)
        # the long text analysed for a cell is no verdict for a job of the same text
        text = self.py.sessions[sid[3:]]["history"] + "a1 + a149"
        status, _, b = gw.call("POST", "/v1/analyze", {"language": "python", "code": text}, A)
        self.assertEqual((status, [v["rule"] for v in b["violations"]]),
                         (200, ["limit.source-bytes"]), b)

    def test_slow_session_gets_never_hold_the_event_threads(self):
        self.py.session_delay = self.py2.session_delay = 2.0
        done = []

        def slow():
            done.append(self.gw.call("GET", "/v1/sessions", None, A)[0])
        threads = [threading.Thread(target=slow) for _ in range(4)]  # more than event threads
        for t in threads:
            t.start()
        time.sleep(0.3)
        t0 = time.time()
        for _ in range(5):
            status, _, _ = self.gw.call("GET", "/healthz", None, None, timeout=5)
            self.assertEqual(status, 200)
        self.assertLess(time.time() - t0, 1.5, "health checks waited behind session GETs")
        for t in threads:
            t.join(30)
        self.assertEqual(done, [200] * 4)

    def stream_cell(self, sid, code, headers=A, **fields):
        return sgtest.SSE(f"{self.gw.url}/v1/sessions/{sid}/exec", {"code": code, **fields},
                          headers=headers, timeout=30)

    def test_streamed_cell_relays_events_then_the_cell_result(self):
        sid = self.create()["session_id"]
        fake = self.fake_of(sid)
        fake.script = [(0, "stdout", {"text": "a\n"}), (0.3, "stderr", {"text": "b"})]
        for fields, headers in (({"stream": True}, A),
                                ({}, {**A, "Accept": "text/event-stream"})):
            s = self.stream_cell(sid, "print(1)", headers, **fields)
            self.assertEqual(s.status, 200)
            self.assertTrue(s.headers["content-type"].startswith("text/event-stream"))
            events = [(t, n, d) for t, n, d in s.events() if n]
            s.close()
            self.assertEqual([(n, d) for _, n, d in events[:2]],
                             [("stdout", {"text": "a\n"}), ("stderr", {"text": "b"})])
            self.assertGreaterEqual(events[1][0] - events[0][0], 0.25, events)
            name, result = events[-1][1:]
            self.assertEqual((name, len(events)), ("result", 3), events)
            self.assertEqual((result["session_id"], result["job_id"], result["policy"]["name"]),
                             (sid, s.headers["x-request-id"], "default"), result)
            self.assertIs(fake.cells[-1].get("stream"), True, fake.cells[-1])
        # a rejected cell is one result event, and never reaches the executor
        cells = len(fake.cells)
        s = self.stream_cell(sid, "import subprocess", stream=True)
        events = [(n, d) for _, n, d in s.events() if n]
        s.close()
        self.assertEqual([n for n, _ in events], ["result"], events)
        self.assertEqual(events[0][1]["violations"][0]["rule"], "import.not-allowed")
        self.assertEqual(len(fake.cells), cells)
        # an error before anything ran keeps its status
        s = self.stream_cell("py-" + "f" * 16 + "-" + "0" * 32, "1", stream=True)
        self.assertEqual(s.status, 410)
        s.close()

    def test_streamed_cell_hang_up_reaches_the_executor(self):
        sid = self.create()["session_id"]
        fake = self.fake_of(sid)
        fake.script = [(0, "stdout", {"text": "x"})] + [(0.1, None, None)] * 100
        s = self.stream_cell(sid, "1", stream=True)
        for _, name, _ in s.events():
            if name == "stdout":
                break
        s.close()
        self.assertTrue(fake.aborted.wait(5), "the executor never saw the hang-up")
        self.gw.wait_for(lambda: any(a.get("endpoint") == "v1_sessions" and
                                     a.get("outcome") == "client_gone"
                                     for a in self.gw.audit_lines()), what="client_gone audit")

    def test_bad_bodies(self):
        sid = self.create()["session_id"]
        for body, code in (({"language": "cobol"}, 400),
                           ({"language": "python", "network": True}, 400),
                           ({"language": "python", "policy": "nope"}, 403)):
            status, _, b = self.gw.call("POST", "/v1/sessions", body, B)
            self.assertEqual(status, code, (body, b))
        for body in ({}, {"code": 1}, {"code": "1", "code_b64": "MQ=="}, {"code": "1", "timeout_ms": 0},
                     {"code": "1", "stream": "yes"}):
            status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", body, A)
            self.assertEqual(status, 400, (body, b))
        status, _, b = self.gw.call("PATCH", f"/v1/sessions/{sid}", {}, A)
        self.assertEqual(status, 405, b)
        calls = len(self.fake_of(sid).session_calls)
        for bad in ("a%23b", "..x", ".hidden", "main.py", "a%20b", "x" * 129):
            status, _, b = self.gw.call("GET", f"/v1/sessions/{sid}/files/{bad}", None, A)
            self.assertEqual((status, b["error"]["code"]), (400, "bad_file_name"), (bad, b))
        self.assertEqual(len(self.fake_of(sid).session_calls), calls)


if __name__ == "__main__":
    unittest.main()
