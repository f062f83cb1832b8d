"""sandgate-executor's memory budget end to end (dockerd + runsc): a job is
reserved in the budget before it takes a sandbox (its body and the copies
the executor makes of it); one that does not fit is refused 503 memory_busy
at once, never run. A running job's result line is reserved as it grows: a
result the budget cannot hold ends the job as output over its limit. A
session file download is reserved whole before it is asked for: 503
memory_busy, the session untouched. The executor goes on serving what fits. The figures are in /healthz and
/metrics; a budget under the minimum stops the executor at start."""
import base64
import os
import re
import unittest

import sgtest
import test_executor as tex  # module import: its tests are not re-collected
from test_executor_robust import run_executor_once

MIB = 1 << 20
BUDGET = 8 * MIB
HELLO = "def main():\n    return 1\n"
FILES_CODE = ("import os\n\ndef main():\n"
              "    return os.path.getsize('big.bin')\n")
# 1.5 MiB of input: about 2.1 MB of body, held by the server, and the job
# needs 256 KiB + 3 x body + 1 MiB (the output cap) more: over 8 MiB.
BIG = {"big.bin": base64.b64encode(os.urandom(3 * MIB // 2)).decode()}
# 900 KB of control characters on stdout (within the 1 MiB cap): JSON-escaped
# six times in the result line, whose buffer would grow to 8 MiB, 24 MiB
# reserved: the budget refuses it
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


if __name__ == "__main__":
    unittest.main()
