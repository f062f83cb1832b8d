#!/usr/bin/env python3
"""restore_probe.py - gVisor checkpoint/restore of a warm Python runner,
measured against a cold boot to the same point (docs/executor.md, "Restore
instead of boot").

Runs runsc by hand on an OCI bundle (no executor, no dockerd in the path),
as root, under a runsc root directory of its own that it removes at the end
(also on failure). The bundle's config.json is the one the executor's direct
backend writes (--config: copied from a running `--sandbox-backend runsc`
executor's bundle; its root path and cgroupsPath are replaced), so the
sandbox has the same spec, seccomp profile and runsc flags.

  1. cold: `runsc create` + `runsc start` with pipes for the runner's stdio,
     until its ready line {"sandgate_runner_ready":1}; N times.
  2. one warm sandbox is checkpointed (`runsc checkpoint --image-path`).
  3. restore: `runsc create` + `runsc restore --detach` from that image, with
     fresh container ids and fresh pipes; N times.
For each sandbox: wall to warm, CPU-s to warm (the runsc CLI calls, reaped,
from this process's rusage of children + sandbox and gofer from
/proc/PID/stat: this process is their subreaper), RSS of sandbox + gofer
once warm, then one job through the runner's stdin (its result line checked)
and its wall, and the whole life's CPU after the sandbox has exited. The job
prints what a restored sandbox might share with its siblings: Python's
random state, str hash seed, an address (ASLR), os.urandom, the clocks.
Prints one JSON line per sandbox and a summary (medians).

--floor instead: N sandboxes of the same spec running /bin/true and N
running `python3 -c pass` (alternated; create, start, exit, the whole life's
CPU as above): gVisor's own price of a sandbox, below which no pool goes."""
import argparse
import ctypes
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RUNSC = shutil.which("runsc") or "/usr/bin/runsc"
CGROUP = "/sys/fs/cgroup"
HZ = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER = 36
READY = b'{"sandgate_runner_ready":1}'
PROBE = """import sys
PRE = sorted(m for m in ("random", "numpy", "pandas", "tempfile") if m in sys.modules)
import os, random, time, ctypes
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return line.split()[1]
def main():
    np = sys.modules.get("numpy")
    libc = ctypes.CDLL(None, use_errno=True)
    refused = libc.unshare(0x10000000) == -1 and ctypes.get_errno()  # CLONE_NEWUSER: the spec's seccomp
    return {"random": random.random(), "hash": hash("sandgate"),
            "numpy_random": float(np.random.random()) if np else None,
            "libc_addr": ctypes.cast(libc.printf, ctypes.c_void_p).value,
            "heap_addr": id(object()), "stack_addr": ctypes.addressof(ctypes.c_int()),
            "urandom": os.urandom(8).hex(), "time": time.time(),
            "monotonic": time.monotonic(), "pid": os.getpid(), "uid": os.getuid(),
            "cap_eff": status("CapEff"), "no_new_privs": status("NoNewPrivs"),
            "seccomp": status("Seccomp"), "unshare_user_errno": refused,
            "hostname": os.uname().nodename, "preimported": PRE}
"""


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    return s[s.rindex(")") + 2:].split()


def my_children():
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(proc_stat(d)[1]) == me:
                    out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def rss_mb(pids):
    t = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        t += int(line.split()[1])
        except OSError:
            pass
    return t / 1024


def drain(fd, into):
    """Reads a sandbox's stderr until it closes (kept for error messages)."""
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            into.append(chunk)
    finally:
        os.close(fd)


def reapers(pids):
    """One thread per sandbox/gofer pid that reaps it (this process is their
    subreaper: `runsc delete` waits for a sandbox that is only a zombie)."""
    ts = [threading.Thread(target=reap_one, args=(p,), daemon=True) for p in pids]
    for t in ts:
        t.start()
    return ts


def reap_one(pid):
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


class Probe:
    def __init__(self, work, config, platform):
        self.work = work
        self.root = os.path.join(work, "runsc")
        self.platform = platform
        self.config = config
        self.seq = 0
        self.cli_cpu = 0.0
        # every sandbox in its own cgroup under this one (runsc makes the leaf
        # from the spec's cgroupsPath and removes it at delete): its CPU is
        # cpuacct.usage, whatever processes the platform starts
        self.cgroup = f"/sg-restore-probe-{os.getpid()}"

    def cg_read(self, controller, cid, name):
        try:
            with open(f"{CGROUP}/{controller}{self.cgroup}/{cid}/{name}") as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def cg_cpu(self, cid):
        ns = self.cg_read("cpuacct", cid, "cpuacct.usage")
        if ns is None:
            raise RuntimeError(f"no cpuacct cgroup for {cid}")
        return ns / 1e9

    def runsc(self, *words, check=True, stdin=None, stdout=None, stderr=None, timeout=120):
        """One runsc CLI call; its CPU (with its reaped children), from wait4,
        is added to self.cli_cpu."""
        argv = [RUNSC, "--root", self.root, "--platform", self.platform, "--network=none",
                "--oci-seccomp", *words]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            p = subprocess.Popen(argv, stdin=stdin, stdout=stdout or out, stderr=stderr or err)
            deadline = time.monotonic() + timeout
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    p.kill()
                    os.wait4(p.pid, 0)
                    raise RuntimeError(f"runsc {words[0]}: no answer in {timeout} s")
                time.sleep(0.002)
            p.returncode = os.waitstatus_to_exitcode(status)
            self.cli_cpu += ru.ru_utime + ru.ru_stime
            out.seek(0)
            err.seek(0)
            text, etext = out.read(), err.read()
        if check and p.returncode != 0:
            raise RuntimeError(f"runsc {words[0]}: {p.returncode} "
                               f"{etext[-2000:].decode(errors='replace')}")
        return text

    def bundle(self):
        self.seq += 1
        cid = f"sgprobe-{os.getpid()}-{self.seq}"
        b = os.path.join(self.work, "bundles", cid)
        os.makedirs(b)
        self.config["linux"]["cgroupsPath"] = f"{self.cgroup}/{cid}"
        with open(os.path.join(b, "config.json"), "w") as f:
            json.dump(self.config, f)
        return cid, b

    def create(self):
        """runsc create with pipes; returns (cid, bundle, stdin_w, stdout_r)."""
        cid, b = self.bundle()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()  # the runner needs pipes: a file as fd 2 fails its child
        self.stderr = []
        threading.Thread(target=drain, args=(err_r, self.stderr), daemon=True).start()
        try:
            self.runsc("create", "--bundle", b, cid, stdin=in_r, stdout=out_w, stderr=err_w)
        finally:
            os.close(in_r)
            os.close(out_w)
            os.close(err_w)
        return cid, b, in_w, out_r

    def err_of(self):
        return b"".join(self.stderr)[-3000:].decode(errors="replace")

    def read_line(self, fd, deadline):
        """The next non-empty line on fd (the runner's result line may follow
        an empty one)."""
        buf = b""
        while True:
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    raise RuntimeError(f"no line in time (got {buf[:200]!r}) {self.err_of()}")
                chunk = os.read(fd, 1)  # byte by byte: nothing after the line is lost
                if not chunk:
                    raise RuntimeError(f"stdout closed (got {buf[:200]!r}) {self.err_of()}")
                buf += chunk
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                return line

    def warm(self, image=None):
        """One sandbox to warm: cold boot (image None) or restore."""
        self.cli_cpu, t0 = 0.0, time.monotonic()
        before = set(my_children())
        cid, b, in_w, out_r = self.create()
        if image is None:
            self.runsc("start", cid)
            line = self.read_line(out_r, time.monotonic() + 60)
            if line != READY:
                raise RuntimeError(f"not the ready line: {line[:200]!r}")
        else:
            self.runsc("restore", "--detach", "--image-path", image, "--bundle", b, cid)
        wall = time.monotonic() - t0
        cpu = self.cli_cpu + self.cg_cpu(cid)
        pids = [p for p in my_children() if p not in before]  # sandbox, gofer
        return {"reapers": reapers(pids), "cid": cid, "bundle": b, "in": in_w, "out": out_r,
                "wall_ms": wall * 1000, "cpu_ms": cpu * 1000, "rss_mb": rss_mb(pids),
                "mem_mb": (self.cg_read("memory", cid, "memory.usage_in_bytes") or 0) / 2**20}

    def job(self, sb):
        nonce = os.urandom(12).hex()
        line = json.dumps({"code": PROBE, "nonce": nonce}).encode() + b"\n"
        t0 = time.monotonic()
        os.write(sb["in"], line)
        res = json.loads(self.read_line(sb["out"], time.monotonic() + 60))
        sb["job_ms"] = (time.monotonic() - t0) * 1000
        sb["job_ok"] = res.get("nonce") == nonce and res.get("outcome") == "ok"
        sb["job"] = (res.get("result") or {}).get("value")
        sb["host_time"] = time.time()
        if not sb["job_ok"]:
            sb["job_raw"] = res

    def finish(self, sb):
        """Waits for the sandbox to exit (the runner ends after one job), then
        the whole life's CPU (read before the delete removes the cgroup);
        deletes it."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(t.is_alive() for t in sb["reapers"]):
            time.sleep(0.02)
        sb["life_cpu_ms"] = (self.cli_cpu + self.cg_cpu(sb["cid"])) * 1000
        self.delete(sb)

    def delete(self, sb):
        self.runsc("delete", "--force", sb["cid"], check=False)
        for t in sb["reapers"]:
            t.join(30)
        os.close(sb["in"])
        os.close(sb["out"])
        shutil.rmtree(sb["bundle"], ignore_errors=True)

    def checkpoint(self, compression):
        sb = self.warm()
        img = os.path.join(self.work, f"image-{compression}")
        t0, c0, s0 = time.monotonic(), self.cli_cpu, self.cg_cpu(sb["cid"])
        self.runsc("checkpoint", "--image-path", img, "--compression", compression, sb["cid"])
        took = {"checkpoint_ms": (time.monotonic() - t0) * 1000,
                "checkpoint_cpu_ms": (self.cli_cpu - c0 + self.cg_cpu(sb["cid"]) - s0) * 1000,
                "image_mb": sum(os.path.getsize(os.path.join(img, f))
                                for f in os.listdir(img)) / 1e6,
                "files": sorted(os.listdir(img))}
        self.delete(sb)
        return img, took

    def floor(self, argv):
        """One sandbox of the same spec that runs argv instead of the runner
        (create, start, its exit, delete): the whole life's CPU, CLI calls +
        cgroup, and wall. The runtime's own price of a sandbox, below which
        no pool can go."""
        saved = self.config["process"]["args"]
        self.config["process"]["args"] = argv
        try:
            self.cli_cpu, t0 = 0.0, time.monotonic()
            before = set(my_children())
            cid, b, in_w, out_r = self.create()
            os.close(in_w)
            self.runsc("start", cid)
            sb = {"reapers": reapers([p for p in my_children() if p not in before]),
                  "cid": cid, "bundle": b, "in": os.open(os.devnull, os.O_RDONLY), "out": out_r}
            for t in sb["reapers"]:  # the sandbox and gofer exit when the program does
                t.join(60)
            wall = time.monotonic() - t0
            self.finish(sb)
            return {"kind": "floor", "argv": argv, "wall_ms": wall * 1000,
                    "life_cpu_ms": sb["life_cpu_ms"]}
        finally:
            self.config["process"]["args"] = saved

    def cleanup(self):
        """Deletes every sandbox left in the probe's root and removes its
        cgroups, whatever failed before."""
        reapers(my_children())  # a sandbox that is a zombie holds `runsc delete` up
        try:
            for cid in self.runsc("list", "--quiet", check=False).decode().split():
                self.runsc("delete", "--force", cid, check=False)
        finally:
            for controller in os.listdir(CGROUP):
                top = f"{CGROUP}/{controller}{self.cgroup}"
                if os.path.isdir(top):
                    for leaf in os.listdir(top):
                        if os.path.isdir(f"{top}/{leaf}"):
                            os.rmdir(f"{top}/{leaf}")
                    os.rmdir(top)


def summary(rows, key):
    vals = [r[key] for r in rows if key in r]
    return round(statistics.median(vals), 1) if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, help="a direct-backend bundle's config.json")
    ap.add_argument("--rootfs", required=True, help="the image's unpacked root file system")
    ap.add_argument("--platform", default="systrap")
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--compression", default="none", choices=("none", "flate-best-speed"))
    ap.add_argument("--preimport", help="SANDGATE_PREIMPORT of the sandboxes (a flavour)")
    ap.add_argument("--workdir", help="parent directory for the probe's state (default /tmp)")
    ap.add_argument("--floor", action="store_true",
                    help="only the runtime's floor: sandboxes of the same spec running "
                    "/bin/true and python3 -c pass, N of each, alternated")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("restore_probe: needs root (runsc creates the sandboxes)")
    with open(a.config) as f:
        config = json.load(f)
    config["root"]["path"] = os.path.abspath(a.rootfs)
    if a.preimport is not None:
        env = [e for e in config["process"]["env"] if not e.startswith("SANDGATE_PREIMPORT=")]
        config["process"]["env"] = env + [f"SANDGATE_PREIMPORT={a.preimport}"]
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    work = tempfile.mkdtemp(prefix="sg-restore-probe-", dir=a.workdir)
    probe = Probe(work, config, a.platform)
    rows = []
    try:
        if a.floor:
            for i in range(a.n):
                for argv in (["/bin/true"], ["python3", "-c", "pass"]):
                    row = probe.floor(argv)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            for argv in (["/bin/true"], ["python3", "-c", "pass"]):
                rs = [r for r in rows if r["argv"] == argv]
                print(json.dumps({"summary": " ".join(argv), "n": len(rs), "load": os.getloadavg(),
                                  **{k: summary(rs, k) for k in ("wall_ms", "life_cpu_ms")}}),
                      flush=True)
            return
        img, took = probe.checkpoint(a.compression)
        print(json.dumps({"checkpoint": took, "compression": a.compression,
                          "preimport": a.preimport, "load": os.getloadavg()}), flush=True)
        for i in range(a.n):  # alternated: the machine's load hits both alike
            for kind in ("boot", "restore"):
                sb = probe.warm(None if kind == "boot" else img)
                sb["kind"] = kind
                probe.job(sb)
                probe.finish(sb)
                row = {k: v for k, v in sb.items()
                       if k not in ("in", "out", "bundle", "reapers")}
                rows.append(row)
                print(json.dumps(row), flush=True)
        for kind in ("boot", "restore"):
            rs = [r for r in rows if r["kind"] == kind]
            print(json.dumps({"summary": kind, "n": len(rs),
                              "ok": sum(1 for r in rs if r["job_ok"]),
                              "load": os.getloadavg(),
                              **{k: summary(rs, k) for k in
                                 ("wall_ms", "cpu_ms", "rss_mb", "mem_mb", "job_ms", "life_cpu_ms")}}),
                  flush=True)
    finally:
        probe.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
