"""The egress machinery the networked end-to-end suites share (README,
"Network"): two internal Docker networks of the suite's own, an origin
server container (HTTP :8080, HTTPS :8443 with a throw-away certificate) on
the outer one, the egress proxy (images/egress) on both, optionally a
listening peer on the sandboxes' network, and the host packet filter
(images/egress-firewall.sh) for the sandboxes' network. Everything is named
after the suite and a random run id, labelled, and removed by
Stack.remove(), whatever failed in between. No traffic leaves this machine."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import sgtest

FIREWALL = os.path.join(sgtest.ROOT, "images", "egress-firewall.sh")

ORIGIN_CODE = r"""
import http.server, ssl, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("origin says hi " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
plain = http.server.ThreadingHTTPServer(("0.0.0.0", 8080), H)
tls = http.server.ThreadingHTTPServer(("0.0.0.0", 8443), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("/certs/cert.pem", "/certs/key.pem")
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=tls.serve_forever, daemon=True).start()
plain.serve_forever()
"""


class Names:
    """The suite's container, network and label names for one run."""

    def __init__(self, suite):
        run = uuid.uuid4().hex[:8]
        self.label_value = f"{suite}-{run}"
        self.label = f"org.sandgate.test={self.label_value}"
        self.sbx_net = f"sg-{suite}-sbx-{run}"
        self.out_net = f"sg-{suite}-out-{run}"
        self.origin = f"sg-{suite}-origin-{run}"
        self.proxy = f"sg-{suite}-proxy-{run}"
        self.peer = f"sg-{suite}-peer-{run}"


def docker(method, path, body=None):
    status, reply = sgtest.docker_api(method, path, body)
    assert status < 300, (method, path, status, reply)
    return reply


def create_container(names, name, image, network, extra_hc=None, **spec):
    hc = {"NetworkMode": network, "Runtime": "runc"}
    hc.update(extra_hc or {})
    body = {"Image": image, "Labels": {"org.sandgate.test": names.label_value},
            "HostConfig": hc}
    body.update(spec)
    docker("POST", f"/containers/create?name={name}", body)
    docker("POST", f"/containers/{name}/start")


def address(name, network):
    info = docker("GET", f"/containers/{name}/json")
    return info["NetworkSettings"]["Networks"][network]["IPAddress"]


def iptables_rules(cmd="iptables"):
    return subprocess.run([cmd, "-w", "10", "-S"], check=True, capture_output=True,
                          text=True).stdout


class Stack:
    """Networks, the origin, the proxy (and the peer when asked for), the
    host filter. Built by the constructor (which removes what it made when a
    step fails); removed by remove()."""

    def __init__(self, names, extra_hosts=(), peer=False):
        self.names = names
        self.peer = peer
        self.net_id = None
        self.state = tempfile.mkdtemp(prefix=f"{names.sbx_net}-")
        try:
            self.build(extra_hosts)
        except BaseException:
            self.remove(check=False)
            raise

    def build(self, extra_hosts):
        n = self.names
        os.chmod(self.state, 0o755)
        self.certs = os.path.join(self.state, "certs")
        os.mkdir(self.certs)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", f"/CN={n.origin}", "-keyout", f"{self.certs}/key.pem",
                        "-out", f"{self.certs}/cert.pem"], check=True, capture_output=True)
        os.chmod(f"{self.certs}/key.pem", 0o644)
        for net in (n.sbx_net, n.out_net):
            docker("POST", "/networks/create", {"Name": net, "Internal": True,
                                                "Labels": {"org.sandgate.test": n.label_value}})
        create_container(n, n.origin, sgtest.image("python"), n.out_net,
                         extra_hc={"Binds": [f"{self.certs}:/certs:ro"]},
                         Entrypoint=["python3", "-c", ORIGIN_CODE], User="65534:65534")
        self.origin_ip = address(n.origin, n.out_net)
        hosts = [h.format(origin_ip=self.origin_ip) for h in extra_hosts]
        create_container(n, n.proxy, sgtest.image("egress"), n.sbx_net,
                         extra_hc={"Binds": [f"{self.state}:/run/sandgate-egress"],
                                   "ExtraHosts": hosts})
        docker("POST", f"/networks/{n.out_net}/connect", {"Container": n.proxy})
        self.proxy = address(n.proxy, n.sbx_net) + ":3128"
        if self.peer:  # another container on the sandboxes' network, listening
            create_container(n, n.peer, sgtest.image("python"), n.sbx_net, User="65534:65534",
                             Entrypoint=["python3", "-m", "http.server", "8080"])
            self.peer_ip = address(n.peer, n.sbx_net)
        net = docker("GET", f"/networks/{n.sbx_net}")
        self.net_id = net["Id"][:12]
        self.gateway_ip = net["IPAM"]["Config"][0]["Gateway"]
        subprocess.run([FIREWALL, "install", n.sbx_net, self.proxy], check=True,
                       capture_output=True, text=True)
        self.wait_proxy()

    def wait_proxy(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            logs = subprocess.run(["docker", "logs", self.names.proxy], capture_output=True,
                                  text=True)
            if "Accepting HTTP Socket connections" in logs.stdout + logs.stderr:
                return
            time.sleep(0.2)
        raise AssertionError("the egress proxy did not start:\n" + logs.stderr[-2000:])

    def executor_args(self):
        """The executor flags for a networked pool of one on this stack."""
        return ("--egress-network", self.names.sbx_net, "--egress-proxy", self.proxy,
                "--egress-dir", self.state, "--egress-pool-size", "1",
                "--egress-guard-image", sgtest.image("egress"))

    def remove(self, check=True):
        n = self.names
        fw = subprocess.run([FIREWALL, "remove", n.sbx_net], capture_output=True, text=True)
        for name in (n.proxy, n.origin, n.peer):
            sgtest.docker_api("DELETE", f"/containers/{name}?force=1")
        for net in (n.sbx_net, n.out_net):
            sgtest.docker_api("DELETE", f"/networks/{net}")
        # the proxy wrote some files as its own user: remove them through it
        subprocess.run(["rm", "-rf", self.state], check=False)
        shutil.rmtree(self.state, ignore_errors=True)
        if check:
            assert fw.returncode == 0, fw.stderr
            if self.net_id:
                assert f"SG-EGRESS-{self.net_id}" not in iptables_rules(), "rules left behind"
            assert sgtest.containers_with_label(n.label) == [], "containers left behind"


class Listener:
    """A TCP listener on this host's address on the sandboxes' network that
    counts the connections it accepts."""

    def __init__(self, host):
        self.sock = socket.create_server((host, 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            self.accepted.append(peer)
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nreached")
            conn.close()

    def close(self):
        self.sock.close()
        self.thread.join(5)


def wait_net_idle(executor, timeout=60):
    """Until the executor's networked pool has a sandbox ready."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        _, _, h = executor.health()
        if h["egress"]["idle"] >= 1:
            return
        time.sleep(0.1)
    raise AssertionError(f"networked pool never ready: {h}")


def stop_all(stack, gateway, executors):
    """Stop the gateway and the executors (each may be None), then remove the
    stack whatever failed; assert all stopped cleanly and left nothing."""
    left, rcs = [], []
    try:
        if gateway:
            rcs.append(gateway.stop())
        for ex in executors:
            if ex:
                rcs.append(ex.stop())
                left += ex.containers()
    finally:
        stack.remove()
    assert all(rc == 0 for rc in rcs), rcs
    assert left == [], f"containers left behind: {left}"
