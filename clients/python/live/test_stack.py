"""The Python client against a running sandgate (gateway, executors, dockerd +
runsc): tests/e2e/test_clients.py starts one and runs this with
SANDGATE_URL, SANDGATE_TOKEN, SANDGATE_TEST_LIMITED_TOKEN (a tenant with a
tiny rate) and SANDGATE_TEST_AUDIT_LOG (the gateway's audit log) set."""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
import sandgate  # noqa: E402

ENV = {k: os.environ.get(k) for k in ("SANDGATE_URL", "SANDGATE_TOKEN",
                                      "SANDGATE_TEST_LIMITED_TOKEN", "SANDGATE_TEST_AUDIT_LOG")}
PRINT_SLEEP_PRINT = ("import time\n\ndef main():\n    print('first')\n    time.sleep(1)\n"
                     "    print('second')\n    return 7\n")
LONG = "import time\n\ndef main():\n    print('started')\n    time.sleep(30)\n"


def audit_outcome(job_id, timeout=10.0):
    """The outcome the gateway's audit log records for job_id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(ENV["SANDGATE_TEST_AUDIT_LOG"]) as f:
            for line in f:
                a = json.loads(line)
                if a.get("request_id") == job_id:
                    return a.get("outcome")
        time.sleep(0.05)
    raise AssertionError(f"no audit line for job {job_id}")


class Stack(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [k for k, v in ENV.items() if not v]
        if missing:
            raise AssertionError(f"not set: {missing} (tests/e2e/test_clients.py sets them)")
        cls.c = sandgate.Client()

    def test_a_job(self):
        r = self.c.run("def main(a, b):\n    print('adding')\n    return {'sum': a + b}\n",
                       arguments={"a": 2, "b": 3}, files={"in.txt": b"x"})
        self.assertEqual((r.status, r.ok, r.value, r.stdout), ("success", True, {"sum": 5},
                                                               "adding\n"), r)
        self.assertEqual(len(r.job_id), 16)
        self.assertIn("total_ms", r.timings)

    def test_artifacts_come_back_as_bytes(self):
        r = self.c.run("def main():\n    open('artifacts/out.csv', 'wb').write(b'a,b\\n0,\\xff\\n')\n")
        self.assertEqual([(a.name, a.data) for a in r.artifacts], [("out.csv", b"a,b\n0,\xff\n")], r)

    def test_a_rejection_raises_policy_violation_with_rule_and_line(self):
        with self.assertRaises(sandgate.PolicyViolation) as cm:
            self.c.run("x = 1\nimport subprocess\n\ndef main():\n    return 1\n")
        v = cm.exception.violations[0]
        self.assertEqual((v.rule, v.line), ("import.not-allowed", 2), v)
        a = self.c.analyze("import subprocess\n")
        self.assertEqual((a.accepted, a.violations[0].rule), (False, "import.not-allowed"))

    def test_first_stdout_arrives_before_the_job_ends(self):
        t0 = time.monotonic()
        seen = []
        with self.c.stream(PRINT_SLEEP_PRINT) as s:
            for ev in s:
                seen.append((time.monotonic() - t0, ev))
        first = next(t for t, ev in seen if isinstance(ev, sandgate.Stdout))
        t_end, last = seen[-1]
        self.assertIsInstance(last, sandgate.Result)
        self.assertGreaterEqual(t_end - first, 0.8, seen)
        self.assertEqual("".join(ev.text for _, ev in seen if isinstance(ev, sandgate.Stdout)),
                         "first\nsecond\n")
        self.assertEqual((last.result.value, last.result.job_id), (7, s.job_id))

    def test_cancel(self):
        s = self.c.stream(LONG)
        self.assertEqual(next(s), sandgate.Stdout("started\n"))
        self.c.cancel(s.job_id)
        r = s.wait()
        self.assertEqual((r.status, r.exit_code), ("cancelled", -130), r)
        with self.assertRaises(sandgate.JobEnded):
            self.c.cancel(s.job_id)
        with self.assertRaises(sandgate.JobNotFound):
            self.c.cancel("0123456789abcdef")

    def test_a_stream_closed_early_cancels_the_job(self):
        t0 = time.monotonic()
        with self.c.stream(LONG) as s:
            for ev in s:
                self.assertEqual(ev, sandgate.Stdout("started\n"))
                break
        self.assertIn(audit_outcome(s.job_id), ("cancelled", "client_gone"))
        self.assertLess(time.monotonic() - t0, 20, "the job did not run its 30 s")

    def test_a_session_keeps_state_and_files(self):
        with self.c.session() as s:
            self.assertTrue(s.id.startswith("py-"))
            s.exec("x = 41")
            self.assertEqual(s.exec("x + 1").value, 42)
            s.upload("data.csv", b"a,b\n1,2\n")
            r = s.exec("rows = open('data.csv').read().splitlines()\n"
                       "open('out.txt', 'w').write(str(len(rows)))\nlen(rows)")
            self.assertEqual(r.value, 2)
            self.assertEqual(s.download("data.csv"), b"a,b\n1,2\n")
            self.assertEqual(s.download("out.txt"), b"2")
            self.assertIn(sandgate.FileInfo("data.csv", 8), s.files())
            with self.assertRaises(sandgate.FileNotFound):
                s.download("nothing.txt")
            with self.assertRaises(sandgate.PolicyViolation):
                s.exec("import subprocess")
            pieces = [ev for ev in s.exec_stream("print(x)\nx * 2")]
            self.assertEqual((pieces[0], pieces[-1].result.value), (sandgate.Stdout("41\n"), 82))
            self.assertFalse(s.interrupt())
        self.assertTrue(s.closed)
        with self.assertRaises(sandgate.SessionNotFound):
            s.exec("x")

    def test_a_session_stream_closed_early_interrupts_the_cell(self):
        with self.c.session() as s:
            s.exec("kept = 'yes'")
            t0 = time.monotonic()
            with s.exec_stream("import time\nprint('started')\ntime.sleep(30)") as st:
                self.assertEqual(next(st), sandgate.Stdout("started\n"))
            self.assertEqual(s.exec("kept").value, "yes")
            self.assertLess(time.monotonic() - t0, 20, "the cell did not run its 30 s")

    def test_429_surfaces_retry_after(self):
        limited = sandgate.Client(token=ENV["SANDGATE_TEST_LIMITED_TOKEN"], retries=0)
        with self.assertRaises(sandgate.RateLimited) as cm:
            for _ in range(5):
                limited.analyze("x = 1\n")
        self.assertEqual(cm.exception.code, "rate_limited")
        self.assertGreater(cm.exception.retry_after, 0)

    def test_unauthorized(self):
        with self.assertRaises(sandgate.Unauthorized):
            sandgate.Client(token="not-a-token-of-any-tenant-000000").whoami()

    def test_whoami_and_runtimes(self):
        self.assertEqual(self.c.whoami()["tenant"]["identified_by"], "token")
        self.assertTrue(self.c.runtimes()["runtimes"]["python"]["available"])


if __name__ == "__main__":
    unittest.main()
