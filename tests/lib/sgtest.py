"""sgtest - the small shared harness for sandgate's Python test suites.

Run a suite:   python3 tests/lib/sgtest.py tests/e2e
It discovers test_*.py in the directory, runs them with unittest and ends with
"suite DIR: N passed, N failed". Helpers for tests: HTTP calls, free ports,
starting and stopping the real binaries (sanitizer reports fail the test),
and making sure a Docker engine with runsc is there (never a silent skip).
"""
import http.client as httpclient  # `http` is the helper below
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("SANDGATE_BUILD", "build/asan")
LOG_DIR = os.path.join(ROOT, "build", "test-logs")


def binary(name):
    """Path of a built binary (sanitizer build by default)."""
    path = os.path.join(ROOT, BUILD, name)
    if not os.path.exists(path):
        raise AssertionError(f"{path} is not built: run 'make SAN=1 test-bins'")
    return path


def image(name):
    """The image sandgate builds as `name` (python, nodejs, gateway, executor, egress),
    at $SANDGATE_TAG (default latest), as images/build-images.sh tags it. A
    separate tag lets two checkouts build and test their own images side by side."""
    repo = {"python": "sandgate/sandbox-python", "nodejs": "sandgate/sandbox-nodejs",
            "gateway": "sandgate/gateway", "executor": "sandgate/executor",
            "egress": "sandgate/egress"}[name]
    return f"{repo}:{os.environ.get('SANDGATE_TAG') or 'latest'}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=30):
    """One HTTP request to a loopback URL. Returns (status, headers, json-or-text)."""
    assert url.startswith("http://127.") or url.startswith("http://[::1]") or \
        url.startswith("http://localhost"), "tests only talk to loopback"
    rest = url.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    conn = httpclient.HTTPConnection(host, int(port), timeout=timeout)
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        hdrs.setdefault("Content-Type", "application/json")
    conn.request(method, "/" + path, body=data, headers=hdrs)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = raw.decode("utf-8", "replace")
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, payload


def check_print_sleep_print(test, s):
    """The checks of a streamed answer to a program that prints "first",
    sleeps 1 s, prints "second" and returns 7: 200 as an event stream, one
    final result event at least 0.8 s after the first stdout event, the
    stdout events adding up to the output, the result naming the request id.
    Closes s; returns (first stdout time, result time, the result body)."""
    test.assertEqual(s.status, 200)
    test.assertTrue(s.headers["content-type"].startswith("text/event-stream"), s.headers)
    events = [(t, name, data) for t, name, data in s.events() if name]
    s.close()
    first = next(t for t, name, _ in events if name == "stdout")
    t_result, name, result = events[-1]
    test.assertEqual(name, "result")
    test.assertEqual([n for _, n, _ in events].count("result"), 1)
    test.assertGreaterEqual(t_result - first, 0.8, events)
    test.assertEqual("".join(d["text"] for _, n, d in events if n == "stdout"),
                     "first\nsecond\n")
    test.assertEqual((result["status"], result["stdout"], result["result"]["value"]),
                     ("success", "first\nsecond\n", 7), result)
    test.assertEqual(result["job_id"], s.headers["x-request-id"])
    return first, t_result, result


class SSE:
    """A streamed request (Server-Sent Events) to a loopback URL: status and
    headers at once, then events one by one as (seconds since the request,
    event name or None for a comment, data parsed as JSON or None)."""

    def __init__(self, url, body, headers=None, timeout=60):
        assert url.startswith("http://127."), "tests only talk to loopback"
        hostport, _, path = url.split("://", 1)[1].partition("/")
        host, _, port = hostport.rpartition(":")
        self.t0 = time.monotonic()
        self.conn = httpclient.HTTPConnection(host, int(port), timeout=timeout)
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        self.conn.request("POST", "/" + path, body=json.dumps(body), headers=hdrs)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.headers = {k.lower(): v for k, v in self.resp.getheaders()}

    def events(self):
        name, data = None, None
        while True:
            line = self.resp.readline()
            if not line:
                return
            line = line.decode("utf-8").rstrip("\n")
            if line.startswith(":"):
                yield time.monotonic() - self.t0, None, None
            elif line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: "):])
            elif line == "" and data is not None:
                yield time.monotonic() - self.t0, name, data
                name, data = None, None

    def body(self):
        return json.loads(self.resp.read())

    def close(self):
        """Hang up at once (the socket, not just the response object)."""
        sock = self.conn.sock
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


class Daemon:
    """A real binary started for a test. Its stderr goes to a log file; on stop
    the log is checked for sanitizer reports, which fail the test."""

    def __init__(self, name, args, env=None, ready_url=None, ready_timeout=30):
        os.makedirs(LOG_DIR, exist_ok=True)
        self.name = name
        self.log_path = os.path.join(LOG_DIR, f"{name}-{os.getpid()}-{int(time.time()*1000)}.log")
        self.log = open(self.log_path, "wb")
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen([binary(name)] + list(args), stdout=self.log,
                                     stderr=subprocess.STDOUT, env=full_env)
        if ready_url:
            self.wait_ready(ready_url, ready_timeout)

    def wait_ready(self, url, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}: {self.tail()}")
            try:
                status, _, _ = http("GET", url, timeout=2)
                if status < 500:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.name} not ready at {url} after {timeout}s: {self.tail()}")

    def tail(self, n=4000):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read()[-n:].decode("utf-8", "replace")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=None, timeout=30):
        """Stop the daemon (SIGTERM unless sig); returns its exit code. Fails
        on sanitizer reports."""
        # In the class body `signal` is the method above, not the module.
        sig = signal.SIGTERM if sig is None else sig
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"{self.name} did not exit within {timeout}s of {sig}")
        self.log.close()
        text = self.tail(200000)
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            if marker in text:
                raise AssertionError(f"{self.name}: sanitizer report in {self.log_path}:\n{text[-4000:]}")
        if self.proc.returncode < 0 and self.proc.returncode != -sig:
            # Died of a signal nobody sent (an abort, a crash): the log goes
            # with the test's clone, so its end goes to the test's output.
            sys.stderr.write(f"\n{self.name} died of signal {-self.proc.returncode}; "
                             f"the end of {self.log_path}:\n{text[-4000:]}\n")
        return self.proc.returncode


# What an executor gives a sandbox image's containers (executors/sandbox.h):
# an image labelled org.sandgate.identity=split starts its runner as uid 0
# with these capabilities only (the runner drops the job to 65534 in its own
# view); any other image runs as 65534 with none.
SPLIT_CAPS = ("SETUID", "SETGID", "SETPCAP", "SYS_ADMIN", "KILL")


def sandbox_identity_args(image):
    """`docker run` arguments for the sandbox's user and capabilities, as the
    executor chooses them from the image's label."""
    r = subprocess.run(["docker", "image", "inspect", "-f",
                        '{{index .Config.Labels "org.sandgate.identity"}}', image],
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 0 and r.stdout.strip() == "split":
        return ["--user", "0:0", "--cap-drop", "ALL"] + \
            [a for c in SPLIT_CAPS for a in ("--cap-add", c)]
    return ["--user", "65534:65534", "--cap-drop", "ALL"]


def ensure_docker():
    """Make sure dockerd with runsc is up (installing/starting it as root if
    needed). Raises, loudly, when it cannot: a test that needs the engine must
    fail, not skip."""
    r = subprocess.run([os.path.join(ROOT, "images", "host-setup.sh"), "--fix"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("no usable Docker engine with runsc:\n" + r.stdout + r.stderr)


def docker_api(method, path, body=None, timeout=30):
    """A Docker Engine API call over the unix socket (for test assertions)."""
    class UnixConn(httpclient.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect("/var/run/docker.sock")
    conn = UnixConn("localhost", timeout=timeout)
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    try:
        return resp.status, json.loads(raw) if raw else None
    except ValueError:
        return resp.status, raw.decode("utf-8", "replace")


def containers_with_label(label):
    """Ids of all containers (any state) carrying label (key or key=value)."""
    flt = json.dumps({"label": [label]})
    from urllib.parse import quote
    status, body = docker_api("GET", "/containers/json?all=1&filters=" + quote(flt))
    assert status == 200, body
    return [c["Id"] for c in body]


def npm_ci_once(where):
    """`npm ci` in where (its package.json and package-lock.json copied there)
    once per lock file: a changed lock installs again. Needs the npm registry
    the first time."""
    with open(os.path.join(where, "package-lock.json"), "rb") as f:
        lock = f.read()
    stamp = os.path.join(where, "installed.lock")
    installed = None
    if os.path.exists(stamp):
        with open(stamp, "rb") as f:
            installed = f.read()
    if installed == lock:
        return
    r = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=where,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("npm ci failed: " + (r.stdout + r.stderr)[-3000:])
    with open(stamp, "wb") as f:
        f.write(lock)


class Result(unittest.TextTestResult):
    pass


def main(directory):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.abspath(directory))
    os.chdir(ROOT)
    suite = unittest.defaultTestLoader.discover(os.path.abspath(directory), pattern="test_*.py",
                                                top_level_dir=os.path.abspath(directory))
    runner = unittest.TextTestRunner(verbosity=2, stream=sys.stdout, resultclass=Result)
    result = runner.run(suite)
    bad = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    good = result.testsRun - bad - len(result.skipped)
    # A skip is reported as a failure: suites must not skip silently.
    bad += len(result.skipped)
    print(f"suite {directory}: {good} passed, {bad} failed", flush=True)
    return 0 if bad == 0 and good > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests"))
