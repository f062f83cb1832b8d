"""sandgate-executor end to end: the sanitizer build against the real dockerd
with runsc and the real sandbox images (built by `make images`).

Every executor here gets a unique --instance label, and each test class
checks at the end that no container with its label remains.
"""
import base64
import json
import os
import signal
import threading
import time
import unittest

import sgtest

_seq = [0]
IMAGES = {"python": sgtest.image("python"), "nodejs": sgtest.image("nodejs")}


def unique_instance(tag):
    _seq[0] += 1
    return f"e2e-{tag}-{os.getpid()}-{_seq[0]}"


def require_engine_and_images():
    sgtest.ensure_docker()
    for image in IMAGES.values():
        status, body = sgtest.docker_api("GET", f"/images/{image}/json")
        if status != 200:
            raise AssertionError(f"sandbox image {image} is missing ({status}): run 'make images'")


class Executor:
    """One sandgate-executor (sanitizer build) on a free loopback port."""

    def __init__(self, language="python", pool_size=2, extra=(), instance=None, wait_idle=True,
                 port=None):
        self.language = language
        self.instance = instance or unique_instance(language)
        self.port = port or sgtest.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = ["--language", language, "--listen", f"127.0.0.1:{self.port}",
                "--instance", self.instance, "--pool-size", str(pool_size)] + list(extra)
        if "--image" not in extra:  # this checkout's images ($SANDGATE_TAG)
            args += ["--image", IMAGES[language]]
        if "--flavour" not in extra:  # heavy flavours only where a test asks (test_pools.py)
            args += ["--flavour", "plain"]
        self.daemon = sgtest.Daemon("sandgate-executor", args, ready_url=self.url + "/healthz",
                                    ready_timeout=90)
        self.pool_size = pool_size
        if wait_idle:
            self.wait_idle(pool_size)

    def health(self):
        return sgtest.http("GET", self.url + "/healthz", timeout=10)

    def wait_idle(self, n, timeout=60):
        deadline = time.time() + timeout
        body = None
        while time.time() < deadline:
            _, _, body = self.health()
            if isinstance(body, dict) and body["pool"]["idle"] >= n:
                return body
            time.sleep(0.1)
        raise AssertionError(f"pool never reached {n} idle: {body}\n{self.daemon.tail()}")

    def run(self, code, timeout=60, headers=None, **fields):
        body = {"language": self.language, "code": code}
        body.update(fields)
        return sgtest.http("POST", self.url + "/v1/exec", body, headers=headers, timeout=timeout)

    def ok(self, code, **fields):
        status, _, body = self.run(code, **fields)
        assert status == 200, (status, body)
        return body

    def stop(self, sig=signal.SIGTERM, timeout=60):
        return self.daemon.stop(sig, timeout)

    def containers(self):
        return sgtest.containers_with_label(f"org.sandgate.executor={self.instance}")


def stop_gateway_and_executors(gw, executors):
    """Stops a gateway, then its executors (each must exit 0); returns the
    gateway's exit status and the containers the executors left behind."""
    rc = gw.stop()
    left = []
    for ex in executors:
        assert ex.stop() == 0, ex.daemon.tail()
        left += ex.containers()
    return rc, left


def stop_clean(gw, executors, then=None):
    """stop_gateway_and_executors, then `then()` (cleanup that must run
    either way), then assert a clean exit and no container left behind."""
    try:
        rc, left = stop_gateway_and_executors(gw, executors)
    finally:
        if then:
            then()
    assert rc == 0, f"gateway exited with {rc}"
    assert left == [], f"containers left behind: {left}"


class ExecutorCase(unittest.TestCase):
    """A class-wide executor; asserts a clean stop and no container left."""
    language = "python"
    pool_size = 2
    extra = ()

    @classmethod
    def setUpClass(cls):
        require_engine_and_images()
        cls.ex = Executor(cls.language, cls.pool_size, cls.extra)

    @classmethod
    def tearDownClass(cls):
        rc = cls.ex.stop()
        left = cls.ex.containers()
        assert rc == 0, f"executor exited with {rc}: {cls.ex.daemon.tail()}"
        assert left == [], f"containers left behind: {left}"


class PythonJobs(ExecutorCase):
    extra = ("--max-timeout-ms", "20000")

    def test_hello_world_dict_result(self):
        r = self.ex.ok("def main():\n    return {'hello': 'world', 'n': 1}\n")
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["exit_code"], 0)
        self.assertEqual(r["result"], {"present": True, "value": {"hello": "world", "n": 1},
                                       "type": "json"})
        self.assertIsNone(r["detail"])
        self.assertGreater(r["time_used_ms"], 0)
        self.assertIsInstance(r["memory_used_kb"], int)

    def test_stdout_and_result_kept_apart(self):
        r = self.ex.ok("import sys\ndef main():\n    print('printed')\n"
                       "    print('to stderr', file=sys.stderr)\n    return 42\n")
        self.assertEqual(r["stdout"], "printed\n")
        self.assertEqual(r["stderr"], "to stderr\n")
        self.assertEqual(r["result"]["value"], 42)

    def test_arguments_passed(self):
        r = self.ex.ok("def main(a, b=0, **rest):\n    return {'sum': a + b, 'rest': rest}\n",
                       arguments={"a": 2, "b": 40, "c": [1, {"d": None}]})
        self.assertEqual(r["result"]["value"], {"sum": 42, "rest": {"c": [1, {"d": None}]}})

    def test_async_main(self):
        r = self.ex.ok("import asyncio\nasync def main(x):\n    await asyncio.sleep(0.01)\n"
                       "    return x * 2\n", arguments={"x": 21})
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["result"]["value"], 42)

    def test_pandas_import(self):
        r = self.ex.ok("import pandas as pd\ndef main():\n"
                       "    return int(pd.DataFrame({'a': [1, 2, 3]})['a'].sum())\n")
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["result"]["value"], 6)

    def test_artifacts_round_trip(self):
        data = b"col\n1\n2\n\xff\x00binary"
        code = ("import os\ndef main():\n    raw = open('data.bin', 'rb').read()\n"
                "    os.makedirs('artifacts', exist_ok=True)\n"
                "    open('artifacts/copy.txt', 'wb').write(raw[::-1])\n    return len(raw)\n")
        r = self.ex.ok(code, files={"data.bin": base64.b64encode(data).decode()})
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["result"]["value"], len(data))
        arts = {a["name"]: a for a in r["artifacts"]}
        self.assertIn("copy.txt", arts, r["artifacts"])
        self.assertEqual(base64.b64decode(arts["copy.txt"]["content_b64"]), data[::-1])
        self.assertEqual(arts["copy.txt"]["size"], len(data))

    def test_infinite_loop_hits_time_limit(self):
        t0 = time.time()
        r = self.ex.ok("def main():\n    while True:\n        pass\n", limits={"timeout_ms": 2000})
        elapsed = time.time() - t0
        self.assertEqual(r["status"], "resource_limit_exceeded", r)
        self.assertEqual(r["resource_limit_type"], "time")
        self.assertEqual(r["exit_code"], -124)
        self.assertGreaterEqual(elapsed, 1.9)
        self.assertLess(elapsed, 2.0 + 1.5 + 0.5, "the executor's own deadline is 1.5 s later")

    def test_memory_limit(self):
        r = self.ex.ok("def main():\n    x = bytearray(300 * 1024 * 1024)\n"
                       "    for i in range(0, len(x), 4096):\n        x[i] = 1\n    return len(x)\n")
        if r["status"] == "program_error":
            # runsc leaves some OOM kills unflagged: then only a SIGKILL is
            # known, and the answer says so rather than claim memory
            self.assertEqual((r["exit_code"], r["runtime_error_type"]), (-9, "signalled"), r)
            self.assertIn("no out-of-memory kill", r["detail"])
            return
        self.assertEqual(r["status"], "resource_limit_exceeded", r)
        self.assertEqual(r["resource_limit_type"], "memory")
        self.assertEqual(r["exit_code"], -137)

    def test_fork_bomb_contained(self):
        r = self.ex.ok("import os\ndef main():\n    while True:\n        try:\n"
                       "            os.fork()\n        except OSError:\n            pass\n",
                       limits={"timeout_ms": 5000})
        self.assertEqual(r["status"], "resource_limit_exceeded", r)
        # memory: each process inherits the extension modules the split
        # image's runner maps before the job (images/python/isolation.py), so
        # the container's memory may run out before its pids do.
        self.assertIn(r["resource_limit_type"], ("pids", "time", "memory"), r)
        # The executor and the pool are unharmed.
        self.assertEqual(self.ex.ok("def main():\n    return 1\n")["result"]["value"], 1)

    def test_output_cap(self):
        r = self.ex.ok("import sys\ndef main():\n    s = 'x' * (1 << 20)\n"
                       "    for _ in range(50):\n        sys.stdout.write(s)\n")
        self.assertEqual(r["status"], "resource_limit_exceeded", r)
        self.assertEqual(r["resource_limit_type"], "output")
        self.assertEqual(r["exit_code"], -125)
        self.assertLessEqual(len(r["stdout"]), 1 << 20)

    def test_write_outside_workspace_fails(self):
        for path in ("/etc/sandgate-x", "/usr/sandgate-x", "/sandgate-x"):
            r = self.ex.ok(f"def main():\n    open({path!r}, 'w').write('x')\n")
            self.assertEqual(r["status"], "program_error", r)
            self.assertRegex(r["stderr"], "(PermissionError|OSError|Read-only)")

    def test_only_loopback_interface(self):
        r = self.ex.ok("import socket, os\ndef main():\n"
                       "    return {'ifs': sorted(n for _, n in socket.if_nameindex()),\n"
                       "            'sys': sorted(os.listdir('/sys/class/net')) "
                       "if os.path.isdir('/sys/class/net') else None}\n")
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["result"]["value"]["ifs"], ["lo"])
        self.assertIn(r["result"]["value"]["sys"], (None, [], ["lo"]))

    def test_no_state_between_jobs(self):
        w = self.ex.ok("def main():\n    open('/workspace/secret.txt', 'w').write('s')\n"
                       "    open('/tmp/secret.txt', 'w').write('s')\n    return 'written'\n")
        self.assertEqual(w["result"]["value"], "written", w)
        r = self.ex.ok("import os\ndef main():\n    return [os.path.exists('/workspace/secret.txt'),"
                       " os.path.exists('/tmp/secret.txt')]\n")
        self.assertEqual(r["result"]["value"], [False, False], r)

    def test_runs_as_nobody_without_capabilities(self):
        r = self.ex.ok("import os\ndef main():\n    caps = [l for l in open('/proc/self/status')"
                       " if l.startswith('CapEff')]\n    return [os.getuid(), caps[0].split()[1]]\n")
        self.assertEqual(r["result"]["value"], [65534, "0000000000000000"], r)

    def test_limits_clamped_and_reported(self):
        r = self.ex.ok("def main():\n    return 1\n",
                       limits={"timeout_ms": 10 ** 9, "memory_mb": 10 ** 6, "max_output_bytes": 100})
        self.assertEqual(sorted(r["clamped"]), ["memory_mb", "timeout_ms"])
        self.assertEqual(r["limits"], {"timeout_ms": 20000, "memory_mb": 256,
                                       "max_output_bytes": 100})

    def test_job_id_echoed(self):
        r = self.ex.ok("def main():\n    return 1\n", job_id="job-42.a_b")
        self.assertEqual(r["job_id"], "job-42.a_b")

    def test_bad_requests_are_400(self):
        url = self.ex.url + "/v1/exec"
        cases = [b"{not json", {"code": 5}, {"code": "x", "language": "nodejs"},
                 {"code": "x", "job_id": "a/b"}, {"code": "x", "files": {"../x": ""}},
                 {"code": "x", "files": {".hidden": ""}}, {"code": "x", "files": {"a": "@@"}},
                 {"code": "x", "arguments": [1]}, {"code": "x", "limits": {"timeout_ms": -1}},
                 {"code": "x", "limits": {"cpu": 1}}]
        for body in cases:
            status, _, resp = sgtest.http("POST", url, body)
            self.assertEqual(status, 400, (body, resp))
            self.assertEqual(resp["error"]["code"], "bad_request")
        self.assertEqual(sgtest.http("GET", url)[0], 405)
        self.assertEqual(sgtest.http("GET", self.ex.url + "/nope")[0], 404)

    def test_no_fd_leak_per_job(self):
        def quiet_fds():
            wait = time.time() + 30
            while time.time() < wait:
                _, _, h = self.ex.health()
                p = h["pool"]
                if p["idle"] == p["target"] and not p["creating"] and not p["tearing_down"]:
                    return len(os.listdir(f"/proc/{self.ex.daemon.proc.pid}/fd"))
                time.sleep(0.1)
            raise AssertionError(f"pool never settled: {h}")
        # One descriptor may come and go with a connection being closed, so
        # compare counts a batch of jobs apart: a per-job leak grows with the
        # batch (12 jobs), jitter does not.
        before = quiet_fds()
        for i in range(12):
            self.ex.ok(f"def main():\n    return {i}\n")
        self.ex.ok("def main():\n    while True:\n        pass\n", limits={"timeout_ms": 300})
        after = quiet_fds()
        self.assertLessEqual(abs(after - before), 2, f"fds {before} -> {after} over 13 jobs")

    def test_nul_in_output_and_result(self):
        # The runner escapes NUL as \\u0000; the executor must still take the line.
        r = self.ex.ok("import sys\ndef main():\n    sys.stdout.write('a\\x00b')\n"
                       "    return 'x\\x00y'\n")
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["stdout"], "a\x00b")
        self.assertEqual(r["result"]["value"], "x\x00y")

    def test_healthz_and_metrics(self):
        self.ex.ok("def main():\n    return 1\n")
        status, _, h = self.ex.health()
        self.assertEqual(status, 200)
        self.assertEqual(h["status"], "ok")
        self.assertEqual(h["docker"], "reachable")
        self.assertEqual(h["runtime"], "runsc")
        self.assertEqual(h["pool"]["target"], 2)
        status, hdrs, text = sgtest.http("GET", self.ex.url + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn("text/plain", hdrs["content-type"])
        line = [l for l in text.splitlines()
                if l.startswith('sandgate_executor_jobs_total{status="success"}')][0]
        self.assertGreaterEqual(int(line.split()[-1]), 1)
        for name in ("sandgate_executor_pool_idle", "sandgate_executor_job_duration_seconds_bucket",
                     "sandgate_executor_container_create_seconds_count"):
            self.assertIn(name, text)


    def test_plain_sandboxes_are_idle_only_once_their_runner_is_ready(self):
        # A plain pool's sandbox (no pre-import) still sets its runner up
        # after the container starts (the identity split, the job's view,
        # the native preload: ~0.3 s of CPU); counted idle before the
        # runner's ready line, the job given it waited for that on its own
        # clock (hundreds of ms). Every launch is held back until the line:
        # each one's wait for it is timed.
        self.ex.ok("def main():\n    return 1\n")
        self.ex.wait_idle(2)
        _, _, text = sgtest.http("GET", self.ex.url + "/metrics")

        def value(prefix):
            line = [l for l in text.splitlines() if l.startswith(prefix)][0]
            return float(line.split()[-1])
        launches = value("sandgate_executor_container_create_seconds_count")
        self.assertGreaterEqual(launches, 3, "two at start and one refill")
        self.assertEqual(value("sandgate_executor_sandbox_phase_launches_total"), launches,
                         "every plain launch waited for its runner's ready line")
        self.assertGreater(value('sandgate_executor_sandbox_phase_seconds_total{phase="ready"}'), 0)


class NodeJobs(ExecutorCase):
    language = "nodejs"
    pool_size = 1

    def test_hello_world_and_arguments(self):
        r = self.ex.ok("function main(args) {\n  console.log('hi');\n"
                       "  return {hello: 'world', x: args.x};\n}\n", arguments={"x": 3})
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["stdout"], "hi\n")
        self.assertEqual(r["result"]["value"], {"hello": "world", "x": 3})

    def test_async_main(self):
        r = self.ex.ok("async function main(args) {\n"
                       "  await new Promise(r => setTimeout(r, 10));\n  return args.x * 2;\n}\n",
                       arguments={"x": 21})
        self.assertEqual(r["result"]["value"], 42, r)

    def test_exception_is_program_error(self):
        r = self.ex.ok("function main() { throw new Error('boom'); }\n")
        self.assertEqual(r["status"], "program_error", r)
        self.assertEqual(r["exit_code"], 1)
        self.assertIn("boom", r["stderr"] + (r["detail"] or ""))


class PoolBusyAndToken(unittest.TestCase):
    def test_pool_busy_is_bounded_and_clear(self):
        require_engine_and_images()
        ex = Executor("python", 1, ("--pool-wait-ms", "50", "--create-parallel", "1"))
        try:
            slow = {}
            t = threading.Thread(target=lambda: slow.update(r=ex.run(
                "import time\ndef main():\n    time.sleep(2)\n    return 'slow'\n")))
            t.start()
            time.sleep(0.3)
            # The slow job holds the one sandbox. Four quick jobs arrive at
            # once: the pool holds at most one idle sandbox and makes one at
            # a time (hundreds of ms each), so at most one or two of them can
            # get a sandbox within their 50 ms wait and the rest must be told
            # the pool is busy. (Sequential jobs raced the refill: on a fast
            # machine every refill landed while the previous job ran.)
            answers = []
            lock = threading.Lock()

            def quick():
                t0 = time.time()
                status, _, body = ex.run("def main():\n    return 1\n")
                with lock:
                    answers.append((status, time.time() - t0, body))

            quicks = [threading.Thread(target=quick) for _ in range(4)]
            for q in quicks:
                q.start()
            for q in quicks:
                q.join(60)
            busy = None
            for status, elapsed, body in answers:
                if status == 503:
                    busy = busy or (elapsed, body)
                else:
                    self.assertEqual(status, 200, body)
            self.assertIsNotNone(busy, "no request ever found the pool busy")
            elapsed, body = busy
            self.assertLess(elapsed, 1.0, "the wait for a sandbox is bounded")
            self.assertEqual(body["error"]["code"], "pool_busy")
            self.assertEqual(body["status"], "program_runner_error")
            self.assertEqual(body["detail"], "pool_busy")
            self.assertEqual(body["exit_code"], -3)
            t.join(30)
            self.assertEqual(slow["r"][2]["result"]["value"], "slow")
        finally:
            self.assertEqual(ex.stop(), 0)
            self.assertEqual(ex.containers(), [])

    def test_token_required(self):
        require_engine_and_images()
        path = os.path.join(sgtest.LOG_DIR, f"token-{os.getpid()}")
        os.makedirs(sgtest.LOG_DIR, exist_ok=True)
        with open(path, "w") as f:
            f.write("s3cret-token\n")
        ex = Executor("python", 1, ("--token-file", path))
        try:
            code = "def main():\n    return 1\n"
            self.assertEqual(ex.run(code)[0], 401)
            self.assertEqual(ex.run(code, headers={"Authorization": "Bearer wrong"})[0], 401)
            status, _, body = ex.run(code, headers={"Authorization": "Bearer s3cret-token"})
            self.assertEqual(status, 200, body)
            self.assertEqual(body["result"]["value"], 1)
        finally:
            os.unlink(path)
            self.assertEqual(ex.stop(), 0)
            self.assertEqual(ex.containers(), [])


if __name__ == "__main__":
    unittest.main()
