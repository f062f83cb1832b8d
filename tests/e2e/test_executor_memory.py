"""sandgate-executor's memory budget end to end (dockerd + runsc): a job is
reserved in the budget before it takes a sandbox (its body and the copies
the executor makes of it); one that does not fit is refused 503 memory_busy
at once, never run. A running job's result line is reserved as it grows: a
result the budget cannot hold ends the job as output over its limit. A
session file download is reserved whole before it is asked for: 503
memory_busy, the session untouched. The executor goes on serving what
fits. The figures are in /healthz and /metrics; a budget under the minimum
stops the executor at start. A job at every cap (body, files, code,
arguments, artifacts) succeeds within the shipped budget with its artifacts
byte-identical (it prints the executor's peak RSS before and after)."""
import base64
import hashlib
import json
import os
import re
import socket
import sys
import time
import unittest

import sgtest
import test_executor as tex  # module import: its tests are not re-collected
from test_executor_robust import run_executor_once

MIB = 1 << 20
BUDGET = 8 * MIB
HELLO = "def main():\n    return 1\n"
FILES_CODE = ("import os\n\ndef main():\n"
              "    return os.path.getsize('big.bin')\n")
# 2.5 MiB of input: about 3.4 MB of body, held by the server, and the job
# needs 256 KiB + 2 x body (its input) + 1 MiB (the output cap) more: over
# 8 MiB.
BIG = {"big.bin": base64.b64encode(os.urandom(5 * MIB // 2)).decode()}
# 900 KB of control characters on stdout (within the 1 MiB cap): JSON-escaped
# six times in the result line, whose buffer would grow to 8 MiB, 16 MiB
# reserved (the line and its parsed copy): the budget refuses it
BIG_RESULT = ("import sys\n\ndef main():\n    sys.stdout.write('\\x01' * 900000)\n"
              "    return 1\n")


class ExecutorBudget(tex.ExecutorCase):
    pool_size = 1
    extra = ("--memory-budget", str(BUDGET))

    def refused(self):
        _, _, text = sgtest.http("GET", self.ex.url + "/metrics")
        m = re.search(r"^sandgate_executor_daemon_memory_refused_total (\d+)$", text, re.M)
        self.assertTrue(m, "the refusals are in /metrics")
        return int(m.group(1))

    def test_a_job_over_the_budget_is_refused_busy_and_service_goes_on(self):
        before = self.refused()
        st, hdrs, body = self.ex.run(FILES_CODE, files=BIG)
        self.assertEqual(st, 503, body)
        self.assertEqual(body["error"]["code"], "memory_busy", body)
        self.assertEqual(body["status"], "program_runner_error", body)
        self.assertEqual(self.refused(), before + 1)
        r = self.ex.ok(BIG_RESULT)  # it runs, but its result cannot be held
        self.assertEqual((r["status"], r["resource_limit_type"]),
                         ("resource_limit_exceeded", "output"), {k: r[k] for k in r if k != "stdout"})
        self.assertEqual(self.refused(), before + 2)
        r = self.ex.ok(HELLO)
        self.assertEqual(r["status"], "success", r)
        _, _, h = self.ex.health()
        self.assertEqual(h["daemon_memory"]["budget_bytes"], BUDGET, h)
        self.assertEqual(h["daemon_memory"]["used_bytes"], 0, h)
        self.assertLessEqual(h["daemon_memory"]["peak_bytes"], BUDGET, h)
        self.assertGreater(h["daemon_memory"]["peak_bytes"], 4 * MIB, h)

    def test_an_answer_stays_reserved_until_its_client_takes_it(self):
        # 2 MB of output: its answer waits in the server while the client
        # does not read; that much stays counted, then is released.
        code = "import sys\n\ndef main():\n    sys.stdout.write('x' * 900000)\n    return 1\n"
        body = json.dumps({"language": "python", "code": code}).encode()
        host, port = self.ex.url.split("://", 1)[1].rsplit(":", 1)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, int(port)))
        s.sendall(b"POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        held = 0
        deadline = time.time() + 30
        while time.time() < deadline and held < 800_000:
            time.sleep(0.2)
            held = self.ex.health()[2]["daemon_memory"]["used_bytes"]
        self.assertGreaterEqual(held, 800_000, "the unread answer is counted")
        got = b""
        s.settimeout(30)
        while chunk := s.recv(1 << 16):
            got += chunk
        s.close()
        self.assertIn(b'"status":"success"', got)
        deadline = time.time() + 10
        while time.time() < deadline and self.ex.health()[2]["daemon_memory"]["used_bytes"]:
            time.sleep(0.1)
        self.assertEqual(self.ex.health()[2]["daemon_memory"]["used_bytes"], 0)

    def test_a_download_the_budget_cannot_hold_is_memory_busy_and_the_session_lives_on(self):
        # a download reserves what the largest one holds (about 29 MiB: its
        # base64 line read and parsed, and the file) before it asks the runner
        t = {"X-Sandgate-Tenant": "t.mem"}
        st, _, s = sgtest.http("POST", self.ex.url + "/v1/sessions", {"language": "python"}, t)
        self.assertEqual(st, 201, s)
        base = f"{self.ex.url}/v1/sessions/{s['session_id']}"
        self.addCleanup(sgtest.http, "DELETE", base, None, t)
        st, _, b = sgtest.http("PUT", base + "/files/a.txt", b"abc", t)
        self.assertEqual(st, 204, b)
        before = self.refused()
        st, hdrs, b = sgtest.http("GET", base + "/files/a.txt", None, t)
        self.assertEqual((st, b["error"]["code"]), (503, "memory_busy"), b)
        self.assertEqual(hdrs.get("retry-after"), "1")
        self.assertEqual(self.refused(), before + 1)
        st, _, b = sgtest.http("POST", base + "/exec", {"code": "open('a.txt').read()"}, t)
        self.assertEqual((st, b["result"]["value"]), (200, "abc"), b)
        _, _, h = self.ex.health()
        self.assertEqual(h["daemon_memory"]["used_bytes"], 0, h)

    def test_a_budget_under_the_minimum_stops_the_executor(self):
        rc, out = run_executor_once(["--language", "python", "--memory-budget", "1048576",
                                     "--listen", f"127.0.0.1:{sgtest.free_port()}"])
        self.assertNotEqual(rc, 0, out)
        self.assertIn("--memory-budget", out)


def shipped_budget():
    """Half the executor's container limit in docker-compose.yml (the share
    membudget.h derives): the budget the shipped executor runs with."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docker-compose.yml")) as f:
        m = re.search(r"\$\{SANDGATE_EXECUTOR_MEMORY:-(\d+)m\}", f.read())
    assert m, "the executor's memory limit is in docker-compose.yml"
    return int(m.group(1)) * MIB // 2


# A job at every cap of a shipped executor: input files at their total cap
# (8 MiB decoded, 10.7 MiB of base64), code (4 MiB) and arguments (1 MiB) at
# theirs: a body of 15.7 MiB, as large as the 16 MiB body cap lets the fields
# be; and the job writes artifacts at their caps (two of 10 MiB: 20 MiB).
FILE_CAP = 8 * MIB
CODE_CAP = 4 * MIB
ARGS_CAP = 1 * MIB
ART_ONE = 10 * MIB
CAPS_CODE = ("import os\n\ndef main(pad):\n"
             "    data = b''.join(open(f'in{i}.bin', 'rb').read() for i in range(4))\n"
             "    art = (data + data)[:%d]\n"
             "    os.makedirs('artifacts', exist_ok=True)\n"
             "    open('artifacts/a.txt', 'wb').write(art)\n"
             "    open('artifacts/b.txt', 'wb').write(art[::-1])\n"
             "    return len(data)\n" % ART_ONE)


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M).group(1))


class ExecutorAtTheCaps(tex.ExecutorCase):
    pool_size = 1
    extra = ("--memory-budget", str(shipped_budget()), "--max-timeout-ms", "20000")

    def test_a_job_at_the_body_and_artifact_caps_succeeds_within_the_shipped_budget(self):
        files = [os.urandom(FILE_CAP // 4) for _ in range(4)]
        data = b"".join(files)
        body_files = {f"in{i}.bin": base64.b64encode(d).decode() for i, d in enumerate(files)}
        pad = "x" * (ARGS_CAP - 64)  # arguments at their cap
        code = CAPS_CODE + "#" * (CODE_CAP - len(CAPS_CODE))  # code at its cap
        before = vm_hwm_kb(self.ex.daemon.proc.pid)
        st, _, r = self.ex.run(code, timeout=60, files=body_files, arguments={"pad": pad},
                               limits={"timeout_ms": 20000})
        after = vm_hwm_kb(self.ex.daemon.proc.pid)
        sys.stderr.write(f"\n[executor VmHWM {before} kB -> {after} kB for one job at the caps]\n")
        self.assertEqual(st, 200, {k: r[k] for k in r if k != "artifacts"} if isinstance(r, dict) else r)
        self.assertEqual(r["status"], "success", {k: r[k] for k in r if k != "artifacts"})
        self.assertEqual(r["result"]["value"], FILE_CAP)
        art = (data + data)[:ART_ONE]
        got = {a["name"]: a for a in r["artifacts"]}
        self.assertEqual(sorted(got), ["a.txt", "b.txt"], r.get("artifacts_skipped"))
        for name, want in (("a.txt", art), ("b.txt", art[::-1])):
            raw = base64.b64decode(got[name]["content_b64"], validate=True)
            self.assertEqual(hashlib.sha256(raw).hexdigest(), hashlib.sha256(want).hexdigest(),
                             name)
        _, _, h = self.ex.health()
        self.assertEqual(h["daemon_memory"]["used_bytes"], 0, h)
        self.assertEqual(h["daemon_memory"]["refused"], 0, h)


if __name__ == "__main__":
    unittest.main()
