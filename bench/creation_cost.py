#!/usr/bin/env python3
"""creation_cost.py - one warm sandbox's creation taken apart (docs/executor.md,
"What a sandbox costs"). Drives the Engine API as the executor does (the same
create body: bench/creation_cost.py builds it like executors/sandbox.c) and
times each part, sequentially, N times:

  create   POST /containers/create          (dockerd: the container, its layer)
  attach   the hijacked attach stream       (dockerd)
  start    POST /containers/{id}/start      (containerd, its shim, runsc create +
                                             start: the gVisor sandbox boots)
  ready    the runner's ready line          (the interpreter starts inside gVisor)
  job      one hello-world job line -> its result
  remove   DELETE /containers/{id}?force=1  (runsc kill/delete, the layer goes)

CPU of a part = what dockerd and containerd used meanwhile (the whole daemons:
other containers' work on a busy machine lands here too, so it is an upper
bound) + the container's shim with its reaped children (the runsc CLI calls) +
the container's cgroup (the sandbox and gofer). Then, for the same
hello-world (`python3 -c pass`): `docker run --rm` (wall; its CPU is spread
over daemonised processes this cannot attribute) against `runsc run` on an
OCI bundle of the same image without Docker (wall; CPU: the runsc processes,
from their rusage). Prints JSON medians. Needs root and dockerd.

  creation_cost.py IMAGE RUNTIME N
"""
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "lib"))
import sgtest  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def proc_cpu(pid, children=False):
    try:
        with open(f"/proc/{pid}/stat") as f:
            v = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    t = int(v[11]) + int(v[12]) + ((int(v[13]) + int(v[14])) if children else 0)
    return t / TICK


def pids_named(name):
    out = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def shim_pid(cid):
    out = subprocess.run(["pgrep", "-f", f"containerd-shim.*-id {cid}"], capture_output=True,
                         text=True).stdout.split()
    return int(out[0]) if out else None


class Cpu:
    """CPU seconds of the daemons, one container's shim and its cgroup."""

    def __init__(self):
        self.daemons = pids_named("dockerd") + pids_named("containerd")
        self.cid = None
        self.shim = None
        self.shim_last = 0.0
        self.cg_last = 0.0

    def sample(self):
        d = sum(proc_cpu(p) for p in self.daemons)
        if self.cid and not self.shim:
            self.shim = shim_pid(self.cid)
        if self.shim:
            s = proc_cpu(self.shim, children=True)
            self.shim_last = s if s else self.shim_last
        if self.cid:
            try:
                with open(f"/sys/fs/cgroup/cpuacct/docker/{self.cid}/cpuacct.usage") as f:
                    self.cg_last = int(f.read()) / 1e9
            except OSError:
                pass
        return d + self.shim_last + self.cg_last


def create_body(image, runtime):
    with open(os.path.join(ROOT, "images", "seccomp", "sandbox.json")) as f:
        profile = json.dumps(json.load(f), separators=(",", ":"))
    tmpfs = "rw,nosuid,nodev,noexec,size=64m,uid=65534,gid=65534,mode=1777"
    mem = 256 * 1024 * 1024
    # The executor's spec: an image labelled org.sandgate.identity=split runs
    # its runner as uid 0 with the capabilities it needs to drop the job to
    # its own identity (executors/PROTOCOL.md, "Container settings").
    st, info = sgtest.docker_api("GET", f"/images/{image}/json")
    assert st == 200, info
    split = (info["Config"].get("Labels") or {}).get("org.sandgate.identity") == "split"
    user, caps = ("0:0", ["SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "KILL"]) if split else \
        ("65534:65534", [])
    return {"Image": image, "User": user, "WorkingDir": "/workspace",
            "Env": ["HOME=/tmp", "TMPDIR=/tmp"], "AttachStdin": True, "AttachStdout": True,
            "AttachStderr": True, "OpenStdin": True, "StdinOnce": False, "Tty": False,
            "NetworkDisabled": True, "Labels": {"org.sandgate.bench": "creation-cost"},
            "HostConfig": {"Runtime": runtime, "NetworkMode": "none", "ReadonlyRootfs": True,
                           "Tmpfs": {"/tmp": tmpfs, "/workspace": tmpfs}, "CapDrop": ["ALL"], "CapAdd": caps,
                           "SecurityOpt": ["no-new-privileges:true", "seccomp=" + profile],
                           "Memory": mem, "MemorySwap": mem, "NanoCpus": 1000000000,
                           "PidsLimit": 128, "LogConfig": {"Type": "none"},
                           "IpcMode": "private"}}


def attach(cid):
    s = socket.socket(socket.AF_UNIX)
    s.connect("/var/run/docker.sock")
    s.sendall((f"POST /containers/{cid}/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
               "Host: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            raise RuntimeError("attach closed")
        head += chunk
    return s


def read_until(s, needle, limit_s=60):
    s.settimeout(limit_s)
    buf = b""
    while needle not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("stream closed before " + needle.decode())
        buf += chunk
    return buf


def one_sandbox(body):
    cpu = Cpu()
    parts, cpus = {}, {}
    marks = [(time.monotonic(), cpu.sample())]

    def mark(name):
        t, c = time.monotonic(), cpu.sample()
        parts[name] = (t - marks[-1][0]) * 1000
        cpus[name] = (c - marks[-1][1]) * 1000
        marks.append((t, c))

    st, reply = sgtest.docker_api("POST", "/containers/create", body)
    assert st == 201, reply
    cid = reply["Id"]
    cpu.cid = cid
    mark("create")
    try:
        s = attach(cid)
        mark("attach")
        st, reply = sgtest.docker_api("POST", f"/containers/{cid}/start")
        assert st == 204, reply
        mark("start")
        s.settimeout(60)
        s.recv(1)
        mark("ready")
        nonce = uuid.uuid4().hex
        s.sendall((json.dumps({"nonce": nonce, "code": "def main():\n    return 1\n"}) +
                   "\n").encode())
        read_until(s, nonce.encode())
        mark("job")
        s.close()
    finally:
        sgtest.docker_api("DELETE", f"/containers/{cid}?force=1")
    mark("remove")
    return parts, cpus


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def docker_run(image, runtime):
    t0 = time.monotonic()
    subprocess.run(["docker", "run", "--rm", "--runtime", runtime, "--network", "none",
                    "--security-opt", "seccomp=unconfined", "--entrypoint", "python3", image,
                    "-c", "pass"], check=True, capture_output=True)
    return (time.monotonic() - t0) * 1000


def make_bundle(runsc, image, work):
    rootfs = os.path.join(work, "rootfs")
    os.makedirs(rootfs)
    cid = subprocess.run(["docker", "create", image], check=True, capture_output=True,
                         text=True).stdout.strip()
    try:
        exp = subprocess.Popen(["docker", "export", cid], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-C", rootfs, "-x"], stdin=exp.stdout, check=True)
        exp.wait()
    finally:
        subprocess.run(["docker", "rm", cid], capture_output=True)
    subprocess.run([runsc, "spec", "--", "python3", "-c", "pass"], cwd=work, check=True)
    with open(os.path.join(work, "config.json")) as f:
        spec = json.load(f)
    spec["process"]["terminal"] = False
    spec["process"]["user"] = {"uid": 65534, "gid": 65534}
    spec["root"]["readonly"] = True
    with open(os.path.join(work, "config.json"), "w") as f:
        json.dump(spec, f)


def runsc_run(runsc, runsc_args, work, i):
    state = os.path.join(work, "state")
    t0, c0 = time.monotonic(), children_cpu()
    subprocess.run([runsc, "--root", state, *runsc_args, "run", "--bundle", work,
                    f"sg-bench-{os.getpid()}-{i}"], check=True, capture_output=True)
    return (time.monotonic() - t0) * 1000, (children_cpu() - c0) * 1000


def med(xs):
    return round(statistics.median(xs), 1)


def main(argv):
    image, runtime, n = argv[1], argv[2], int(argv[3])
    info = sgtest.docker_api("GET", "/info")[1]["Runtimes"][runtime]
    platform = [a for a in info.get("runtimeArgs", []) if a.startswith("--platform")]
    body = create_body(image, runtime)
    one_sandbox(body)  # warm the layers and caches
    rows = [one_sandbox(body) for _ in range(n)]
    out = {"runtime": runtime, "args": info.get("runtimeArgs", []), "n": n,
           "load_before": os.getloadavg()[0],
           "wall_ms": {k: med([r[0][k] for r in rows]) for k in rows[0][0]},
           "cpu_ms": {k: med([r[1][k] for r in rows]) for k in rows[0][1]}}
    out["wall_ms"]["total"] = med([sum(r[0].values()) for r in rows])
    out["cpu_ms"]["total"] = med([sum(r[1].values()) for r in rows])
    runs = [docker_run(image, runtime) for _ in range(n)]
    out["docker_run_hello"] = {"wall_ms": med(runs)}
    work = tempfile.mkdtemp(prefix="sg-bundle-")
    try:
        make_bundle(info["path"], image, work)
        args = ["--network=none", *platform]
        runs = [runsc_run(info["path"], args, work, i) for i in range(n)]
        out["runsc_run_hello"] = {"wall_ms": med([r[0] for r in runs]),
                                  "cpu_ms": med([r[1] for r in runs])}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)
