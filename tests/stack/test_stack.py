"""Acceptance suite for the compose stack, brought up from the built images
exactly as `make up` does (images/stack.sh up), in its own compose project on
a free loopback port, and torn down at the end (images/stack.sh down), which
must leave no container, network or volume behind.

Needs dockerd with runsc and the images (`make images`); fails otherwise.
"""
import base64
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
from urllib.parse import quote

import sgtest
import stack_lib

PROJECT = f"sgtest{os.getpid()}"
IMAGES = tuple(sgtest.image(n) for n in ("gateway", "executor", "python", "nodejs", "egress"))
STACK = os.path.join(sgtest.ROOT, "images", "stack.sh")
TOKEN = secrets.token_hex(24)
LIMITED_TOKEN = secrets.token_hex(24)
NEW_TOKEN = secrets.token_hex(24)

state = {}


def stack_env():
    return stack_lib.stack_env(PROJECT, state["port"], state["dir"], pool_python="2")


def write_tokens(tenants):
    path = os.path.join(state["dir"], "config", "tokens.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"tenants": tenants}, f)
    os.chmod(tmp, 0o640)
    os.chown(tmp, 0, 10001)
    os.replace(tmp, path)  # the config directory is mounted, so a rename is seen


def project_objects():
    """Containers (incl. sandboxes), networks and volumes of this project."""
    flt = quote(json.dumps({"label": [f"com.docker.compose.project={PROJECT}"]}))
    out = {}
    for kind, path in (("containers", f"/containers/json?all=1&filters={flt}"),
                       ("networks", f"/networks?filters={flt}"),
                       ("volumes", f"/volumes?filters={flt}")):
        status, body = sgtest.docker_api("GET", path)
        assert status == 200, body
        items = (body["Volumes"] or []) if kind == "volumes" else body
        out[kind] = [i.get("Name") or i.get("Id") for i in items]
    for lang in ("python", "nodejs"):
        out["containers"] += sgtest.containers_with_label(
            f"org.sandgate.executor={PROJECT}-stack-{lang}")
    return out


def setUpModule():
    sgtest.ensure_docker()
    for image in IMAGES:
        r = subprocess.run(["docker", "image", "inspect", image], capture_output=True)
        if r.returncode != 0:
            raise AssertionError(f"image {image} is missing: run 'make images'")
    state["dir"] = tempfile.mkdtemp(prefix="sandgate-stack-")
    state["port"] = sgtest.free_port()
    os.makedirs(os.path.join(state["dir"], "config"))
    write_tokens({
        "main": {"tokens": [TOKEN], "network": {"allow": ["allowed.example.invalid"]}},
        "limited": {"tokens": [LIMITED_TOKEN], "rate_limit": {"per_second": 1, "burst": 2}},
    })
    started = time.monotonic()
    r = subprocess.run([STACK, "up"], env=stack_env(), capture_output=True, text=True, timeout=400)
    if r.returncode != 0:
        subprocess.run([STACK, "down"], env=stack_env(), capture_output=True, timeout=300)
        raise AssertionError(f"stack.sh up failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}")
    state["up_s"] = time.monotonic() - started
    state["url"] = f"http://127.0.0.1:{state['port']}"
    status, net = sgtest.docker_api("GET", f"/networks/{PROJECT}-egress")
    state["egress_id"] = net["Id"][:12] if status == 200 else None


def iptables_rules():
    return subprocess.run(["iptables", "-w", "10", "-S"], capture_output=True, text=True,
                          check=True).stdout


def tearDownModule():
    r = subprocess.run([STACK, "down"], env=stack_env(), capture_output=True, text=True,
                       timeout=300)
    left = project_objects()
    shutil.rmtree(state["dir"], ignore_errors=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert left == {"containers": [], "networks": [], "volumes": []}, f"left behind: {left}"
    assert f"SG-EGRESS-{state['egress_id']}" not in iptables_rules(), "egress rules left behind"


def _closed(s):
    """The peer closed s (non-blocking): EOF or an error, not just no data."""
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def call(path, body, token=TOKEN, timeout=60, raw=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return sgtest.http("POST", state["url"] + path, body=raw if raw is not None else body,
                       headers=headers, timeout=timeout)


def run(code, language="python", arguments=None, token=TOKEN):
    body = {"code_b64": base64.b64encode(code.encode()).decode(), "language": language,
            "arguments": arguments or {}}
    return call("/run", body, token=token)


def run_native(code, language="python", limits=None):
    return call("/v1/run", {"code": code, "language": language, "limits": limits or {}})


class Stack(unittest.TestCase):
    def test_ragflow_request_response(self):
        status, _, res = run("def main(a, b):\n    print('adding')\n    return a + b\n",
                             arguments={"a": 1, "b": 2})
        self.assertEqual(status, 200, res)
        for key in ("status", "stdout", "stderr", "exit_code", "detail", "time_used_ms",
                    "memory_used_kb", "resource_limit_type", "unauthorized_access_type",
                    "runtime_error_type", "artifacts", "result"):
            self.assertIn(key, res)
        self.assertEqual(res["status"], "success")
        self.assertEqual(res["exit_code"], 0)
        self.assertEqual(res["result"], {"present": True, "value": 3, "type": "json"})
        self.assertEqual(res["stdout"], "adding\n")
        self.assertEqual(res["stderr"], "")

    def test_dict_result_and_exception(self):
        status, _, res = run("def main():\n    return {'k': [1, {'n': None}]}\n")
        self.assertEqual(res["result"]["value"], {"k": [1, {"n": None}]})
        status, _, res = run("def main():\n    raise RuntimeError('nope')\n")
        self.assertEqual(res["status"], "program_error")
        self.assertIn("RuntimeError: nope", res["stderr"])

    def test_pandas(self):
        status, _, res = run("import pandas as pd\n\ndef main():\n"
                             "    df = pd.DataFrame({'a': [1, 2, 3]})\n"
                             "    return {'total': int(df['a'].sum())}\n")
        self.assertEqual(res["status"], "success", res)
        self.assertEqual(res["result"]["value"], {"total": 6})

    def test_nodejs_main_args(self):
        status, _, res = run("function main(args) {\n  return {greeting: 'hi ' + args.name};\n}\n"
                             "module.exports = { main };\n", language="nodejs",
                             arguments={"name": "node"})
        self.assertEqual(res["status"], "success", res)
        self.assertEqual(res["result"]["value"], {"greeting": "hi node"})

    def test_infinite_loop_is_a_time_limit(self):
        status, _, res = run_native("def main():\n    while True:\n        pass\n",
                                    limits={"timeout_ms": 1500})
        self.assertEqual(status, 200, res)
        self.assertEqual(res["status"], "resource_limit_exceeded")
        self.assertEqual(res["resource_limit_type"], "time")
        self.assertEqual(res["exit_code"], -124)

    def test_memory_limit(self):
        # 600 MiB against the stack's default limit (SANDBOX_MAX_MEMORY=256m).
        status, _, res = run("def main():\n    x = bytearray(600 * 1024 * 1024)\n"
                             "    return len(x)\n")
        self.assertEqual(status, 200, res)
        self.assertEqual(res["status"], "resource_limit_exceeded", res)
        self.assertEqual(res["resource_limit_type"], "memory", res)
        self.assertEqual(res["exit_code"], -137, res)

    def test_dangerous_code_rejected_with_violations(self):
        cases = [("import os\n\ndef main():\n    return os.getcwd()\n", "python", 1),
                 ("import subprocess\n\ndef main():\n    return 1\n", "python", 1),
                 ("def main():\n    return eval('1')\n", "python", 2),
                 ("const cp = require('child_process');\nfunction main() { return 1; }\n",
                  "nodejs", 1)]
        for code, language, line in cases:
            status, _, res = run(code, language=language)
            self.assertEqual(status, 200, res)
            self.assertEqual(res["status"], "program_runner_error", code)
            self.assertEqual(res["exit_code"], -999)
            self.assertEqual(res["detail"], "Code is unsafe")
            self.assertTrue(res["violations"], code)
            v = res["violations"][0]
            for key in ("rule", "line", "column", "message"):
                self.assertIn(key, v)
            self.assertEqual(v["line"], line, code)
            self.assertIn(f"Line {line}:", res["stderr"])

    def test_bad_requests(self):
        status, _, res = call("/run", None, raw="{not json")
        self.assertEqual(status, 400)
        self.assertIn("error", res)
        status, _, _ = call("/run", {"code_b64": "%%%", "language": "python", "arguments": {}})
        self.assertEqual(status, 400)
        status, _, _ = call("/run", {"code_b64": "cGFzcw==", "language": "cobol", "arguments": {}})
        self.assertEqual(status, 400)
        status, _, _ = call("/run", {"code_b64": 5, "language": "python", "arguments": {}})
        self.assertEqual(status, 400)
        big = "A" * (9 * 1024 * 1024)
        status, _, _ = call("/run", {"code_b64": big, "language": "python", "arguments": {}})
        self.assertEqual(status, 413)

    def test_auth(self):
        body = {"code_b64": "cGFzcw==", "language": "python", "arguments": {}}
        self.assertEqual(call("/run", body, token=None)[0], 401)
        self.assertEqual(call("/run", body, token="x" * 32)[0], 401)

    def test_rate_limit(self):
        body = {"code": "def main():\n    return 1\n", "language": "python"}
        codes = [call("/v1/analyze", body, token=LIMITED_TOKEN)[0] for _ in range(6)]
        self.assertIn(429, codes, codes)
        self.assertEqual(codes[0], 200, codes)

    def test_networked_job_through_the_stacks_egress_proxy(self):
        """A networked job's sandbox reaches the stack's proxy, which refuses a
        host outside the job's list by name (no lookup is made) and tells the
        executor, through the shared volume, what it decided."""
        code = ("import urllib.request, urllib.error\ndef main():\n    try:\n"
                "        urllib.request.urlopen('http://denied.example.invalid/', timeout=10)\n"
                "    except urllib.error.HTTPError as e:\n        return e.code\n")
        st, _, body = call("/v1/run", {"code": code, "language": "python",
                                       "network": {"allow": ["allowed.example.invalid"]}},
                           timeout=120)
        self.assertEqual(st, 200, body)
        self.assertEqual((body["status"], body["result"]["value"]), ("success", 403), body)
        net = body["network"]
        self.assertEqual((net["allowed"], net["denied"]), ([], ["denied.example.invalid:80"]), net)
        # bytes per request are recorded for what the proxy served; the refused
        # request, if its log line came in time, shows as the proxy's 403
        for c in net["connections"]:
            self.assertEqual((c["host"], c["status"]), ("denied.example.invalid", 403), net)
        self.assertEqual(body["pool"]["flavour"], "egress")

    def test_egress_packet_filter_installed_and_gvisor_audited(self):
        """make up installs the egress network's host packet filter (its
        sandboxes reach the proxy and nothing else; tests/e2e/test_egress.py
        proves what it stops), and the audit line names the gVisor a job ran on."""
        nid = state["egress_id"]
        self.assertIsNotNone(nid)
        rules = iptables_rules().splitlines()
        self.assertIn(f"-A SANDGATE-EGRESS -i br-{nid} -j SG-EGRESS-{nid}", rules)
        self.assertIn(f"-A SG-EGRESS-{nid} -j DROP", rules)
        st, _, body = run_native("def main():\n    return 2\n")
        self.assertEqual(st, 200, body)
        info = sgtest.docker_api("GET", "/info")[1]["Runtimes"]["runsc"]
        version = subprocess.run([info["path"], "--version"], capture_output=True, text=True,
                                 check=True).stdout.split()[2]
        audit = os.path.join(state["dir"], "audit", "audit.log")
        deadline = time.monotonic() + 10
        while True:
            lines = [json.loads(l) for l in open(audit) if body["job_id"] in l]
            if lines or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(lines[0]["sandbox"]["runtime"], "runsc", lines)
        self.assertEqual(lines[0]["sandbox"]["runsc_version"], version, lines)

    def test_reload_on_sighup(self):
        body = {"code": "def main():\n    return 1\n", "language": "python"}
        self.assertEqual(call("/v1/analyze", body, token=NEW_TOKEN)[0], 401)
        write_tokens({"main": {"tokens": [TOKEN, NEW_TOKEN]},
                      "limited": {"tokens": [LIMITED_TOKEN],
                                  "rate_limit": {"per_second": 1, "burst": 2}}})
        # The documented reload: inside the container, so Docker's restart
        # policy stays on (`docker kill -s HUP` would turn it off).
        r = subprocess.run(["images/stack.sh", "reload"], capture_output=True, text=True,
                           cwd=sgtest.ROOT, env=stack_env())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("reloaded", r.stdout)
        deadline = time.monotonic() + 10
        while call("/v1/analyze", body, token=NEW_TOKEN)[0] != 200:
            self.assertLess(time.monotonic(), deadline, "new token not accepted after SIGHUP")
            time.sleep(0.2)
        self.assertEqual(call("/v1/analyze", body, token=TOKEN)[0], 200)

    def test_host_clients_behind_the_port_proxy_are_not_locked_out(self):
        """Every host client reaches the gateway through Docker's port proxy,
        with one address (the bridge's gateway): a local process holding
        that address's limit (128) of idle connections, and more, must not
        lock out a normal client on the host (before: 1 of 70 served)."""
        port, stop, held = state["port"], threading.Event(), []
        head = b"POST /v1/analyze HTTP/1.1\r\nHost: gw\r\nX-Slow: "

        def hold():  # at and past the limit, each closed connection replaced
            while not stop.is_set():
                for s in [s for s in held if s.fileno() < 0 or _closed(s)]:
                    held.remove(s)
                    s.close()
                while len(held) < 140 and not stop.is_set():
                    try:
                        s = socket.create_connection(("127.0.0.1", port), 2,
                                                     source_address=("127.0.0.2", 0))
                        s.sendall(head)
                        s.setblocking(False)
                        held.append(s)
                    except OSError:
                        break
                stop.wait(0.2)
            for s in held:
                s.close()

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        try:
            time.sleep(3)  # held past the limit (each connection waiting a second or more)
            body = {"code": "def main():\n    return 1\n", "language": "python"}
            served = 0
            for _ in range(40):
                t0 = time.monotonic()
                try:
                    st = call("/v1/analyze", body, timeout=2)[0]
                except OSError:
                    st = 0
                served += st == 200 and time.monotonic() - t0 <= 1.0
                time.sleep(0.1)
        finally:
            stop.set()
            holder.join(10)
        st, _, metrics = sgtest.http("GET", state["url"] + "/metrics")
        self.assertEqual(st, 200)
        self.assertGreaterEqual(served, 38, f"served {served}/40 within 1 s")
        m = re.search(r'^sandgate_connections_closed_total\{reason="evicted"\} (\d+)$', metrics,
                      re.M)
        self.assertTrue(m and int(m.group(1)) > 0, metrics[-2000:])

    def test_topology(self):
        """Executors only on an internal network, nothing privileged, only the
        gateway publishes a port, and only on loopback; the egress proxy
        (started as root to set up its state directory, Squid then runs as
        `proxy`) on the internal sandbox network and its own way out."""
        flt = quote(json.dumps({"label": [f"com.docker.compose.project={PROJECT}"]}))
        status, containers = sgtest.docker_api("GET", f"/containers/json?filters={flt}")
        self.assertEqual(status, 200)
        self.assertEqual(len(containers), 4, containers)
        for c in containers:
            _, info = sgtest.docker_api("GET", f"/containers/{c['Id']}/json")
            service = info["Config"]["Labels"]["com.docker.compose.service"]
            self.assertFalse(info["HostConfig"]["Privileged"], service)
            ports = [p for p in c["Ports"] if p.get("PublicPort")]
            nets = list(info["NetworkSettings"]["Networks"])
            if service == "egress":
                self.assertEqual(ports, [])
                self.assertEqual(info["HostConfig"]["CapDrop"], ["ALL"])
                internal = [sgtest.docker_api("GET", f"/networks/{n}")[1]["Internal"]
                            for n in nets]
                self.assertEqual(sorted(internal), [False, True], nets)
                continue
            self.assertNotEqual(info["Config"]["User"], "", service)
            if service == "gateway":
                self.assertEqual({p["IP"] for p in ports}, {"127.0.0.1"})
            else:
                self.assertEqual(ports, [], service)
                self.assertEqual(len(nets), 1, nets)
                _, net = sgtest.docker_api("GET", f"/networks/{nets[0]}")
                self.assertTrue(net["Internal"], nets[0])


if __name__ == "__main__":
    unittest.main()
