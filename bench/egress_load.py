"""Networked jobs against the real dockerd + runsc (bench/run-egress.sh).

Builds the e2e suite's egress stack (tests/lib/sgegress.py: two internal
networks, a test origin, the egress proxy; nothing leaves the machine) and
measures, in the same run:
  1. hello-world p50 through POST /v1/exec: an offline job and a networked job
     (one allow-list entry, no connection), alternated, each sent when its
     pool is full and quiet; target: networked within 5 ms of offline;
  2. the proxy's overhead per HTTPS request (new connection, TLS handshake,
     one GET) to the local origin: p50 through the proxy's CONNECT minus p50
     direct, from one plain container on both networks (so gVisor is not in
     the figure).
Prints the figures; fails only when it cannot measure."""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("SANDGATE_BUILD", "build/rel")
for sub in ("tests/lib", "tests/e2e", "tests/integration"):
    sys.path.insert(0, os.path.join(ROOT, sub))
import sgegress  # noqa: E402
import sgtest  # noqa: E402
import test_executor as tex  # noqa: E402

N = int(os.environ.get("EGRESS_BENCH_N", "20"))
REQS = int(os.environ.get("EGRESS_BENCH_REQUESTS", "40"))
NAMES = sgegress.Names("egress-bench")
CLIENT = NAMES.origin.replace("-origin-", "-client-")

CLIENT_CODE = r"""
import http.client, json, ssl, statistics, sys, time
origin, proxy, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = ssl._create_unverified_context()
def once(via):
    t = time.perf_counter()
    if via:
        host, port = proxy.split(":")
        c = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10)
        c.set_tunnel(origin, 8443)
    else:
        c = http.client.HTTPSConnection(origin, 8443, context=ctx, timeout=10)
    c.request("GET", "/bench")
    c.getresponse().read()
    c.close()
    return (time.perf_counter() - t) * 1000
for via in (False, True):
    once(via)
d, p = [], []
for _ in range(n):
    d.append(once(False))
    p.append(once(True))
print(json.dumps({"direct": statistics.median(d), "proxy": statistics.median(p)}))
"""


def wait_idle(ex, net):
    deadline = time.time() + 60
    while time.time() < deadline:
        _, _, h = ex.health()
        quiet = [h["pool"]] + ([h["egress"]] if net else [])
        # full (the networked pool's sandboxes warm: it waits for the ready
        # line), and no launch or removal still competing for the 2 cores
        if all(p["idle"] >= p["target"] and p["creating"] == 0
               and p.get("tearing_down", 0) == 0 for p in quiet):
            return
        time.sleep(0.05)
    raise SystemExit(f"pools never settled: {h}")


def job_latency(ex):
    code = "def main():\n    return 1\n"
    rt = {"processes": False, "network": False, "imports": None, "files": "sandbox",
          "read_paths": ["/usr/lib/python3", "/usr/lib/python3.11"], "native_code": False,
          "unpickle": False, "reflection": False}
    off, net = [], []
    for i in range(N):
        for networked in (False, True):
            wait_idle(ex, True)
            fields = {"runtime": dict(rt, network=networked)}
            if networked:
                fields["network"] = {"allow": [f"{NAMES.origin}:8080"]}
            t = time.perf_counter()
            body = ex.ok(code, **fields)
            ms = (time.perf_counter() - t) * 1000
            if body["status"] != "success":
                raise SystemExit(f"job failed: {body}")
            (net if networked else off).append(ms)
    return statistics.median(off), statistics.median(net)


def proxy_overhead(stack):
    sgegress.create_container(NAMES, CLIENT, tex.IMAGES["python"], NAMES.sbx_net,
                              Entrypoint=["sleep", "600"], User="65534:65534")
    sgegress.docker("POST", f"/networks/{NAMES.out_net}/connect", {"Container": CLIENT})
    ip = sgegress.address(CLIENT, NAMES.sbx_net)
    with open(os.path.join(stack.state, "allow", ip), "w") as f:
        json.dump({"job_id": "bench", "allow": [f"{NAMES.origin}:8443"]}, f)
    r = subprocess.run(["docker", "exec", CLIENT, "python3", "-c", CLIENT_CODE, NAMES.origin,
                        stack.proxy, str(REQS)], capture_output=True, text=True, timeout=300)
    os.unlink(os.path.join(stack.state, "allow", ip))
    if r.returncode != 0:
        raise SystemExit("client failed: " + r.stderr[-2000:])
    return json.loads(r.stdout)


def main():
    tex.require_engine_and_images()
    stack = sgegress.Stack(NAMES)
    ex = None
    try:
        ex = tex.Executor("python", pool_size=1, extra=stack.executor_args())
        off, net = job_latency(ex)
        print(f"hello-world p50 over {N} jobs each: offline {off:.1f} ms, networked {net:.1f} ms "
              f"(+{net - off:.1f} ms; target <= 5 ms)")
        o = proxy_overhead(stack)
        print(f"HTTPS request to the local origin, p50 over {REQS}: direct {o['direct']:.2f} ms, "
              f"through the proxy {o['proxy']:.2f} ms (overhead {o['proxy'] - o['direct']:.2f} ms)")
    finally:
        sgtest.docker_api("DELETE", f"/containers/{CLIENT}?force=1")
        if ex:
            ex.stop()
        stack.remove()


if __name__ == "__main__":
    main()
