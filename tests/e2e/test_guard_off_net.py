"""Networked jobs with the in-process layer switched OFF, end to end on
dockerd + runsc-net (README, "Network" and "Who keeps each run-time
promise"): the suite's own internal networks, egress proxy, origin and peer
containers and host packet filter (tests/lib/sgegress.py), and one executor
per language with its test-only --test-guard-off and a networked pool. What
holds here rests on what the job cannot reach:

- the host packet filter: the job's own socket to a listener this test
  starts on the network's gateway address (this host) or to the peer
  container reaches neither; the proxy path works and is recorded;
- the executor's resolver guard and the sandbox's DNS configuration:
  Docker's embedded resolver (127.0.0.11) lives in the sandbox's own network
  namespace, where no host filter sees a query. The executor refuses it
  there (iptables, run once per sandbox from --egress-guard-image in that
  namespace), so a TCP query (UDP sockets are refused by the kernel filter)
  is refused, for a name under a domain this test invents and for the
  proxy's own name alike; and the sandbox's upstream is 127.0.0.1 inside
  that namespace, where nothing listens and the job cannot (no UDP socket,
  no listen(), port 53 privileged), so a resolver the test runs on this
  host's loopback sees no query. No guard container is left behind;
- the kernel filter: a networked job's refused sockets are EPERM, so a kill
  is a new process, reported as type `process`.

No traffic leaves this machine: the only names queried are this test's."""
import select
import socket
import threading
import unittest
import uuid

import sgegress
import sgguardoff
import sgtest
from sgguardoff import KILLED, js

NAMES = sgegress.Names("gonet")
STACK = None
INVENTED = f"x{uuid.uuid4().hex[:8]}.sandgate-test.invalid"


def setUpModule():
    global STACK
    sgguardoff.tex.require_engine_and_images()
    STACK = sgegress.Stack(NAMES, peer=True)


def tearDownModule():
    if STACK:
        STACK.remove()


class LoopbackResolver:
    """A DNS listener on this host's 127.0.0.1:53 (UDP and TCP) that records
    the names asked and answers REFUSED: where a resolver forwarding from the
    host's namespace would send a query. It must be free: a busy port fails
    the test, never skips it."""

    def __init__(self):
        self.names = []
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tcp = socket.socket()
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.udp.bind(("127.0.0.1", 53))
            self.tcp.bind(("127.0.0.1", 53))
        except OSError as e:
            self.udp.close()
            self.tcp.close()
            raise AssertionError(f"127.0.0.1:53 must be free for this test: {e}") from e
        self.tcp.listen(8)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @staticmethod
    def qname(msg):
        i, parts = 12, []
        while i < len(msg) and msg[i] and len(parts) < 64:
            parts.append(msg[i + 1:i + 1 + msg[i]].decode("ascii", "replace"))
            i += 1 + msg[i]
        return ".".join(parts).lower()

    def serve(self):
        while not self.stop.is_set():
            ready, _, _ = select.select([self.udp, self.tcp], [], [], 0.2)
            if self.udp in ready:
                msg, peer = self.udp.recvfrom(512)
                self.names.append(self.qname(msg))
                self.udp.sendto(msg[:2] + b"\x81\x85" + msg[4:], peer)
            if self.tcp in ready:
                conn, _ = self.tcp.accept()
                with conn:
                    conn.settimeout(2)
                    try:
                        self.names.append(self.qname(conn.recv(514)[2:]))
                    except OSError:
                        pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        self.udp.close()
        self.tcp.close()


PY_DNS = r"""
import socket, struct
def query(name):
    q = struct.pack(">HHHHHH", 0x5347, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0\0\1\0\1"
    s = socket.socket()
    s.settimeout(6)
    try:
        s.connect(("127.0.0.11", 53))
        s.sendall(struct.pack(">H", len(q)) + q)
        r = s.recv(2)
        r = s.recv(struct.unpack(">H", r)[0]) if len(r) == 2 else b""
    except OSError as e:
        return type(e).__name__
    finally:
        s.close()
    if len(r) < 12:
        return "no answer"
    if r[3] & 0xF or not struct.unpack(">H", r[6:8])[0]:
        return f"rcode {r[3] & 0xF}"
    return socket.inet_ntoa(r[-4:])
def attempt(f):
    try:
        f()
        return "done"
    except OSError as e:
        return e.__class__.__name__ + " " + str(e.errno)
def main(invented, proxy):
    lst = socket.socket()
    return {"invented": query(invented), "proxy": query(proxy),
            "resolv": open("/etc/resolv.conf").read(),
            "udp": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)),
            "bind53": attempt(lambda: lst.bind(("127.0.0.1", 53))),
            "listen": attempt(lambda: (lst.bind(("127.0.0.1", 0)), lst.listen(1)))}
"""

JS_DNS = r"""
const net = require('net');
function query(name) {
  const labels = Buffer.concat(name.split('.').map((p) => Buffer.concat([Buffer.from([p.length]),
    Buffer.from(p)])));
  const q = Buffer.concat([Buffer.from([0x53, 0x47, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), labels,
    Buffer.from([0, 0, 1, 0, 1])]);
  const len = Buffer.from([q.length >> 8, q.length & 255]);
  return new Promise((resolve) => {
    const s = net.connect(53, '127.0.0.11');
    let got = Buffer.alloc(0);
    const done = (v) => { s.destroy(); resolve(v); };
    s.setTimeout(6000, () => done('timeout'));
    s.on('error', (e) => done(e.code));
    s.on('connect', () => s.write(Buffer.concat([len, q])));
    s.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length < 2 || got.length < 2 + got.readUInt16BE(0)) return;
      const r = got.subarray(2);
      if ((r[3] & 15) || !r.readUInt16BE(6)) return done(`rcode ${r[3] & 15}`);
      done(Array.from(r.subarray(r.length - 4)).join('.'));
    });
    s.on('end', () => done('no answer'));
  });
}
async function main(args) {
  const out = { invented: await query(args.invented), proxy: await query(args.proxy) };
  out.udp = await new Promise((resolve) => {
    try {
      const u = require('dgram').createSocket('udp4');
      u.on('error', (e) => resolve(e.code));
      u.send('x', 53, '127.0.0.11', (e) => resolve(e ? e.code : 'sent'));
    } catch (e) { resolve(e.code); }
  });
  out.listen = await new Promise((resolve) => {
    const srv = net.createServer();
    srv.on('error', (e) => resolve(e.code));
    srv.listen(0, '127.0.0.1', () => { srv.close(); resolve('listening'); });
  });
  return out;
}
module.exports = { main };
"""


class NetGuardOff(sgguardoff.GuardOff):
    """The networked half of a guard-off suite: the executor also gets the
    stack's networked pool."""

    @classmethod
    def setUpClass(cls):
        cls.EXTRA = STACK.executor_args()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        assert sgtest.containers_with_label(
            f"org.sandgate.egress-guard={cls.ex.instance}") == [], "guard containers left"

    def net_job(self, code, allow=(), runtime=None, **fields):
        sgegress.wait_net_idle(self.ex)
        rt = dict(runtime or {}, network=True)
        return self.job(code, runtime=rt, network={"allow": list(allow) or ["nothing.invalid"]},
                        **fields)

    def sandbox_dns(self):
        """The DNS settings of this executor's networked sandboxes, read
        from the engine (the job cannot change them)."""
        out = []
        for cid in self.ex.containers():
            status, info = sgtest.docker_api("GET", f"/containers/{cid}/json")
            if status == 404:  # the job's sandbox, being removed
                continue
            self.assertEqual(status, 200, info)
            if info["HostConfig"]["NetworkMode"] == NAMES.sbx_net:
                out.append(info["HostConfig"]["Dns"])
        return out

    def check_resolver(self, got, resolver, refused):
        sgegress.wait_net_idle(self.ex)  # the next sandbox, its guard run and gone
        dns = self.sandbox_dns()
        self.assertTrue(dns, "no networked sandbox to inspect")
        self.assertEqual({tuple(d) for d in dns}, {("127.0.0.1",)}, dns)
        # the resolver refuses the job: no answer, not even the network's
        # own names; and no query reached this host's loopback
        self.assertEqual((got["invented"], got["proxy"]), (refused, refused), got)
        self.assertNotIn(INVENTED, resolver.names, resolver.names)
        self.assertEqual(self.guards(), [], "guard containers left")

    def guards(self):
        return sgtest.containers_with_label(f"org.sandgate.egress-guard={self.ex.instance}")

    def check_no_effect(self, body):
        self.assertEqual(body["status"], "success", body)
        return body["result"]["value"]


class PythonNetGuardOff(NetGuardOff, unittest.TestCase):
    LANGUAGE = "python"
    TENANT = "t.guardoff.net"

    def test_own_sockets_reach_only_the_proxy(self):
        listener = sgegress.Listener(STACK.gateway_ip)
        try:
            code = f"""
import socket, urllib.request
def raw(host, port):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
        return s.recv(100).decode()
    except OSError as e:
        return "failed: " + type(e).__name__
    finally:
        s.close()
def main():
    return {{"host": raw("{STACK.gateway_ip}", {listener.port}),
             "peer": raw("{STACK.peer_ip}", 8080),
             "proxy": urllib.request.urlopen("http://{NAMES.origin}:8080/g", timeout=10).read()
                      .decode()}}
"""
            body = self.net_job(code, allow=[f"{NAMES.origin}:8080"])
        finally:
            listener.close()
        v = self.check_no_effect(body)
        self.assertEqual(listener.accepted, [], v)
        self.assertTrue(v["host"].startswith("failed: ") and v["peer"].startswith("failed: "), v)
        self.assertEqual(v["proxy"], "origin says hi /g")
        self.assertEqual([(c["host"], c["port"]) for c in body["network"]["connections"]],
                         [(NAMES.origin, 8080)])

    def test_the_embedded_resolver_forwards_nothing(self):
        resolver = LoopbackResolver()
        try:
            body = self.net_job(PY_DNS, arguments={"invented": INVENTED,
                                                   "proxy": NAMES.proxy})
        finally:
            resolver.close()
        got = self.check_no_effect(body)
        self.check_resolver(got, resolver, "ConnectionRefusedError")
        self.assertIn("nameserver 127.0.0.11", got["resolv"])
        # nothing in the sandbox could serve a forwarded query
        self.assertEqual(got["udp"], "PermissionError 1", got)
        self.assertEqual(got["bind53"], "PermissionError 13", got)
        self.assertEqual(got["listen"], "PermissionError 1", got)

    def test_a_kill_is_a_process(self):
        body = self.net_job("import os\ndef main():\n    try:\n        os.fork()\n"
                            "    except OSError:\n        return 'caught'\n    print('EFFECT')\n")
        self.assertEqual((body["status"], body["unauthorized_access_type"], body["exit_code"]),
                         ("unauthorized_access", "process", -13), body)
        self.assertIn(KILLED, body["detail"])
        self.assertNotIn("EFFECT", body["stdout"])


class NodeNetGuardOff(NetGuardOff, unittest.TestCase):
    LANGUAGE = "nodejs"
    TENANT = "t.guardoff.net.node"

    def test_the_embedded_resolver_forwards_nothing(self):
        resolver = LoopbackResolver()
        try:
            body = self.net_job(JS_DNS, arguments={"invented": INVENTED, "proxy": NAMES.proxy})
        finally:
            resolver.close()
        got = self.check_no_effect(body)
        self.check_resolver(got, resolver, "ECONNREFUSED")
        self.assertEqual((got["udp"], got["listen"]), ("EPERM", "EPERM"), got)

    def test_a_kill_is_a_process(self):
        body = self.net_job(js(
            "try { require('child_process').execFileSync('/usr/bin/id'); } catch (e) { }\n"
            "console.log('EFFECT');"))
        self.assertEqual((body["status"], body["unauthorized_access_type"], body["exit_code"]),
                         ("unauthorized_access", "process", -13), body)
        self.assertIn(KILLED, body["detail"])
        self.assertNotIn("EFFECT", body["stdout"])


if __name__ == "__main__":
    unittest.main()
