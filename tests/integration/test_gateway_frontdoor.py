"""The gateway's front door under abuse, over raw loopback sockets: slow
clients (slowloris) do not stop others being served and are cut off after the
receive deadline; per-address and global connection limits refuse instead of
stalling; bodies are refused on their headers (no token, a declared length
over the cap, too much body memory in flight) without being read; malformed
or ambiguous HTTP gets 400 in the JSON error shape, with X-Request-Id, an
audit line and a metric."""
import json
import os
import re
import resource
import socket
import statistics
import threading
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway

TOKEN = "frontdoor-token-0123456789"
TOKENS = {"tenants": {"t": {"tokens": [TOKEN]}}}
OK_PY = "def main(n=1):\n    return n\n"
JOB = json.dumps({"language": "python", "code": OK_PY}).encode()


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect(port, src="127.0.0.1", timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def held_request(port, src):
    """A connection whose head the gateway accepted (its 100 Continue is
    read), its body still to come."""
    s = connect(port, src)
    s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: gw\r\nContent-Length: 100\r\n"
              b"Expect: 100-continue\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(256)
        if not chunk:
            raise AssertionError(f"closed before its head was accepted: {got!r}")
        got += chunk
    if not got.startswith(b"HTTP/1.1 100"):
        raise AssertionError(f"head not accepted: {got!r}")
    return s


def read_all(s, timeout=5):
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    return out


def parse(raw):
    """(status, headers dict lower-case, body bytes) of one HTTP/1.1 answer."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def exchange(port, data, src="127.0.0.1", timeout=5):
    s = connect(port, src, timeout)
    t0 = time.monotonic()
    s.sendall(data)
    raw = read_all(s, timeout)
    s.close()
    return parse(raw) + (time.monotonic() - t0,)


def post(path, body, headers=b""):
    return (b"POST " + path + b" HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
            + headers + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


class FrontDoorCase(unittest.TestCase):
    config = {}
    tokens = None

    def setUp(self):
        raise_nofile(8192)
        self.fake = FakeExecutor("python")
        cfg = {"executors": {"python": [self.fake.url], "nodejs": [self.fake.url]},
               "log_level": "info"}
        cfg.update(self.config)
        self.gw = Gateway(cfg, tokens=self.tokens)
        self.port = self.gw.port

    def tearDown(self):
        try:
            self.assertEqual(self.gw.stop(), 0)
        finally:
            self.fake.stop()

    def open_connections(self):
        """The gateway's own count of open client connections (its metrics
        request not included)."""
        _, _, metrics = self.gw.call("GET", "/metrics")
        m = re.search(r"^sandgate_connections_open (\d+)$", metrics, re.M)
        return int(m.group(1)) - 1

    def job_latency(self, src, n, headers=b""):
        lat = []
        for _ in range(n):
            st, _, body, dt = exchange(self.port, post(b"/v1/run", JOB, headers), src, 10)
            self.assertEqual(st, 200, body)
            lat.append(dt)
        return lat


class TestSlowClients(FrontDoorCase):
    config = {"max_connections": 512, "max_connections_per_ip": 64, "receive_timeout_s": 3,
              "idle_timeout_s": 60}

    def test_2000_slow_connections_do_not_slow_a_normal_client(self):
        quiet = self.job_latency("127.0.0.9", 20)
        socks, stop = [], threading.Event()
        # 2,000 clients over 4 loopback addresses, each sending a header byte
        # every 0.5 s: never idle long enough for the idle timeout.
        for i in range(2000):
            try:
                s = connect(self.port, f"127.0.0.{1 + i % 4}", 2)
                s.setblocking(False)
                s.send(b"P")
                socks.append(s)
            except OSError:
                pass  # refused at accept: fine

        def trickle():
            while not stop.is_set():
                for s in socks:
                    try:
                        s.send(b"O")
                    except OSError:
                        pass
                stop.wait(0.5)
        t = threading.Thread(target=trickle, daemon=True)
        t.start()
        try:
            time.sleep(0.5)
            busy = self.job_latency("127.0.0.9", 20)
            st, _, _, dt = exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: gw\r\n"
                                    b"Connection: close\r\n\r\n", "127.0.0.10")
            self.assertEqual(st, 200)
        finally:
            stop.set()
            t.join()
        q99, b99 = max(quiet), max(busy)
        self.assertLess(b99, max(2 * q99, 0.25), (quiet, busy))
        for s in socks:
            s.close()

    def trickle(self, first, then):
        """Seconds until the gateway closed a connection sent `first`, then
        one byte of `then` at a time (never idle, never complete); None."""
        s = connect(self.port, "127.0.0.5")
        t0 = time.monotonic()
        s.sendall(first)
        s.settimeout(0.5)
        for ch in then:
            try:
                s.send(bytes([ch]))
                if s.recv(1) == b"":
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        else:
            s.close()
            return None
        s.close()
        return time.monotonic() - t0

    def test_trickled_head_is_cut_at_the_header_deadline(self):
        closed = self.trickle(b"", b"POST /v1/run HTTP/1.1\r\nHost: gw\r\nX-Slow: " + b"a" * 40)
        self.assertIsNotNone(closed, "the gateway kept a trickling request open")
        # header_timeout_s is 10 by default, capped by receive_timeout_s (3)
        self.assertLess(closed, 3 + 2, closed)
        _, _, metrics = self.gw.call("GET", "/metrics")
        self.assertRegex(metrics, r'sandgate_connections_closed_total\{reason="header_timeout"\}'
                                  r' [1-9]')

    def test_trickled_body_is_cut_at_the_receive_deadline(self):
        closed = self.trickle(b"POST /v1/run HTTP/1.1\r\nHost: gw\r\nContent-Length: 100\r\n\r\n",
                              b"a" * 40)
        self.assertIsNotNone(closed, "the gateway kept a trickling body open")
        self.assertLess(closed, 3 + 2, closed)
        _, _, metrics = self.gw.call("GET", "/metrics")
        self.assertRegex(metrics, r'sandgate_connections_closed_total\{reason="receive_timeout"\}'
                                  r' [1-9]')

    def test_per_address_limit_refuses_at_once(self):
        # Several event threads accept from one listen queue, so the order in
        # which connections are counted is not the order of connect(): wait
        # until the gateway holds all 64 before the 65th arrives. Each has
        # its head accepted and its body pending: not evictable (a connection
        # still waiting for its head would be: test_gateway_fairness).
        socks = [held_request(self.port, "127.0.0.6") for _ in range(64)]
        deadline = time.monotonic() + 10
        while self.open_connections() < 64 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertGreaterEqual(self.open_connections(), 64)
        extra = connect(self.port, "127.0.0.6")
        t0 = time.monotonic()
        extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
        raw = read_all(extra, 5)
        self.assertEqual(raw, b"")  # closed, not answered and not left waiting
        self.assertLess(time.monotonic() - t0, 2)
        # and counted with its reason (the refusal was in no metric)
        _, _, metrics = self.gw.call("GET", "/metrics")
        self.assertRegex(metrics, r'sandgate_connections_closed_total\{reason="per_address"\}'
                                  r' [1-9]')
        st, _, _, _ = exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: gw\r\n"
                               b"Connection: close\r\n\r\n", "127.0.0.7")
        self.assertEqual(st, 200)
        for s in socks + [extra]:
            s.close()


class TestGlobalLimit(FrontDoorCase):
    config = {"max_connections": 40, "max_connections_per_ip": 0}

    def test_past_the_global_limit_new_connections_are_refused_not_stalled(self):
        # heads accepted, bodies pending: nothing to evict
        socks = [held_request(self.port, "127.0.0.8") for _ in range(40)]
        # The event threads accept the 40 in their own time: until they have,
        # a new connection may still be served (and then closed by us).
        deadline = time.monotonic() + 5
        while True:
            extra = connect(self.port, "127.0.0.9")
            t0 = time.monotonic()
            try:
                extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            raw = read_all(extra, 5)
            if raw == b"" or time.monotonic() > deadline:
                break
            extra.close()
            time.sleep(0.1)
        self.assertEqual(raw, b"")  # closed at once: not answered and not left waiting
        self.assertLess(time.monotonic() - t0, 2)
        for s in socks + [extra]:
            s.close()
        time.sleep(0.3)
        _, _, metrics = self.gw.call("GET", "/metrics")
        self.assertRegex(metrics, r'sandgate_connections_closed_total\{reason="max_connections"\}'
                                  r' [1-9]')
        st, _, _, _ = exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: gw\r\n"
                               b"Connection: close\r\n\r\n")
        self.assertEqual(st, 200)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class TestBodiesBeforeAuth(FrontDoorCase):
    tokens = TOKENS
    config = {"max_body_bytes": 8 << 20, "max_bodies_bytes": 16 << 20}

    def audit_for(self, rid):
        self.gw.wait_for(lambda: any(a.get("request_id") == rid for a in self.gw.audit_lines()),
                         what="audit line " + rid)
        return [a for a in self.gw.audit_lines() if a.get("request_id") == rid][0]

    def test_unauthenticated_upload_is_refused_on_its_headers(self):
        s = connect(self.port)
        s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n"
                  % (8 << 20))
        st, hdrs, body = parse(read_all(s, 3))  # no body byte was sent
        s.close()
        self.assertEqual(st, 401, body)
        self.assertEqual(json.loads(body)["error"]["code"], "unauthorized")
        self.assertEqual(self.audit_for(hdrs["x-request-id"])["status"], 401)

    def test_small_refused_body_is_drained_and_the_connection_kept(self):
        s = connect(self.port)
        s.sendall(post(b"/v1/run", JOB).replace(b"Connection: close\r\n", b"") +
                  b"GET /healthz HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n")
        raw = read_all(s, 5)
        s.close()
        self.assertIn(b"HTTP/1.1 401", raw)
        self.assertIn(b'{"status":"ok"}', raw)  # the next request on the same connection

    def test_100_unauthenticated_8mib_uploads_do_not_grow_memory(self):
        pid = self.gw.daemon.proc.pid
        before = rss_kb(pid)
        chunk = b"x" * (1 << 20)

        def one():
            s = connect(self.port, timeout=10)
            try:
                s.sendall(b"POST /run HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n"
                          % (8 << 20))
                for _ in range(8):
                    s.sendall(chunk)
            except OSError:
                pass  # the gateway answered 401 and closed: expected
            s.close()
        threads = [threading.Thread(target=one) for _ in range(100)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        grew_mb = (rss_kb(pid) - before) / 1024
        self.assertLess(grew_mb, 64, f"RSS grew {grew_mb:.0f} MB")

    def test_declared_length_over_the_cap_is_413_at_once(self):
        st, hdrs, body, dt = exchange(self.port, b"POST /v1/run HTTP/1.1\r\nHost: gw\r\n"
                                      b"Authorization: Bearer " + TOKEN.encode() +
                                      b"\r\nContent-Length: 100000000000\r\n\r\n")
        self.assertEqual(st, 413, body)
        self.assertLess(dt, 2)
        self.assertEqual(json.loads(body)["error"]["code"], "body_too_large")
        self.assertEqual(self.audit_for(hdrs["x-request-id"])["outcome"], "body_too_large")

    def test_body_a_little_over_the_cap_is_413_even_for_a_client_that_sends_it_all(self):
        # http.client sends the whole body before it reads: the gateway drains
        # (never holds) a body up to twice the cap so such clients see the 413.
        big = b'{"code": "' + b"A" * (9 << 20) + b'"}'
        st, hdrs, body = self.gw.call("POST", "/v1/run", big,
                                      {"Authorization": "Bearer " + TOKEN})
        self.assertEqual(st, 413, body)
        self.assertEqual(body["error"]["code"], "body_too_large")

    def test_bodies_in_flight_are_capped_globally(self):
        auth = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
        held = []
        for _ in range(2):  # 2 x 7 MiB of 8 MiB declared: 14 of 16 MiB held
            s = connect(self.port)
            s.sendall(b"POST /v1/run HTTP/1.1\r\nHost: gw\r\n" + auth +
                      b"Content-Length: %d\r\n\r\n" % (8 << 20) + b"x" * (7 << 20))
            held.append(s)
        time.sleep(1)
        # a client that sends its whole body before it reads sees the 503: a
        # body within the cap is drained, never held (it was a reset)
        st, hdrs, body, dt = exchange(self.port, b"POST /v1/run HTTP/1.1\r\nHost: gw\r\n" +
                                      auth + b"Content-Length: %d\r\n\r\n" % (4 << 20) +
                                      b"x" * (4 << 20))
        self.assertEqual(st, 503, body)
        self.assertEqual(json.loads(body)["error"]["code"], "server_busy")
        self.assertIn("retry-after", hdrs)
        st, hdrs, body = self.gw.call("POST", "/v1/run", b"x" * (4 << 20),
                                      {"Authorization": "Bearer " + TOKEN})
        self.assertEqual((st, body["error"]["code"]), (503, "server_busy"), body)
        for s in held:
            s.close()
        time.sleep(0.5)  # released: the same request now gets through to auth + parse
        st, _, body, _ = exchange(self.port, post(b"/v1/run", JOB, auth))
        self.assertEqual(st, 200, body)


MALFORMED = {
    "space in a header name": b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX Bad: 1\r\n\r\n",
    "space before the colon": b"GET /healthz HTTP/1.1\r\nHost : gw\r\n\r\n",
    "HTTP/1.1 without Host": b"GET /healthz HTTP/1.1\r\n\r\n",
    "two Host headers": b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    # No body bytes after an ambiguous framing: the gateway answers on the
    # headers and closes, and unread bytes would make the kernel reset the
    # connection before the client reads the answer.
    "two Content-Length": b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n"
                          b"Content-Length: 5\r\n\r\n",
    "Content-Length and chunked": b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\n"
                                  b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
    "unknown Transfer-Encoding": b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\n"
                                 b"Transfer-Encoding: gzip\r\n\r\n",
    # libmicrohttpd 0.9.75 keeps a header value up to its first NUL and drops
    # the rest: the gateway refuses what it would otherwise never see.
    "NUL in a header value": b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A: ab\x00cd\r\n\r\n",
    "NUL in the last header": b"GET /healthz HTTP/1.1\r\nX-A: ab\x00cd\r\nHost: gw\r\n\r\n",
    "NUL in Authorization": b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "
                            + TOKEN.encode() + b"\x00junk\r\nContent-Length: 0\r\n\r\n",
    "NUL in the target": b"GET /healthz\x00/x HTTP/1.1\r\nHost: gw\r\n\r\n",
    "encoded NUL in the target": b"GET /healthz%00/x HTTP/1.1\r\nHost: gw\r\n\r\n",
    "NUL in the method": b"GE\x00T /healthz HTTP/1.1\r\nHost: gw\r\n\r\n",
    "two spaces in the request line": b"GET  /healthz HTTP/1.1\r\nHost: gw\r\n\r\n",
    "space in the target": b"GET /heal thz HTTP/1.1\r\nHost: gw\r\n\r\n",
    "folded header line": b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A: a\r\n b\r\n\r\n",
    # bare LF line ends (libmicrohttpd accepts them; a proxy in front may
    # split the head differently): every line, or only one of them
    "bare LF everywhere": b"GET /healthz HTTP/1.1\nHost: gw\nX-A:  a  \n\n",
    "bare LF after the request line": b"GET /healthz HTTP/1.1\nHost: gw\r\n\r\n",
    "bare LF after a header": b"GET /healthz HTTP/1.1\r\nHost: gw\nX-A: a\r\n\r\n",
    "bare LF ending the head": b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\n",
    "bare LF without headers": b"GET /healthz HTTP/1.0\n\n",
}

# Over sandgate's own limits but inside libmicrohttpd's 64 KiB connection pool:
# the JSON shape, like every other refusal.
OVER_LIMITS = {
    "target over 8 KiB": (b"GET /healthz?" + b"a" * 10000 + b" HTTP/1.1\r\nHost: gw\r\n\r\n",
                          414, "uri_too_long"),
    "headers over 16 KiB": (b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A: " + b"a" * 20000
                            + b"\r\n\r\n", 431, "headers_too_large"),
}

# Answered by libmicrohttpd 0.9.75 itself, before any sandgate code can act
# (docs/troubleshooting.md lists them): (request, status, exact body, whether
# the request line was parsed, so the gateway still writes an audit line).
LIB_PAGE_BIG = (b"<html><head><title>Request too big</title></head><body>Your HTTP header was "
                b"too big for the memory constraints of this webserver.</body></html>")
LIB_PAGE_MALFORMED = (b"<html><head><title>Request malformed</title></head><body>Your HTTP "
                      b"request was syntactically incorrect.</body></html>")
CHUNKED_POST = (b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "
                + TOKEN.encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
LIBRARY_ANSWERS = {
    "target over the pool": (b"GET /healthz?" + b"a" * 100000 + b" HTTP/1.1\r\nHost: gw\r\n\r\n",
                             414, LIB_PAGE_BIG, False),
    "HTTP/2.0": (b"GET /healthz HTTP/2.0\r\nHost: gw\r\n\r\n", 505,
                 b"<html><head><title>Requested HTTP version is not supported</title></head>"
                 b"<body>Requested HTTP version is not supported.</body></html>", False),
    "malformed version": (b"GET /healthz HTTX/1.1\r\nHost: gw\r\n\r\n", 400, LIB_PAGE_MALFORMED,
                          False),
    "headers over the pool": (b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A: " + b"a" * 100000
                              + b"\r\n\r\n", 431, LIB_PAGE_BIG, True),
    "header line without a colon": (b"GET /healthz HTTP/1.1\r\nHost: gw\r\nXA\r\n\r\n", 400,
                                    LIB_PAGE_MALFORMED, True),
    "broken chunked framing": (CHUNKED_POST + b"zz\r\nhello\r\n0\r\n\r\n", 400,
                               b"<html><head><title>Request malformed</title></head><body>Your "
                               b"HTTP chunked encoding was syntactically incorrect.</body></html>",
                               True),
    "chunk extension over the pool": (CHUNKED_POST + b"5;" + b"e" * 200000 + b"\r\nhello\r\n0\r\n"
                                      b"\r\n", 500, None, True),
}
# A Content-Length libmicrohttpd cannot parse: its answer, and 0.9.75 sends its
# status line and headers twice (the second block arrives as the start of the body).
DOUBLED_HEAD = {
    "Content-Length: -1": (b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nContent-Length: -1\r\n\r\n",
                           400, b"HTTP/1.1 400 Bad Request\r\n"),
    "Content-Length over 2^64": (b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nContent-Length: "
                                 + b"9" * 24 + b"\r\n\r\n", 413, b"HTTP/1.1 413 Content Too Large\r\n"),
}


class TestStrictHttp(FrontDoorCase):
    tokens = TOKENS  # refusals on the headers come before authentication

    def test_malformed_requests_get_400_json_with_id_audit_and_metric(self):
        for what, data in MALFORMED.items():
            with self.subTest(what):
                st, hdrs, body, _ = exchange(self.port, data)
                self.assertEqual(st, 400, (what, body))
                self.assertTrue(hdrs.get("content-type", "").startswith("application/json"))
                self.assertEqual(json.loads(body)["error"]["code"], "bad_http")
                rid = hdrs["x-request-id"]
                self.gw.wait_for(lambda: any(a.get("request_id") == rid
                                             for a in self.gw.audit_lines()), what=rid)
        _, _, metrics = self.gw.call("GET", "/metrics")
        self.assertRegex(metrics, r'sandgate_requests_total\{[^}]*status="400"[^}]*\} [1-9]')

    def test_over_sandgate_limits_the_answer_is_json_with_an_id(self):
        for what, (data, status, code) in OVER_LIMITS.items():
            with self.subTest(what):
                st, hdrs, body, _ = exchange(self.port, data)
                self.assertEqual(st, status, (what, body[:200]))
                self.assertEqual(json.loads(body)["error"]["code"], code)
                self.assertRegex(hdrs.get("x-request-id", ""), r"^[0-9a-f]{16}$")

    def library_audit_count(self, status):
        return sum(1 for a in self.gw.audit_lines() if a.get("status") == status)

    def library_answers(self):
        _, _, metrics = self.gw.call("GET", "/metrics")
        return int(re.search(r"^sandgate_http_library_answers_total (\d+)$", metrics, re.M).group(1))

    def test_what_libmicrohttpd_answers_itself_is_as_documented(self):
        for what, (data, status, page, audited) in LIBRARY_ANSWERS.items():
            with self.subTest(what):
                before = self.library_audit_count(status)
                counted = self.library_answers()
                st, hdrs, body, _ = exchange(self.port, data)
                self.assertEqual(st, status, (what, body[:200]))
                self.assertNotIn("x-request-id", hdrs)
                if page is not None:
                    self.assertEqual(body, page)
                else:
                    self.assertIn(b"Internal server error", body)
                if audited:  # the request line was parsed: audit line and metric
                    self.gw.wait_for(lambda: self.library_audit_count(status) > before, what=what)
                self.assertEqual(self.library_answers(), counted + 1)  # counted either way
        st, _, body, _ = exchange(self.port, b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
        self.assertEqual(st, 200, body)  # and the gateway keeps serving

    def test_unparsable_content_length_gets_the_library_answer_twice_headed(self):
        for what, (data, status, head) in DOUBLED_HEAD.items():
            with self.subTest(what):
                before = self.library_audit_count(status)
                st, hdrs, body, _ = exchange(self.port, data)
                self.assertEqual(st, status, (what, body[:200]))
                self.assertTrue(body.startswith(head), body[:200])
                self.assertIn(b"<html>", body)
                self.gw.wait_for(lambda: self.library_audit_count(status) > before, what=what)

    def test_lenient_but_valid_requests_still_pass(self):
        for data in (b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A:  a  \r\n\r\n",
                     b"GET /healthz HTTP/1.0\r\n\r\n",
                     b"GET /healthz HTTP/1.1\r\nHost:gw\r\nX-Empty:\r\n\r\n",
                     b"GET /healthz?a=b%20c HTTP/1.1\r\nHost: gw\r\n\r\n",
                     b"GET /healthz HTTP/1.1\r\nHost: gw\r\nX-A: " + b"a" * 8000 + b"\r\n\r\n"):
            with self.subTest(data[:40]):
                st, _, body, _ = exchange(self.port, data)
                self.assertEqual(st, 200, body)

    def test_a_normal_request_still_passes(self):
        st, _, body, _ = exchange(self.port, post(b"/v1/analyze", JOB, b"Authorization: Bearer "
                                                  + TOKEN.encode() + b"\r\n"))
        self.assertEqual(st, 200, body)


if __name__ == "__main__":
    unittest.main()


class TestStopAfterClientsLeft(unittest.TestCase):
    """A client that sends its body and leaves at once, while its request is
    handed to a worker: its connection is suspended meanwhile, and on resume
    libmicrohttpd may close it without calling the access handler again. The
    server's count of suspended requests must still drop, or the stop waits
    for it forever."""

    def test_stop_is_clean_after_clients_left_mid_request(self):
        gw = Gateway({"log_level": "warn"}, tokens=TOKENS)
        try:
            gw.wait_for(lambda: gw.call("GET", "/readyz")[0] in (200, 503), what="up")
            for i in range(3):
                s = connect(gw.port, f"127.0.0.{30 + i}")
                s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "
                          + TOKEN.encode() + b"\r\nContent-Length: 400\r\n"
                          b"Expect: 100-continue\r\nConnection: close\r\n\r\n")
                self.assertTrue(s.recv(4096).startswith(b"HTTP/1.1 100"))
                s.sendall(b" " * 400)
                s.close()  # at once, the answer unread
            time.sleep(0.5)
            self.assertEqual(gw.call("GET", "/healthz")[0], 200)
        finally:
            t0 = time.monotonic()
            rc = gw.stop()  # fails (did not exit within 30 s) if the count stuck
        self.assertEqual(rc, 0)
        self.assertLess(time.monotonic() - t0, 10)
