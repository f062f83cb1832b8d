"""The gateway's streamed /v1/run and job cancel against fake executors (no
Docker): the relay of the executor's events, heartbeats, the result event,
errors before and after the stream began, a client hang-up reaching the
executor, and cancel routing (tenant-scoped, forwarded with the executor
token, RAGFlow's /run shape for a cancelled job)."""
import os
import tempfile
import threading
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes

TOKEN_A = "tenant-a-token-0123456789abcdef0123"
TOKEN_B = "tenant-b-token-0123456789abcdef0123"
A = {"Authorization": "Bearer " + TOKEN_A}
B = {"Authorization": "Bearer " + TOKEN_B}
EXEC_TOKEN = "executor-secret-0123456789abcdef0123"
CODE = "def main():\n    print('hi')\n"


class GatewayStream(GatewayWithFakes):
    def setUp(self):
        self.py, self.js = FakeExecutor("python"), FakeExecutor("nodejs")
        tok = tempfile.NamedTemporaryFile("w", delete=False, suffix=".token")
        tok.write(EXEC_TOKEN)
        tok.close()
        self.addCleanup(os.unlink, tok.name)
        tenants = {"tenants": {"a": {"tokens": [TOKEN_A]}, "b": {"tokens": [TOKEN_B]}}}
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "executor_token_file": tok.name}, tokens=tenants)

    def stream(self, body=None, headers=A):
        body = body or {"language": "python", "code": CODE, "stream": True}
        return sgtest.SSE(self.gw.url + "/v1/run", body, headers=headers, timeout=30)

    def test_events_are_relayed_in_order_and_the_result_is_the_plain_body(self):
        self.py.script = [(0, "stdout", {"text": "a\n"}), (0.3, "stderr", {"text": "é"}),
                          (0, "stdout", {"text": "b"})]
        s = self.stream()
        self.assertEqual(s.status, 200)
        self.assertEqual(s.headers["content-type"], "text/event-stream")
        self.assertEqual(s.headers["cache-control"], "no-cache")
        events = [(name, data) for _, name, data in s.events() if name]
        s.close()
        self.assertEqual(events[:3], [("stdout", {"text": "a\n"}), ("stderr", {"text": "é"}),
                                      ("stdout", {"text": "b"})])
        self.assertEqual(len(events), 4)
        name, streamed = events[3]
        self.assertEqual(name, "result")
        self.assertEqual(self.py.jobs[-1]["stream"], True, "the executor was asked to stream")
        st, _, plain = self.gw.call("POST", "/v1/run", {"language": "python", "code": CODE},
                                    headers=A)
        self.assertEqual(st, 200)
        self.assertNotIn("stream", self.py.jobs[-1])
        for body in (streamed, plain):
            body.pop("job_id")
            body.pop("timings")
        self.assertEqual(streamed, plain)

    def test_accept_header_asks_for_a_stream_too(self):
        self.py.script = [(0, "stdout", {"text": "x"})]
        s = self.stream({"language": "python", "code": CODE},
                        headers={**A, "Accept": "text/event-stream"})
        names = [name for _, name, _ in s.events() if name]
        s.close()
        self.assertEqual(names, ["stdout", "result"])

    def test_heartbeats_while_the_program_is_silent(self):
        self.py.script = [(0, "stdout", {"text": "x"}), (4.5, "stdout", {"text": "y"})]
        s = self.stream()
        seen = [(t, name) for t, name, _ in s.events()]
        s.close()
        hb = [t for t, name in seen if name is None]
        self.assertGreaterEqual(len(hb), 2, seen)
        self.assertEqual([n for _, n in seen if n], ["stdout", "stdout", "result"])

    def test_errors_before_the_stream_keep_their_status_codes(self):
        self.py.mode = "busy"
        s = self.stream()
        self.assertEqual(s.status, 503)
        self.assertEqual(s.body()["error"]["code"], "executor_busy")
        s.close()
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": CODE,
                                                       "stream": "yes"}, headers=A)
        self.assertEqual((st, body["error"]["code"]), (400, "bad_type"), body)

    def test_a_broken_event_stream_ends_with_an_error_result(self):
        self.py.script = [(0, "stdout", {"text": "x"}), (0, "raw", "id: 7\n\n")]
        s = self.stream()
        events = [(name, data) for _, name, data in s.events() if name]
        s.close()
        self.assertEqual(events[0], ("stdout", {"text": "x"}))
        self.assertEqual(events[-1][0], "result")
        self.assertEqual(events[-1][1]["error"]["code"], "executor_failed", events)

    def test_event_data_other_than_a_text_object_is_refused(self):
        for bad in ({"text": 1}, {"text": "a", "extra": True}, ["text"]):
            self.py.script = [(0, "stdout", bad)]
            s = self.stream()
            events = [(name, data) for _, name, data in s.events() if name]
            s.close()
            self.assertEqual([n for n, _ in events], ["result"], (bad, events))
            self.assertEqual(events[0][1]["error"]["code"], "executor_failed", events)

    def test_a_client_hang_up_reaches_the_executor(self):
        self.py.script = [(0, "stdout", {"text": "x"})] + [(0.1, None, None)] * 100
        s = self.stream()
        for _, name, _ in s.events():
            if name == "stdout":
                break
        t0 = time.monotonic()
        s.close()
        self.assertTrue(self.py.aborted.wait(5), "the executor never saw the hang-up")
        self.assertLess(time.monotonic() - t0, 1.0)
        self.gw.wait_for(lambda: any(a.get("outcome") == "client_gone"
                                     for a in self.gw.audit_lines()), what="audit line")

    def test_cancel_is_tenant_scoped_and_forwarded_with_the_executor_token(self):
        self.py.script = [(0, "stdout", {"text": "x"}), (20, "wait_cancel", None)]
        s = self.stream()
        job = s.headers["x-request-id"]
        events = s.events()
        next(e for e in events if e[1] == "stdout")
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=B)
        self.assertEqual((st, body["error"]["code"]), (404, "job_not_found"))
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel")
        self.assertEqual(st, 401, "cancel needs a token like any job")
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual((st, body), (202, {"job_id": job, "status": "cancelling"}))
        result = [d for _, name, d in events if name == "result"]
        s.close()
        self.assertEqual(result[0]["status"], "cancelled", result)
        self.assertEqual([c[0] for c in self.py.cancels], [job])
        self.assertEqual(self.py.cancels[0][1]["Authorization"], "Bearer " + EXEC_TOKEN)
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual((st, body["error"]["code"]), (409, "job_ended"))
        st, _, body = self.gw.call("GET", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual(st, 405)
        st, _, body = self.gw.call("POST", "/v1/jobs/a%2Fb/cancel", headers=A)
        self.assertEqual((st, body["error"]["code"]), (404, "job_not_found"))

    def test_cancelled_on_run_is_ragflows_program_error(self):
        self.py.status = "cancelled"
        st, _, body = self.gw.call("POST", "/run", {"language": "python", "code_b64":
                                                    "ZGVmIG1haW4oKTogcGFzcwo="}, headers=A)
        self.assertEqual((st, body["status"], body["detail"]), (200, "program_error", "cancelled"))
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": CODE},
                                   headers=A)
        self.assertEqual(body["status"], "cancelled")

    def mcp_session(self):
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}
        st, h, _ = self.gw.call("POST", "/mcp", init, headers={**A, "Accept": MCP_ACCEPT})
        self.assertEqual(st, 200)
        return {**A, "Accept": MCP_ACCEPT, "Mcp-Session-Id": h["mcp-session-id"],
                "MCP-Protocol-Version": "2025-06-18"}

    def test_mcp_run_code_with_a_progress_token_streams_progress(self):
        hdrs = self.mcp_session()
        self.py.script = [(0, "stdout", {"text": "one\n"}), (0.2, "stderr", {"text": "two"})]
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "run_code", "_meta": {"progressToken": "tok-1"},
                           "arguments": {"language": "python", "code": CODE}}}
        s = sgtest.SSE(self.gw.url + "/mcp", call, headers=hdrs, timeout=30)
        self.assertEqual(s.status, 200)
        self.assertEqual(s.headers["content-type"], "text/event-stream")
        msgs = [(name, data) for _, name, data in s.events() if name]
        s.close()
        self.assertEqual([n for n, _ in msgs], ["message"] * 3)
        self.assertEqual([m["params"] for _, m in msgs[:2]],
                         [{"progressToken": "tok-1", "progress": 1, "message": "one\n"},
                          {"progressToken": "tok-1", "progress": 2, "message": "stderr: two"}])
        self.assertEqual(msgs[0][1]["method"], "notifications/progress")
        final = msgs[2][1]
        self.assertEqual((final["id"], final["result"]["isError"]), (7, False), final)
        # no token, or a client that takes only JSON: one JSON answer as before
        del call["params"]["_meta"]
        st, h, body = self.gw.call("POST", "/mcp", call, headers=hdrs)
        self.assertEqual((st, h["content-type"], body["id"]), (200, "application/json", 7))
        call["params"]["_meta"] = {"progressToken": 3}
        st, h, body = self.gw.call("POST", "/mcp", call, headers={**hdrs,
                                                                  "Accept": "application/json"})
        self.assertEqual((st, h["content-type"], body["id"]), (200, "application/json", 7))
        self.assertEqual([j.get("stream") for j in self.py.jobs], [True, None, None])


MCP_ACCEPT = "application/json, text/event-stream"


if __name__ == "__main__":
    unittest.main()
