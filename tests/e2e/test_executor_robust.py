"""sandgate-executor robustness end to end: start-up refusals (runtime not
registered, runc without the explicit flag, seccomp profile not enforced),
the seccomp profile at work, dockerd going away mid-job and coming back,
SIGTERM draining, and orphans reaped after a crash.

dockerd's disappearance is produced with a unix-socket relay the executor
talks through (--docker-socket): the test cuts every connection and removes
the socket, exactly what the executor sees when dockerd stops, without
stopping the engine other suites on this machine share.
"""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import unittest

import sgtest
from test_executor import Executor, require_engine_and_images, unique_instance

DAEMON_JSON = "/etc/docker/daemon.json"
NOSECCOMP_RUNTIME = "sandgate-e2e-noseccomp"


def run_executor_once(args, timeout=90):
    """Start the executor expecting it to refuse; returns (rc, output)."""
    r = subprocess.run([sgtest.binary("sandgate-executor")] + args, capture_output=True,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


class SocketRelay:
    """A unix socket that relays every connection to dockerd's socket and can
    be cut (connections dropped, socket gone) and restored."""

    def __init__(self, path):
        self.path = path
        self.conns = []
        self.lock = threading.Lock()
        self.listener = None
        self.start()

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(64)
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def _accept(self, listener):
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        self._relay(client, b"")

    def _relay(self, client, head):
        """Connects client to dockerd, sending head (what was read of the
        request already) first."""
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect("/var/run/docker.sock")
            upstream.sendall(head)
        except OSError:
            client.close()
            return
        client.settimeout(None)
        with self.lock:
            self.conns += [client, upstream]
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.listener.close()
        os.unlink(self.path)
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass

    def close(self):
        self.cut()


class CreateFailingRelay(SocketRelay):
    """A relay that, while `failing` is set, answers every container create
    with dockerd's error shape (500) instead of forwarding it: dockerd stays
    reachable, launches fail. The executor opens one connection per API call."""

    failing = False

    def _serve(self, client):
        head = b""
        client.settimeout(10)
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = client.recv(65536)
                if not chunk:
                    break
                head += chunk
        except OSError:
            client.close()
            return
        line = head.split(b"\r\n", 1)[0]
        injected = self.inject(line)
        if injected:
            self._refuse(client, head, *injected)
            return
        self._relay(client, head)

    def inject(self, line):
        """(status line, message) to answer the request line with, or None."""
        if self.failing and line.startswith(b"POST ") and b"/containers/create" in line:
            return b"500 Internal Server Error", b"injected: container create refused"
        return None

    @staticmethod
    def _refuse(client, head, status, message):
        hdrs, _, body = head.partition(b"\r\n\r\n")
        want = 0
        for ln in hdrs.split(b"\r\n")[1:]:
            k, _, v = ln.partition(b":")
            if k.strip().lower() == b"content-length":
                want = int(v.strip())
        try:
            while len(body) < want:  # read the whole request: no reset before the answer
                chunk = client.recv(65536)
                if not chunk:
                    break
                body += chunk
            msg = json.dumps({"message": message.decode()}).encode()
            client.sendall(b"HTTP/1.1 %s\r\nContent-Type: application/json"
                           b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                           % (status, len(msg)) + msg)
        except OSError:
            pass
        client.close()


class RemovalUnderWayRelay(CreateFailingRelay):
    """A relay that answers each container removal as dockerd does when
    another client removes the same container at that moment (409, "removal
    ... is already in progress"), and removes it itself."""

    def inject(self, line):
        m = re.match(rb"DELETE /(?:v[0-9.]+/)?containers/([0-9a-f]{64})\?", line)
        if not m:
            return None
        subprocess.run(["docker", "rm", "-f", m.group(1).decode()], capture_output=True)
        return (b"409 Conflict",
                b"removal of container " + m.group(1) + b" is already in progress")


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class StartupRefusals(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_engine_and_images()

    def base_args(self):
        return ["--language", "python", "--listen", f"127.0.0.1:{sgtest.free_port()}",
                "--instance", unique_instance("refuse")]

    def test_runtime_not_registered(self):
        rc, out = run_executor_once(self.base_args() + ["--runtime", "sandgate-e2e-missing"])
        self.assertEqual(rc, 1, out)
        self.assertIn("is not registered with dockerd", out)
        self.assertIn("daemon.json", out)

    def test_runc_needs_explicit_flag(self):
        rc, out = run_executor_once(self.base_args() + ["--runtime", "runc"])
        self.assertEqual(rc, 2, out)
        self.assertIn("--insecure-runtime", out)

    def test_missing_image(self):
        rc, out = run_executor_once(self.base_args() + ["--image", "sandgate/no-such-image:0"])
        self.assertEqual(rc, 1, out)
        self.assertIn("make images", out)

    def test_bad_flag_values(self):
        for bad in (["--pids-limit", "32"], ["--pool-size", "0"], ["--memory-mb", "lots"],
                    ["--timeout-ms", "5000", "--max-timeout-ms", "1000"], ["--bogus", "1"]):
            rc, out = run_executor_once(self.base_args() + bad)
            self.assertEqual(rc, 2, (bad, out))

    def test_help_documents_flags_and_env(self):
        r = subprocess.run([sgtest.binary("sandgate-executor"), "--help"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0)
        for word in ("--pool-size", "--insecure-runtime", "--seccomp", "SANDBOX_TIMEOUT",
                     "SANDBOX_MAX_MEMORY", "SANDBOX_ENABLE_SECCOMP", "--token-file"):
            self.assertIn(word, r.stdout)


class InsecureRuntime(unittest.TestCase):
    def test_runc_with_flag_warns_on_every_job(self):
        require_engine_and_images()
        ex = Executor("python", 1, ("--insecure-runtime", "runc"))
        try:
            for job in ("warn-1", "warn-2"):
                r = ex.ok("def main():\n    return 'runc'\n", job_id=job)
                self.assertEqual(r["result"]["value"], "runc", r)
            _, _, h = ex.health()
            self.assertTrue(h["insecure_runtime"])
            log = ex.daemon.tail(100000)
            for job in ("warn-1", "warn-2"):
                self.assertRegex(log, f"level=warn event=insecure_runtime job_id={job}")
        finally:
            self.assertEqual(ex.stop(), 0)
            self.assertEqual(ex.containers(), [])


class Seccomp(unittest.TestCase):
    def test_profile_enforced_and_threads_work(self):
        require_engine_and_images()
        ex = Executor("python", 1, ("--seccomp", "images/seccomp/sandbox.json"))
        try:
            self.assertIn("event=seccomp_enforced", ex.daemon.tail())
            code = ("import ctypes, ctypes.util, threading, os\n"
                    "def main():\n"
                    "    libc = ctypes.CDLL(None, use_errno=True)\n"
                    "    # unshare(CLONE_NEWUSER): denied by the profile (mount and the\n"
                    "    # other namespaces are the split image's runner's, and refused\n"
                    "    # to the job by its missing capabilities)\n"
                    "    r = libc.syscall(272, 0x10000000)\n"
                    "    e = ctypes.get_errno()\n"
                    "    t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                    "    return [r, e]\n")
            r = ex.ok(code)
            self.assertEqual(r["status"], "success", r)
            self.assertEqual(r["result"]["value"], [-1, 1], "unshare must fail with EPERM")
        finally:
            self.assertEqual(ex.stop(), 0)
            self.assertEqual(ex.containers(), [])

    def test_unenforced_profile_refused(self):
        """A runsc registered without --oci-seccomp ignores profiles: the
        executor's probe must notice and refuse to start."""
        require_engine_and_images()
        with open(DAEMON_JSON) as f:
            original = f.read()
        cfg = json.loads(original)
        runsc = cfg["runtimes"]["runsc"]["path"]
        cfg["runtimes"][NOSECCOMP_RUNTIME] = {"path": runsc, "runtimeArgs": ["--network=none"]}
        try:
            self._reload(json.dumps(cfg, indent=2), present=True)
            instance = unique_instance("noseccomp")
            rc, out = run_executor_once(["--language", "python", "--listen",
                                         f"127.0.0.1:{sgtest.free_port()}", "--instance", instance,
                                         "--runtime", NOSECCOMP_RUNTIME,
                                         "--seccomp", "images/seccomp/sandbox.json"])
            self.assertEqual(rc, 1, out)
            self.assertIn("is NOT enforced", out)
            self.assertIn("--oci-seccomp", out)
            self.assertEqual(sgtest.containers_with_label(f"org.sandgate.executor={instance}"), [])
        finally:
            self._reload(original, present=False)

    @staticmethod
    def _reload(text, present):
        tmp = DAEMON_JSON + ".sandgate-e2e"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, DAEMON_JSON)
        pid = int(subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True,
                                 text=True).stdout.split()[0])
        os.kill(pid, signal.SIGHUP)

        def registered():
            status, info = sgtest.docker_api("GET", "/info")
            return status == 200 and (NOSECCOMP_RUNTIME in info["Runtimes"]) == present
        wait_for(registered, 20, f"dockerd to {'add' if present else 'drop'} {NOSECCOMP_RUNTIME}")


class DockerOutage(unittest.TestCase):
    def test_dockerd_gone_mid_job_then_back(self):
        require_engine_and_images()
        path = os.path.join("/tmp", f"sandgate-e2e-relay-{os.getpid()}.sock")
        relay = SocketRelay(path)
        ex = Executor("python", 1, ("--docker-socket", path, "--pool-wait-ms", "2000"))
        try:
            got = {}
            t = threading.Thread(target=lambda: got.update(r=ex.run(
                "import time\ndef main():\n    time.sleep(5)\n    return 'late'\n")))
            t.start()
            time.sleep(1.0)
            relay.cut()
            t.join(30)
            status, _, body = got["r"]
            self.assertEqual(status, 200, body)
            self.assertEqual(body["status"], "program_runner_error", body)
            self.assertEqual(body["exit_code"], -3)
            self.assertIn("unreachable", body["detail"])

            wait_for(lambda: ex.health()[0] == 503, 15, "healthz to report dockerd unreachable")
            _, _, h = ex.health()
            self.assertEqual(h["docker"], "unreachable")
            t0 = time.time()
            status, _, body = ex.run("def main():\n    return 1\n")
            self.assertLess(time.time() - t0, 2.0, "answered at once, not after the pool wait")
            self.assertEqual(status, 503, body)
            self.assertEqual(body["error"]["code"], "docker_unreachable")
            self.assertEqual(body["status"], "program_runner_error")
            self.assertIn("docker_unreachable", body["detail"])

            relay.start()
            wait_for(lambda: ex.health()[0] == 200, 30, "recovery after dockerd returned")
            ex.wait_idle(1, 30)
            self.assertEqual(ex.ok("def main():\n    return 'back'\n")["result"]["value"], "back")
            # What the outage left behind is swept: only the idle sandbox stays.
            wait_for(lambda: len(ex.containers()) == 1, 30, "the sweep of leftover containers")
        finally:
            rc = ex.stop()
            relay.close()
            self.assertEqual(rc, 0)
            self.assertEqual(ex.containers(), [])


class Exhaustion(unittest.TestCase):
    """A job that finds no idle sandbox waits (at most --pool-wait-ms) only
    while one is on its way; when none can come (launches failing, nothing
    being created) the 503 is at once."""

    def test_no_wait_when_no_sandbox_can_come_and_wait_when_one_is_on_its_way(self):
        require_engine_and_images()
        path = os.path.join("/tmp", f"sandgate-e2e-failrelay-{os.getpid()}.sock")
        relay = CreateFailingRelay(path)
        ex = Executor("python", 1, ("--docker-socket", path, "--pool-wait-ms", "8000",
                                    "--create-parallel", "1"))
        try:
            relay.failing = True
            slow = {}
            t = threading.Thread(target=lambda: slow.update(r=ex.run(
                "import time\ndef main():\n    time.sleep(3)\n    return 'slow'\n")))
            t.start()  # takes the only sandbox; its refill fails
            wait_for(lambda: "injected" in json.dumps(ex.health()[2]), 20,
                     "a failed launch in /healthz")
            t0 = time.time()
            status, _, body = ex.run("def main():\n    return 1\n")
            elapsed = time.time() - t0
            self.assertEqual(status, 503, body)
            self.assertEqual(body["error"]["code"], "pool_busy")
            self.assertIn("last launch failed", body["error"]["message"])
            self.assertLess(elapsed, 2.0, "answered at once, not after the 8 s pool wait")
            t.join(30)
            self.assertEqual(slow["r"][2]["result"]["value"], "slow")

            relay.failing = False  # launches work again: the pool recovers
            ex.wait_idle(1, 60)
            # Two jobs at once on a pool of one: the second waits for the
            # refill already under way and runs (the wait is kept).
            got = []
            threads = [threading.Thread(target=lambda: got.append(ex.run(
                "import time\ndef main():\n    time.sleep(0.5)\n    return 2\n")))
                for _ in range(2)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(60)
            self.assertEqual(sorted(r[0] for r in got), [200, 200], got)
        finally:
            rc = ex.stop()
            relay.close()
            self.assertEqual(rc, 0)
            self.assertEqual(ex.containers(), [])


class Lifecycle(unittest.TestCase):
    def test_sigterm_drains_in_flight_jobs(self):
        require_engine_and_images()
        ex = Executor("python", 1)
        got = {}
        t = threading.Thread(target=lambda: got.update(r=ex.run(
            "import time\ndef main():\n    time.sleep(2)\n    return 'drained'\n")))
        t.start()
        time.sleep(0.7)
        rc = ex.stop(signal.SIGTERM)
        t.join(30)
        self.assertEqual(rc, 0, ex.daemon.tail())
        status, _, body = got["r"]
        self.assertEqual(status, 200, body)
        self.assertEqual(body["result"]["value"], "drained")
        self.assertEqual(ex.containers(), [])

    def test_removal_already_under_way_is_not_a_failure(self):
        # Seen when an executor restarts at once after being killed: dockerd is
        # still removing the old one's sandboxes when the new one reaps them.
        require_engine_and_images()
        instance = unique_instance("removing")
        ex = Executor("python", 2, instance=instance)
        ex.stop(signal.SIGKILL)
        self.assertGreaterEqual(len(ex.containers()), 1)
        path = os.path.join("/tmp", f"sandgate-e2e-relay-{os.getpid()}.sock")
        relay = RemovalUnderWayRelay(path)
        ex2 = None
        try:
            ex2 = Executor("python", 1, ("--docker-socket", path), instance=instance)
            self.assertRegex(ex2.daemon.tail(), f"event=reaped_orphans instance={instance} "
                                                f"count=[1-9]")
            self.assertEqual(ex2.ok("def main():\n    return 'up'\n")["result"]["value"], "up")
        finally:
            rc = ex2.stop() if ex2 else 0
            relay.close()
            self.assertEqual(rc, 0)
            self.assertEqual(ex.containers(), [])

    def test_orphans_reaped_after_crash(self):
        require_engine_and_images()
        instance = unique_instance("crash")
        ex = Executor("python", 2, instance=instance)
        def doomed_job():
            try:
                ex.run("import time\ndef main():\n    time.sleep(20)\n", timeout=40)
            except OSError:
                pass  # the executor is killed under this request
        t = threading.Thread(target=doomed_job, daemon=True)
        t.start()
        time.sleep(1.0)
        ex.stop(signal.SIGKILL)
        before = ex.containers()
        self.assertGreaterEqual(len(before), 2, "the in-flight and idle sandboxes outlive a crash")
        ex2 = Executor("python", 1, instance=instance)
        try:
            self.assertRegex(ex2.daemon.tail(), f"event=reaped_orphans instance={instance} "
                                                f"count=[1-9]")
            self.assertEqual(set(before) & set(ex2.containers()), set())
        finally:
            self.assertEqual(ex2.stop(), 0)
            self.assertEqual(ex2.containers(), [])


if __name__ == "__main__":
    unittest.main()
