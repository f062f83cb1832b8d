"""Network egress end to end (README, "Network"): the real gateway in front of
real executors whose networked pools run under the networked runtime on an
internal Docker network whose only other member is the egress proxy (Squid,
images/egress). Everything the jobs talk to is created here: an origin server
container (HTTP :8080, HTTPS :8443 with a throw-away certificate) on a second
internal network only the proxy joins, and a name in the proxy's hosts file
that resolves to a link-local address (never contacted: the proxy refuses it
before connecting). No traffic leaves this machine.

Proved: requests, urllib.request (Python) and https, fetch, axios (Node) reach
an allowed host; a host outside the list gets the proxy's 403 naming it;
a direct TCP connection to the origin's address fails; name lookups fail;
link-local / metadata names and addresses are refused even with "*"; the
next job in a networked sandbox's place reaches nothing of the previous job's
list; an offline job still sees only `lo`; a tenant asking beyond its list is
refused (403) before any sandbox; the result and the audit line list the
proxy's decisions; the executor's /metrics counts them by verdict. The
host packet filter (images/egress-firewall.sh, installed here for this
suite's network as `make up` does for the stack's) is in place, proved by
reading the rules: a job's own socket (requests without the proxy
settings, a raw socket) to a listener this test starts on the network's
gateway address (this host) or to a peer container on the network reaches
neither, while the proxy path works and is recorded. Every container,
network, rule and file made here is removed."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import sgegress
import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)

NAMES = sgegress.Names("egress")
ORIGIN = NAMES.origin
METADATA_NAME = "metadata.sandgate.test"
# RAGFlow's network cases call an external site; here a test-only name that
# the proxy's hosts file maps to the origin container stands in for it.
RAGFLOW_NAME = "api.ragflow.sandgate.test"
TOKEN = "egress-e2e-token-0123456789"
OFFLINE_TOKEN = "egress-e2e-offline-0123456789"
docker = sgegress.docker
iptables_rules = sgegress.iptables_rules


def make_stack():
    return sgegress.Stack(NAMES, peer=True,
                          extra_hosts=(f"{METADATA_NAME}:169.254.169.254",
                                       RAGFLOW_NAME + ":{origin_ip}"))


def probe_policy():
    """The default policy plus what the probes below need to look behind the
    HTTP clients: raw sockets and /proc/net (a real policy would not)."""
    with open(os.path.join(sgtest.ROOT, "policies", "default.json")) as f:
        doc = json.load(f)
    doc["name"] = "netprobe"
    py = doc["python"]
    py["imports"]["modules"].append("socket")
    py["capability_attributes"].remove("socket")
    py["runtime"]["read_paths"].append("/proc")
    return doc


class Egress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.stack = make_stack()
        cls.py = cls.js = cls.gw = None
        try:
            cls.py = tex.Executor("python", pool_size=1, extra=cls.stack.executor_args())
            cls.js = tex.Executor("nodejs", pool_size=1, extra=cls.stack.executor_args())
            ragflow = [f"{RAGFLOW_NAME}:8080", f"{RAGFLOW_NAME}:8443"]
            tokens = {"tenants": {"t": {"tokens": [TOKEN], "policies": ["default", "netprobe"],
                                        "network": {
                "allow": [f"{ORIGIN}:8080", f"{ORIGIN}:8443", "*", "*:8080"] + ragflow,
                "default": ragflow}},
                                  "off": {"tokens": [OFFLINE_TOKEN]}}}
            cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.py.url],
                                                          "nodejs": [cls.js.url]},
                                            "exec_grace_ms": 10000}, tokens=tokens,
                                           policies={"netprobe": probe_policy()})
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        sgegress.stop_all(cls.stack, cls.gw, (cls.py, cls.js))

    def wait_net_idle(self, ex):
        sgegress.wait_net_idle(ex)

    def run_job(self, code, allow=None, language="python", policy=None):
        ex = self.py if language == "python" else self.js
        if allow is not None:
            self.wait_net_idle(ex)
        body = {"language": language, "code": code}
        if policy:
            body["policy"] = policy
        if allow is not None:
            body["network"] = {"allow": allow}
        st, _, resp = self.gw.call("POST", "/v1/run", body,
                                   {"Authorization": f"Bearer {TOKEN}"}, timeout=120)
        return st, resp

    def ok(self, code, allow=None, language="python", policy=None):
        st, body = self.run_job(code, allow, language, policy)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "success", body)
        return body

    def test_python_requests_and_urllib_reach_an_allowed_host(self):
        code = f"""
import http.client, requests, urllib.request
def main():
    a = requests.get("http://{ORIGIN}:8080/r", timeout=10).text
    b = urllib.request.urlopen("http://{ORIGIN}:8080/u", timeout=10).read().decode()
    c = requests.get("https://{ORIGIN}:8443/t", timeout=10, verify=False).text
    conn = http.client.HTTPConnection("{ORIGIN}", 8080, timeout=10)  # no proxy settings at all
    conn.request("GET", "/c")
    d = conn.getresponse().read().decode()
    return [a, b, c, d]
"""
        body = self.ok(code, [f"{ORIGIN}:8080", f"{ORIGIN}:8443"])
        self.assertEqual(body["result"]["value"], ["origin says hi /r", "origin says hi /u",
                                                   "origin says hi /t", "origin says hi /c"])
        self.assertEqual(sorted(body["network"]["allowed"]),
                         [f"{ORIGIN}:8080", f"{ORIGIN}:8443"])
        self.assertEqual(body["network"]["denied"], [])
        self.assertEqual(body["pool"]["flavour"], "egress")
        self.gw.wait_for(lambda: any(x["request_id"] == body["job_id"]
                                     for x in self.gw.audit_lines()), what="audit line")
        line = [x for x in self.gw.audit_lines() if x["request_id"] == body["job_id"]][0]
        self.assertEqual(line["network"]["allow"], [f"{ORIGIN}:8080", f"{ORIGIN}:8443"])
        self.assertIn(f"{ORIGIN}:8080", line["network"]["decisions"]["allowed"])
        # every request's bytes, from the proxy's access log (one per request:
        # two proxied GETs, two CONNECT tunnels), in the audit line and the log
        conns = line["network"]["decisions"]["connections"]
        self.assertEqual(sorted((c["host"], c["port"]) for c in conns),
                         [(ORIGIN, 8080)] * 3 + [(ORIGIN, 8443)], conns)
        for c in conns:
            self.assertEqual(c["status"], 200, conns)
            self.assertGreater(c["bytes_in"], 0, conns)
            self.assertGreater(c["bytes_out"], len("origin says hi /r"), conns)
        self.assertEqual(body["network"]["connections"], conns)
        self.assertRegex(self.py.daemon.tail(20000),
                         f'egress_bytes.* host="{ORIGIN}" port=8443 status=200 '
                         'bytes_in=[1-9][0-9]* bytes_out=[1-9][0-9]*')

    def test_node_https_fetch_and_axios_reach_an_allowed_host(self):
        code = f"""
const https = require('https');
const axios = require('axios');
function get(url) {{
  return new Promise((ok, fail) => https.get(url, {{ rejectUnauthorized: false }}, (res) => {{
    let d = ''; res.on('data', (c) => {{ d += c; }}); res.on('end', () => ok(d));
  }}).on('error', fail));
}}
async function main() {{
  const a = await get('https://{ORIGIN}:8443/h');
  const b = await (await fetch('http://{ORIGIN}:8080/f')).text();
  const c = (await axios.get('http://{ORIGIN}:8080/a')).data;
  return [a, b, c];
}}
module.exports = {{ main }};
"""
        body = self.ok(code, [f"{ORIGIN}:8080", f"{ORIGIN}:8443"], language="nodejs")
        self.assertEqual(body["result"]["value"], ["origin says hi /h", "origin says hi /f",
                                                   "origin says hi /a"])

    def test_outside_the_list_direct_tcp_and_dns_all_fail(self):
        code = f"""
import requests, socket, urllib.request, urllib.error
def main():
    out = {{}}
    try:
        urllib.request.urlopen("http://{ORIGIN}:8443/", timeout=10)
    except urllib.error.HTTPError as e:
        out["http"] = [e.code, e.read().decode()]
    try:
        requests.get("https://other.example:443/", timeout=10)
    except requests.exceptions.ProxyError as e:
        out["https"] = "403" in str(e)
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("{self.stack.origin_ip}", 8080))
        out["direct"] = "connected"
    except OSError as e:
        out["direct"] = type(e).__name__
    for name in ("{ORIGIN}", "example.com"):
        try:
            socket.getaddrinfo(name, 80)
            out[name] = "resolved"
        except OSError as e:
            out[name] = "failed"
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        out["udp"] = "created"
    except OSError:
        out["udp"] = "refused"
    return out
"""
        body = self.ok(code, [f"{ORIGIN}:8080"], policy="netprobe")
        v = body["result"]["value"]
        self.assertEqual(v["http"][0], 403, v)
        self.assertIn(f"the connection to {ORIGIN} was refused", v["http"][1])
        self.assertIn("not in this job's network allow-list", v["http"][1])
        self.assertTrue(v["https"], v)
        self.assertNotEqual(v["direct"], "connected", v)
        self.assertEqual((v[ORIGIN], v["example.com"], v["udp"]), ("failed", "failed", "refused"))
        self.assertEqual(sorted(body["network"]["denied"]),
                         sorted([f"{ORIGIN}:8443", "other.example:443"]))

    def test_link_local_and_metadata_are_refused_even_with_a_star(self):
        code = f"""
import urllib.request, urllib.error
def main():
    out = []
    for url in ("http://{METADATA_NAME}/latest/meta-data/", "http://169.254.169.254/",
                "http://127.0.0.1:8080/"):
        try:
            urllib.request.urlopen(url, timeout=10)
            out.append("reached")
        except urllib.error.HTTPError as e:
            out.append(e.code)
    return out
"""
        body = self.ok(code, ["*", "*:8080"])
        self.assertEqual(body["result"]["value"], [403, 403, 403])
        self.assertEqual(sorted(body["network"]["denied"]),
                         ["127.0.0.1:8080", "169.254.169.254:80", f"{METADATA_NAME}:80"])
        # refused by the helper's address check, before Squid connects anywhere
        self.gw.wait_for(lambda: any(x["request_id"] == body["job_id"]
                                     for x in self.gw.audit_lines()), what="audit line")
        log = self.py.daemon.tail(20000)
        for host in (METADATA_NAME, "169.254.169.254", "127.0.0.1"):
            self.assertRegex(log, f'host="{host}" port=[0-9]+ verdict=denied '
                                  'reason="address is never reachable from a sandbox"')

    def test_the_next_job_reaches_nothing_of_the_previous_list(self):
        probe = f"""
import urllib.request, urllib.error
def main():
    try:
        return urllib.request.urlopen("http://{ORIGIN}:8080/", timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
"""
        self.assertEqual(self.ok(probe, [f"{ORIGIN}:8080"])["result"]["value"], 200)
        self.assertEqual(os.listdir(os.path.join(self.stack.state, "allow")), [])
        self.assertEqual(self.ok(probe, ["nothing.example"])["result"]["value"], 403)

    def test_an_offline_job_sees_only_lo_and_no_network_module(self):
        body = self.ok("def main():\n    return open('/proc/net/dev').read()\n",
                       policy="netprobe")
        ifaces = [l.split(":")[0].strip() for l in body["result"]["value"].splitlines()[2:]]
        self.assertEqual(ifaces, ["lo"])
        self.assertNotEqual(body.get("pool", {}).get("flavour"), "egress")
        st, body = self.run_job("import requests\ndef main():\n    return 1\n")
        self.assertEqual([v["rule"] for v in body["violations"]], ["network.disabled"])

    def ragflow_run(self, token, code):
        b64 = base64.b64encode(code.encode()).decode()
        st, _, body = self.gw.call("POST", "/run", {"code_b64": b64, "language": "nodejs"},
                                   {"Authorization": f"Bearer {token}"}, timeout=120)
        self.assertEqual(st, 200, body)
        return body

    def test_ragflow_network_cases_through_run(self):
        """RAGFlow's two network cases (an https.get and an axios.get to a
        site outside) through its own POST /run: a clean outcome when the
        tenant's default list allows the host, network.disabled when the
        tenant has no network; never a runner crash."""
        https_get = f"""
const https = require('https');
async function main() {{
  return new Promise((resolve, reject) => {{
    https.get('https://{RAGFLOW_NAME}:8443/ragflow', {{ rejectUnauthorized: false }}, (res) => {{
      let data = '';
      res.on('data', (chunk) => {{ data += chunk; }});
      res.on('end', () => resolve({{ status: res.statusCode, body: data }}));
    }}).on('error', reject);
  }});
}}
module.exports = {{ main }};
"""
        axios_get = f"""
const axios = require('axios');
async function main() {{
  const res = await axios.get('http://{RAGFLOW_NAME}:8080/ragflow');
  return {{ status: res.status, body: res.data }};
}}
module.exports = {{ main }};
"""
        for code in (https_get, axios_get):
            self.wait_net_idle(self.js)
            body = self.ragflow_run(TOKEN, code)
            self.assertEqual((body["status"], body["exit_code"]), ("success", 0), body)
            self.assertEqual(body["result"]["value"],
                             {"status": 200, "body": "origin says hi /ragflow"}, body)
            body = self.ragflow_run(OFFLINE_TOKEN, code)
            self.assertEqual(body["status"], "program_runner_error", body)
            self.assertIn("network.disabled", body["stderr"], body)
            self.assertIn("network is off", body["stderr"], body)

    def test_a_tenant_cannot_ask_beyond_its_list(self):
        st, body = self.run_job("def main():\n    return 1\n", ["evil.example:22"])
        self.assertEqual(st, 403, body)
        self.assertEqual(body["error"]["code"], "network_not_allowed")

    def test_the_host_filter_lets_a_job_reach_the_proxy_and_nothing_else(self):
        listener = sgegress.Listener(self.stack.gateway_ip)
        try:
            code = f"""
import requests, socket
def attempt(f):
    try:
        return f()
    except Exception as e:
        return "failed: " + type(e).__name__
def raw(host, port):  # not create_connection, which the runner tunnels through the proxy
    s = socket.socket()
    s.settimeout(3)
    s.connect((host, port))
    s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
    return s.recv(100).decode()
def direct(url):
    session = requests.Session()
    session.trust_env = False
    return session.get(url, timeout=3).text
def main():
    host = "http://{self.stack.gateway_ip}:{listener.port}/"
    return {{"requests": attempt(lambda: direct(host)),
             "socket": attempt(lambda: raw("{self.stack.gateway_ip}", {listener.port})),
             "peer": attempt(lambda: raw("{self.stack.peer_ip}", 8080)),
             "proxy": requests.get("http://{ORIGIN}:8080/p", timeout=10).text}}
"""
            body = self.ok(code, [f"{ORIGIN}:8080"], policy="netprobe")
        finally:
            listener.close()
        v = body["result"]["value"]
        self.assertEqual(listener.accepted, [], v)
        for key in ("requests", "socket", "peer"):
            self.assertTrue(v[key].startswith("failed: "), v)
        self.assertEqual(v["proxy"], "origin says hi /p")
        self.assertEqual(body["network"]["allowed"], [f"{ORIGIN}:8080"])
        self.assertEqual([(c["host"], c["port"]) for c in body["network"]["connections"]],
                         [(ORIGIN, 8080)])
        # the rules, read back: INPUT and DOCKER-USER jump to the chain first,
        # the network's bridge goes to its own chain, which ends in a drop
        rules = iptables_rules().splitlines()
        chain = f"SG-EGRESS-{self.stack.net_id}"
        self.assertIn("-A INPUT -j SANDGATE-EGRESS", rules)
        self.assertIn("-A DOCKER-USER -j SANDGATE-EGRESS", rules)
        self.assertIn(f"-A SANDGATE-EGRESS -i br-{self.stack.net_id} -j {chain}", rules)
        pip, pport = self.stack.proxy.split(":")
        mine = [r for r in rules if r.startswith(f"-A {chain} ")]
        self.assertEqual(mine, [
            f"-A {chain} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN",
            f"-A {chain} -d {pip}/32 -p tcp -m tcp --dport {pport} -m conntrack --ctstate NEW "
            "-j RETURN",
            f"-A {chain} -p tcp -j REJECT --reject-with tcp-reset",
            f"-A {chain} -j DROP"])
        self.assertIn(f"-A {chain} -j DROP", iptables_rules("ip6tables").splitlines())

    def test_health_metrics_and_audit_name_the_gvisor(self):
        info = docker("GET", "/info")["Runtimes"]
        out = subprocess.run([info["runsc"]["path"], "--version"], capture_output=True,
                             text=True, check=True).stdout
        version = out.split()[2]
        platform = [a.split("=", 1)[1] for a in info["runsc"].get("runtimeArgs", [])
                    if a.startswith("--platform=")] or ["default"]
        facts = {"runtime": "runsc", "runsc_version": version, "platform": platform[0]}
        _, _, h = self.py.health()
        self.assertEqual(h["sandbox"], facts)
        self.assertNotIn("warnings", h)
        _, _, text = sgtest.http("GET", self.py.url + "/metrics")
        self.assertIn(f'sandgate_executor_runsc_info{{runtime="runsc",version="{version}",'
                      f'platform="{platform[0]}",accepted_old="false"}} 1', text)
        body = self.ok("def main():\n    return 1\n")
        self.gw.wait_for(lambda: any(x["request_id"] == body["job_id"]
                                     for x in self.gw.audit_lines()), what="audit line")
        line = [x for x in self.gw.audit_lines() if x["request_id"] == body["job_id"]][0]
        self.assertEqual(line["sandbox"], facts)

    def test_zz_metrics_count_decisions_by_verdict(self):
        _, _, text = sgtest.http("GET", self.py.url + "/metrics")
        counts = {l.split('"')[1]: int(l.split()[-1]) for l in text.splitlines()
                  if l.startswith("sandgate_executor_egress_decisions_total{")}
        self.assertGreater(counts["allowed"], 0, text)
        self.assertGreater(counts["denied"], 0, text)
        _, _, text = self.gw.call("GET", "/metrics")
        gw = {l.split('"')[1]: int(l.split()[-1]) for l in text.splitlines()
              if l.startswith("sandgate_egress_decisions_total{")}
        self.assertGreater(gw["allowed"], 0, text)
        self.assertGreater(gw["denied"], 0, text)


if __name__ == "__main__":
    unittest.main()


class AcceptedOldRunsc(unittest.TestCase):
    """An operator who accepts an old runsc (--runsc-accept-old) gets an
    executor that serves, and a warning in every /healthz answer and the
    info gauge (a fake runsc script stands in for the old binary)."""

    def test_the_warning_is_in_every_health_answer(self):
        tex.require_engine_and_images()
        d = tempfile.mkdtemp(prefix="sg-oldrunsc-")
        fake = os.path.join(d, "runsc")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho "runsc version 0.0~20221219.0"\n')
        os.chmod(fake, 0o755)
        ex = tex.Executor("python", pool_size=1,
                          extra=("--runsc-path", fake, "--runsc-accept-old", "true"))
        try:
            for _ in range(2):
                _, _, h = ex.health()
                self.assertEqual(h["sandbox"]["runsc_version"], "0.0~20221219.0", h)
                self.assertEqual(len(h["warnings"]), 1, h)
                self.assertIn("older than the minimum 20240729", h["warnings"][0])
            _, _, text = sgtest.http("GET", ex.url + "/metrics")
            self.assertIn('version="0.0~20221219.0"', text)
            self.assertIn('accepted_old="true"} 1', text)
        finally:
            rc = ex.stop()
            shutil.rmtree(d, ignore_errors=True)
        self.assertEqual(rc, 0)
        self.assertEqual(ex.containers(), [])
