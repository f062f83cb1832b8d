"""The client against a scripted HTTP server on loopback (no sandgate):
error classes, which answers are retried and which never are, the token,
streams and what closing one early does, sessions."""
import json
import os
import socket
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import sandgate  # noqa: E402

OK = {"status": "success", "stdout": "hi\n", "stderr": "", "exit_code": 0, "detail": None,
      "result": {"present": True, "value": {"n": 42}, "type": "json"}, "job_id": "j1",
      "artifacts": [{"name": "a.txt", "mime_type": "text/plain", "size": 2,
                     "content_b64": "aGk="}], "violations": [], "timings": {"total_ms": 3}}
REJECTED = {"status": "program_runner_error", "stdout": "", "exit_code": -999,
            "detail": "Code is unsafe", "stderr": "Line 1: ...",
            "result": {"present": False, "value": None, "type": "json"}, "artifacts": [],
            "violations": [{"rule": "import.not-allowed", "severity": "error", "line": 1,
                            "column": 8, "message": "import of module 'os' is not allowed"}]}


def error(status, code, headers=None):
    return (status, {"error": {"code": code, "message": code + " happened"}}, headers or {})


class Fake:
    """Answers each request with the next scripted (status, body, headers),
    or with a callable(handler) for streams; records (method, path, headers, body)."""

    def __init__(self):
        self.script = []
        self.seen = []
        fake = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def handle_one(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                fake.seen.append((self.command, self.path, dict(self.headers), body))
                step = fake.script.pop(0) if fake.script else (500, {"error": {}}, {})
                if callable(step):
                    return step(self)
                status, payload, hdrs = step
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(raw)))
                self.send_header("X-Request-Id", "req0000000000001")
                for k, v in hdrs.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = do_DELETE = handle_one

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.fake = Fake()
        self.addCleanup(self.fake.stop)
        self.c = sandgate.Client(self.fake.url, "tok", retries=2, max_retry_delay=0.05)

    def paths(self):
        return [(m, p) for m, p, _, _ in self.fake.seen]

    def test_run_result_token_and_body(self):
        self.fake.script = [(200, OK, {})]
        r = self.c.run("def main():\n    return 1\n", arguments={"a": 1}, files={"in.txt": b"x"},
                       limits={"timeout_ms": 500})
        self.assertEqual((r.ok, r.value, r.stdout, r.job_id), (True, {"n": 42}, "hi\n", "j1"))
        self.assertEqual((r.artifacts[0].name, r.artifacts[0].data), ("a.txt", b"hi"))
        m, p, h, body = self.fake.seen[0]
        self.assertEqual((m, p, h["Authorization"]), ("POST", "/v1/run", "Bearer tok"))
        self.assertEqual(json.loads(body), {"language": "python", "code": "def main():\n    return 1\n",
                                            "arguments": {"a": 1}, "files": {"in.txt": "eA=="},
                                            "limits": {"timeout_ms": 500}})

    def test_url_and_token_from_the_environment(self):
        self.fake.script = [(200, {"tenant": {"name": "t"}}, {})]
        with mock.patch.dict(os.environ, {"SANDGATE_URL": self.fake.url + "/",
                                          "SANDGATE_TOKEN": "envtok"}):
            self.assertEqual(sandgate.Client().whoami()["tenant"]["name"], "t")
        self.assertEqual(self.fake.seen[0][2]["Authorization"], "Bearer envtok")

    def test_rejection_raises_policy_violation_with_rule_and_line(self):
        self.fake.script = [(200, REJECTED, {})]
        with self.assertRaises(sandgate.PolicyViolation) as cm:
            self.c.run("import os")
        v = cm.exception.violations[0]
        self.assertEqual((v.rule, v.line, v.column), ("import.not-allowed", 1, 8))
        self.assertEqual(cm.exception.result.exit_code, -999)

    def test_error_classes(self):
        cases = [(error(401, "unauthorized"), sandgate.Unauthorized),
                 (error(400, "bad_json"), sandgate.BadRequest),
                 (error(403, "policy_not_allowed"), sandgate.Forbidden),
                 (error(404, "session_not_found"), sandgate.SessionNotFound),
                 (error(409, "job_ended"), sandgate.JobEnded),
                 (error(409, "something_new"), sandgate.Conflict),
                 (error(410, "session_lost"), sandgate.SessionLost),
                 (error(413, "code_too_large"), sandgate.PayloadTooLarge),
                 (error(429, "too_many_sessions"), sandgate.TooManySessions),
                 (error(502, "executor_failed"), sandgate.ExecutorFailed),
                 (error(503, "executor_busy"), sandgate.Busy),
                 ((418, b"<html>teapot</html>", {}), sandgate.APIError)]
        for answer, cls in cases:
            self.fake.script = [answer]
            with self.assertRaises(cls) as cm:
                self.c.run("x")
            self.assertEqual(type(cm.exception), cls, answer)
            self.assertEqual(cm.exception.status, answer[0])
            self.assertEqual(cm.exception.request_id, "req0000000000001")

    def test_rate_limited_carries_retry_after_and_is_not_retried(self):
        self.fake.script = [error(429, "rate_limited", {"Retry-After": "3"}), (200, OK, {})]
        with self.assertRaises(sandgate.RateLimited) as cm:
            self.c.run("x")
        self.assertEqual(cm.exception.retry_after, 3.0)
        self.assertEqual(len(self.fake.seen), 1)

    def test_unreachable_executor_is_retried(self):
        self.fake.script = [error(502, "executor_unreachable")] * 2 + [(200, OK, {})]
        self.assertTrue(self.c.run("x").ok)
        self.assertEqual(len(self.fake.seen), 3)

    def test_retries_are_bounded(self):
        self.fake.script = [error(502, "executor_unreachable")] * 5
        with self.assertRaises(sandgate.ExecutorUnreachable):
            self.c.run("x")
        self.assertEqual(len(self.fake.seen), 3)

    def test_busy_is_retried_only_with_retry_after(self):
        self.fake.script = [error(503, "executor_busy", {"Retry-After": "1"}), (200, OK, {})]
        t0 = time.monotonic()
        self.assertTrue(self.c.run("x").ok)
        self.assertLess(time.monotonic() - t0, 1.0, "Retry-After is capped by max_retry_delay")
        self.fake.script = [error(503, "executor_busy"), (200, OK, {})]
        with self.assertRaises(sandgate.Busy):
            self.c.run("x")
        self.assertEqual(len(self.fake.seen), 3)

    def test_a_job_that_may_have_run_is_never_sent_again(self):
        self.fake.script = [error(502, "executor_failed"), (200, OK, {})]
        with self.assertRaises(sandgate.ExecutorFailed):
            self.c.run("x")
        self.fake.script = [lambda h: h.connection.shutdown(socket.SHUT_RDWR), (200, OK, {})]
        with self.assertRaises(sandgate.TransportError):
            self.c.run("x")
        self.assertEqual(len(self.fake.seen), 2)

    def test_connection_refused_is_retried(self):
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        self.addCleanup(lsock.close)
        port = lsock.getsockname()[1]
        got = []

        def listen_later():
            time.sleep(0.1)
            lsock.listen(1)
            conn, _ = lsock.accept()
            got.append(conn.recv(65536))
            raw = json.dumps(OK).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(raw), raw))
            conn.close()
            lsock.close()  # refused again
        t = threading.Thread(target=listen_later)
        t.start()
        c = sandgate.Client(f"http://127.0.0.1:{port}", retries=20, max_retry_delay=1)  # 4 s
        self.assertTrue(c.run("x").ok)
        t.join()
        self.assertEqual(len(got), 1)
        with self.assertRaises(sandgate.TransportError):
            sandgate.Client(f"http://127.0.0.1:{port}", retries=1, max_retry_delay=0).run("x")

    def sse(self, events, hold=None):
        """A stream answer: (event, data) pairs, then waits on hold (an Event)."""
        def answer(h):
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("X-Request-Id", "job0000000000042")
            h.end_headers()
            for name, data in events:
                h.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                h.wfile.write(b": hb\n\n")
                h.wfile.flush()
            if hold is not None:
                hold.wait(10)
            h.close_connection = True  # no length: the end of the answer is the hang-up
        return answer

    def test_stream_yields_pieces_then_the_result(self):
        self.fake.script = [self.sse([("stdout", {"text": "a\n"}), ("stderr", {"text": "w"}),
                                      ("future_event", {"x": 1}), ("result", OK)])]
        with self.c.stream("x") as s:
            self.assertEqual(s.job_id, "job0000000000042")
            events = list(s)
        self.assertEqual(events[:2], [sandgate.Stdout("a\n"), sandgate.Stderr("w")])
        self.assertEqual(events[2].result.value, {"n": 42})
        self.assertEqual(len(events), 3)
        self.assertEqual(json.loads(self.fake.seen[0][3])["stream"], True)
        self.assertEqual(len(self.fake.seen), 1, "no cancel after a result")

    def test_stream_rejection_and_error_events_raise(self):
        self.fake.script = [self.sse([("result", REJECTED)])]
        with self.assertRaises(sandgate.PolicyViolation):
            list(self.c.stream("import os"))
        self.fake.script = [self.sse([("stdout", {"text": "a"}),
                                      ("result", {"error": {"code": "executor_failed",
                                                            "message": "died"}})])]
        s = self.c.stream("x")
        self.assertEqual(next(s), sandgate.Stdout("a"))
        with self.assertRaises(sandgate.ExecutorFailed):
            next(s)

    def test_stream_closed_early_cancels_the_job_and_hangs_up(self):
        hold = threading.Event()
        self.fake.script = [self.sse([("stdout", {"text": "started\n"})], hold),
                            (202, {"job_id": "job0000000000042", "status": "cancelling"}, {})]
        s = self.c.stream("x")
        self.assertEqual(next(s), sandgate.Stdout("started\n"))
        s.close()
        hold.set()
        self.assertEqual(self.paths()[1], ("POST", "/v1/jobs/job0000000000042/cancel"))
        with self.assertRaises(StopIteration):
            next(s)

    def test_a_json_answer_to_a_stream_is_its_result(self):
        self.fake.script = [(200, OK, {"Content-Type": "application/json"}),
                            (200, b"not json", {"Content-Type": "application/json"})]
        events = list(self.c.stream("x"))
        self.assertEqual([type(e) for e in events], [sandgate.Result])
        self.assertEqual(events[0].result.value, {"n": 42})
        with self.assertRaises(sandgate.TransportError):
            list(self.c.stream("x"))

    def test_a_stream_that_ends_without_a_result_is_an_error(self):
        self.fake.script = [self.sse([("stdout", {"text": "a"})])]
        s = self.c.stream("x")
        next(s)
        with self.assertRaises(sandgate.TransportError):
            next(s)

    def test_a_session_stream_closed_early_interrupts_and_waits_until_idle(self):
        hold = threading.Event()
        self.fake.script = [(201, {"session_id": "py-1", "language": "python"}, {}),
                            self.sse([("stdout", {"text": "started\n"})], hold),
                            (202, {"cancel_sent": True}, {}), (200, {"state": "busy"}, {}),
                            (200, {"state": "idle"}, {}), (204, b"", {})]
        with self.c.session() as s:
            with s.exec_stream("long") as st:
                self.assertEqual(next(st), sandgate.Stdout("started\n"))
            hold.set()
        p = "/v1/sessions/py-1"
        self.assertEqual(self.paths(), [("POST", "/v1/sessions"), ("POST", p + "/exec"),
                                        ("POST", p + "/cancel"), ("GET", p), ("GET", p),
                                        ("DELETE", p)])

    def test_session_lifecycle(self):
        created = {"session_id": "py-ab/c", "language": "python", "state": "idle"}
        cell = dict(OK, session_id="py-ab/c", session_lost=False)
        self.fake.script = [(201, created, {}), error(409, "session_busy"), (200, cell, {}),
                            (204, b"", {}), (200, b"a,b\n", {}),
                            (200, {"files": [{"name": "d.csv", "size": 4}]}, {}),
                            error(409, "no_cell_running"), error(410, "session_lost")]
        with self.c.session(timeout_ms=900) as s:
            self.assertEqual(s.exec("x + 1").value, {"n": 42})
            s.upload("d.csv", "a,b\n")
            self.assertEqual(s.download("d.csv"), b"a,b\n")
            self.assertEqual(s.files(), [sandgate.FileInfo("d.csv", 4)])
            self.assertFalse(s.interrupt())
        self.assertEqual(self.paths(), [
            ("POST", "/v1/sessions"), ("POST", "/v1/sessions/py-ab%2Fc/exec"),
            ("POST", "/v1/sessions/py-ab%2Fc/exec"), ("PUT", "/v1/sessions/py-ab%2Fc/files/d.csv"),
            ("GET", "/v1/sessions/py-ab%2Fc/files/d.csv"), ("GET", "/v1/sessions/py-ab%2Fc/files"),
            ("POST", "/v1/sessions/py-ab%2Fc/cancel"), ("DELETE", "/v1/sessions/py-ab%2Fc")])
        self.assertEqual(json.loads(self.fake.seen[0][3]),
                         {"language": "python", "limits": {"timeout_ms": 900}})
        self.assertEqual(self.fake.seen[3][3], b"a,b\n")
        self.assertTrue(s.closed)


if __name__ == "__main__":
    unittest.main()
