"""Fair connections, over raw loopback sockets from many source addresses
(127.0.0.0/8): one client holding connections at its limit and five more
addresses reconnecting with slow (slowloris) heads must not lock out a normal
client, whether it has an address of its own or shares the holder's (as every
host client shares the Docker port proxy's address in the stack). The normal
client must get at least 95 % of its requests answered within a second, and
the gateway's metric must show what it closed and why."""
import json
import re
import resource
import selectors
import shutil
import subprocess
import threading
import time
import unittest

import sgtest
from gateway_fakes import Gateway
from test_gateway_frontdoor import FrontDoorCase, connect, exchange, parse, post, read_all

ANALYZE = json.dumps({"language": "python", "code": "def main():\n    return 1\n"}).encode()
SLOW_HEAD = b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nX-Slow: "
TICK_S = 0.05
NORMAL_REQUESTS = 60
NORMAL_PACE_S = 0.12
SERVED_WITHIN_S = 1.0


class Attack(threading.Thread):
    """Every attacking connection in one thread, on an epoll selector.

    groups: (source address, connections to keep, new connections per tick,
    trickle) - a holder opens its count at once and replaces each connection
    the gateway closes; a slow reconnector opens a few per tick up to its
    count (more than its limit, so it keeps knocking) and trickles one byte
    of its never-ending head every second."""

    def __init__(self, port, groups):
        super().__init__(daemon=True)
        self.port, self.groups = port, groups
        self.sel = selectors.DefaultSelector()
        self.open = {g[0]: set() for g in groups}
        self.closed = 0
        self.stop = threading.Event()

    def dial(self, src):
        try:
            s = connect(self.port, src, 1)
            s.setblocking(False)
            s.send(SLOW_HEAD)
        except OSError:
            return
        self.open[src].add(s)
        self.sel.register(s, selectors.EVENT_READ, src)

    def reap(self):
        for key, _ in self.sel.select(0):
            s, src = key.fileobj, key.data
            try:
                if s.recv(4096):
                    continue  # an answer: the head was refused; it closes next
            except BlockingIOError:
                continue
            except OSError:
                pass
            self.sel.unregister(s)
            s.close()
            self.open[src].discard(s)
            self.closed += 1

    def fill(self, first):
        for src, count, per_tick, _ in self.groups:
            want = count - len(self.open[src])
            for _ in range(want if first else min(want, per_tick)):
                self.dial(src)

    def trickle(self):
        for src, _, _, trickle in self.groups:
            for s in list(self.open[src]) if trickle else ():
                try:
                    s.send(b"a")
                except OSError:
                    pass

    def run(self):
        self.fill(True)
        last = time.monotonic()
        while not self.stop.is_set():
            self.reap()
            self.fill(False)
            if time.monotonic() - last >= 1.0:
                self.trickle()
                last = time.monotonic()
            self.stop.wait(TICK_S)
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()

    def held(self):
        return sum(len(v) for v in self.open.values())


class FairnessCase(FrontDoorCase):
    """A gateway with a fake executor, no tokens (FrontDoorCase)."""
    attack = None

    def tearDown(self):
        if self.attack:
            self.attack.stop.set()
            self.attack.join(10)
        super().tearDown()

    def closed_by_reason(self):
        """The counters, read once the attack has stopped (they persist)."""
        _, _, metrics = self.gw.call("GET", "/metrics")
        return {m.group(1): int(m.group(2)) for m in re.finditer(
            r'^sandgate_connections_closed_total\{reason="(\w+)"\} (\d+)$', metrics, re.M)}

    def run_attack(self, groups, normal_src, ramp_s=2.5):
        self.attack = Attack(self.port, groups)
        self.attack.start()
        time.sleep(ramp_s)  # the holder is at its limit, the reconnectors knocking
        held_at_start = self.attack.held()
        served, slow = 0, []
        for _ in range(NORMAL_REQUESTS):
            t0 = time.monotonic()
            try:
                st, _, _, dt = exchange(self.port, post(b"/v1/analyze", ANALYZE), normal_src,
                                        SERVED_WITHIN_S + 1)
            except OSError:
                st, dt = 0, time.monotonic() - t0
            if st == 200 and dt <= SERVED_WITHIN_S:
                served += 1
            else:
                slow.append((st, round(dt, 3)))
            time.sleep(max(0.0, NORMAL_PACE_S - (time.monotonic() - t0)))
        self.attack.stop.set()
        self.attack.join(10)
        return served, slow, held_at_start

    def assert_fair(self, served, slow, held, reasons):
        self.assertGreaterEqual(served, 0.95 * NORMAL_REQUESTS,
                                f"served {served}/{NORMAL_REQUESTS} within {SERVED_WITHIN_S}s; "
                                f"the others {slow[:10]}; attackers held {held}; "
                                f"closed {reasons}")


class TestOwnAddress(FairnessCase):
    # Small limits so that the attackers fill the whole server: a holder at
    # its limit plus five reconnectors knocking past theirs is 600 > 300.
    config = {"max_connections": 300, "max_connections_per_ip": 100}

    def test_holder_and_slow_reconnectors_do_not_lock_out_another_address(self):
        groups = [("127.0.0.2", 100, 100, False)]
        groups += [(f"127.0.0.{3 + i}", 120, 8, True) for i in range(5)]
        served, slow, held = self.run_attack(groups, "127.0.0.20")
        reasons = self.closed_by_reason()
        self.assert_fair(served, slow, held, reasons)
        self.assertGreaterEqual(held, 250, "the attack did not fill the server")
        # what was closed to make room is in the metric
        self.assertGreater(reasons.get("evicted", 0), 0, reasons)


class TestSharedAddress(FairnessCase):
    # The defaults: in the stack every host client arrives through Docker's
    # port proxy with one address, so the normal client shares the holder's.
    config = {}

    def test_holder_on_the_same_address_does_not_lock_out_a_normal_client(self):
        per_ip = 128  # the default max_connections_per_ip
        groups = [("127.0.0.2", per_ip, per_ip, False)]
        groups += [(f"127.0.0.{3 + i}", per_ip + 20, 8, True) for i in range(5)]
        served, slow, held = self.run_attack(groups, "127.0.0.2")
        reasons = self.closed_by_reason()
        self.assert_fair(served, slow, held, reasons)
        self.assertGreaterEqual(held, 700, "the attack did not reach its limits")
        self.assertGreater(reasons.get("evicted", 0), 0, reasons)


class TestLimitsAtStart(unittest.TestCase):
    def start_with(self, config, nofile=None):
        """(exit status, output) of a gateway started with config, its
        descriptor limit lowered to nofile (soft and hard) when given."""
        gw = Gateway(dict(config, executors={"python": ["http://127.0.0.1:9"],
                                             "nodejs": ["http://127.0.0.1:9"]}), start=False)
        try:
            limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) \
                if nofile else None
            r = subprocess.run([sgtest.binary("sandgate"), "-c", gw.config_path], text=True,
                               capture_output=True, timeout=20, preexec_fn=limit)
            return r.returncode, r.stdout + r.stderr
        finally:
            shutil.rmtree(gw.dir, ignore_errors=True)

    def test_connections_the_descriptor_limit_cannot_hold_refuse_to_start(self):
        code, out = self.start_with({"max_connections": 4000}, nofile=1024)
        self.assertNotEqual(code, 0, out)
        self.assertIn("max_connections 4000 needs 4320 file descriptors, the limit (ulimit -n) "
                      "allows 1024", out)

    def test_hostile_connection_settings_are_refused(self):
        for config, words in (({"max_connections": 32769}, "max_connections"),
                              ({"max_connections": 10, "max_connections_per_ip": 11},
                               "max_connections_per_ip (11) exceeds max_connections (10)"),
                              ({"header_timeout_s": 0}, "header_timeout_s")):
            code, out = self.start_with(config)
            self.assertNotEqual(code, 0, (config, out))
            self.assertIn(words, out, config)


if __name__ == "__main__":
    unittest.main()


def slow_body(port, src, token, length=100):
    """A tenant's request whose head the gateway accepted (its 100 Continue
    is read), its body still to come; or the answer when the head was refused."""
    s = connect(port, src)
    s.sendall(b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer " + token +
              b"\r\nContent-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
              % length)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    return s, got


class SlowBodiesPerTenant(unittest.TestCase):
    """A tenant's requests whose heads were accepted and whose bodies are
    still arriving count against max_connections_per_tenant from every
    address (the per-address limit sees one each); past it the next one is
    503 server_busy on its head, other tenants are served, and the tenant is
    served again once one of its bodies is done."""

    TOKENS = {"tenants": {"slow": {"tokens": ["slow-token-0123456789abcdef"]},
                          "other": {"tokens": ["other-token-0123456789abcdef"]}}}

    def setUp(self):
        self.gw = Gateway({"max_connections_per_tenant": 3, "log_level": "warn"},
                          tokens=self.TOKENS)
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[0] in (200, 503), what="up")
        self.addCleanup(self.gw.stop)

    def test_a_tenant_s_slow_bodies_are_bounded_from_any_address(self):
        slow, other = b"slow-token-0123456789abcdef", b"other-token-0123456789abcdef"
        held = []
        for i in range(3):
            s, got = slow_body(self.gw.port, f"127.0.0.{10 + i}", slow)
            self.assertTrue(got.startswith(b"HTTP/1.1 100"), got)
            held.append(s)
        # the fourth is refused on its head (its small body read and dropped
        # first, so that a client which sends it all sees the answer)
        s, got = slow_body(self.gw.port, "127.0.0.20", slow)
        if got.startswith(b"HTTP/1.1 100"):
            s.sendall(b" " * 100)
            got = read_all(s)
        s.close()
        st, hdrs, body = parse(got)
        self.assertEqual((st, json.loads(body)["error"]["code"]), (503, "server_busy"), got)
        self.assertEqual(hdrs.get("retry-after"), "1")
        auth = b"Authorization: Bearer " + other + b"\r\n"
        st, _, raw, _ = exchange(self.gw.port, post(b"/v1/analyze", ANALYZE, auth), "127.0.0.21")
        self.assertEqual(st, 200, raw)  # another tenant is served
        held[0].sendall(b" " * 100)  # one body is done: answered, no longer arriving
        self.assertEqual(parse(read_all(held[0]))[0], 400)  # not JSON: answered
        held[0].close()
        auth = b"Authorization: Bearer " + slow + b"\r\n"
        self.gw.wait_for(lambda: exchange(self.gw.port, post(b"/v1/analyze", ANALYZE, auth),
                                          "127.0.0.20")[0] == 200, what="the tenant served again")
        _, _, text = self.gw.call("GET", "/metrics")
        m = re.search(r"^sandgate_requests_refused_per_tenant_total (\d+)$", text, re.M)
        self.assertTrue(m and int(m.group(1)) >= 1, "the refusal is counted")
        for s in held[1:]:
            s.close()
