"""Streamed output and cancel end to end: the real gateway (sanitizer build)
in front of real sandgate-executors (python and nodejs) on dockerd + runsc.

POST /v1/run with "stream": true answers with Server-Sent Events while the
program runs; a client that hangs up has its sandbox destroyed; POST
/v1/jobs/{job_id}/cancel stops a job (tenant-scoped, 404 / 409 otherwise).
Few and quick: each test runs one short job."""
import os
import sys
import threading
import time
import unittest

import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)

TOKEN_A = "stream-tenant-a-token-0123456789abcdef"
TOKEN_B = "stream-tenant-b-token-0123456789abcdef"
A = {"Authorization": "Bearer " + TOKEN_A}
B = {"Authorization": "Bearer " + TOKEN_B}

# No flush: a streamed job's stdout is line-buffered, as on a terminal.
PY_PRINT_SLEEP_PRINT = ("import time\n\ndef main():\n    print('first')\n"
                        "    time.sleep(1)\n    print('second')\n    return 7\n")
JS_PRINT_SLEEP_PRINT = ("async function main() {\n  console.log('first');\n"
                        "  await new Promise((r) => setTimeout(r, 1000));\n"
                        "  console.log('second');\n  return 7;\n}\nmodule.exports = { main };\n")
PY_LONG = "import time\n\ndef main():\n    print('started')\n    time.sleep(30)\n"


class StreamE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.py = tex.Executor("python", pool_size=2, extra=("--max-timeout-ms", "60000"))
        try:
            cls.js = tex.Executor("nodejs", pool_size=1)
        except BaseException:
            cls.py.daemon.stop(timeout=60)
            raise
        tenants = {"tenants": {"a": {"tokens": [TOKEN_A]}, "b": {"tokens": [TOKEN_B]}}}
        cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.py.url],
                                                      "nodejs": [cls.js.url]},
                                        "exec_grace_ms": 10000}, tokens=tenants)

    @classmethod
    def tearDownClass(cls):
        rc, left = tex.stop_gateway_and_executors(cls.gw, (cls.py, cls.js))
        assert rc == 0
        assert left == [], f"containers left behind: {left}"

    def stream(self, code, language="python", headers=A, **fields):
        body = {"language": language, "code": code, "stream": True, **fields}
        return sgtest.SSE(self.gw.url + "/v1/run", body, headers=headers, timeout=90)

    def settled(self, ex):
        """The executor's pool is full and nothing is being torn down: the
        containers now are exactly its idle sandboxes."""
        deadline = time.time() + 60
        while time.time() < deadline:
            _, _, h = ex.health()
            if h["pool"]["idle"] >= ex.pool_size and h["pool"]["tearing_down"] == 0 \
                    and h["pool"]["creating"] == 0:
                return set(ex.containers())
            time.sleep(0.05)
        raise AssertionError(f"pool never settled: {h}")

    def wait_one_gone(self, ex, before, timeout=5.0):
        """Seconds until one of the containers in before is gone."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if before - set(ex.containers()):
                return time.monotonic() - t0
            time.sleep(0.02)
        raise AssertionError("no sandbox was destroyed")

    def check_first_output_early(self, code, language):
        first, t_result, _ = sgtest.check_print_sleep_print(self, self.stream(code, language))
        sys.stderr.write(f"[first stdout {first * 1000:.0f} ms, result {t_result * 1000:.0f} ms] ")
        return first, t_result

    def test_python_first_stdout_event_arrives_before_the_end(self):
        self.check_first_output_early(PY_PRINT_SLEEP_PRINT, "python")

    def test_nodejs_first_stdout_event_arrives_before_the_end(self):
        self.check_first_output_early(JS_PRINT_SLEEP_PRINT, "nodejs")

    def check_output_cap(self, code, language):
        """A streamed job past max_output_bytes (the executor's default, 1 MiB:
        its result event is larger than a stream's buffer) ends as the output
        limit, with what was kept streamed first; it was executor_failed."""
        s = self.stream(code, language)
        self.assertEqual(s.status, 200)
        events = [(name, data) for _, name, data in s.events() if name]
        s.close()
        names = [n for n, _ in events]
        self.assertEqual(names[-1], "result", names[-5:])
        body = events[-1][1]
        self.assertEqual((body.get("status"), body.get("resource_limit_type")),
                         ("resource_limit_exceeded", "output"), str(body)[:300])
        streamed = sum(len(d["text"]) for n, d in events if n == "stdout")
        self.assertEqual(streamed, 1024 * 1024)
        self.assertEqual(len(body["stdout"]), 1024 * 1024)

    def test_python_stream_past_the_output_cap_is_the_output_limit(self):
        self.check_output_cap("def main():\n    for _ in range(48):\n"
                              "        print('x' * 65535)\n", "python")

    def test_nodejs_stream_past_the_output_cap_is_the_output_limit(self):
        self.check_output_cap("function main() {\n  for (let i = 0; i < 48; i++)\n"
                              "    console.log('y'.repeat(65535));\n}\n"
                              "module.exports = { main };\n", "nodejs")

    def test_policy_rejection_is_a_single_result_event(self):
        s = self.stream("import subprocess\n\ndef main():\n    return subprocess.run(['id'])\n")
        self.assertEqual(s.status, 200)
        events = [(name, data) for _, name, data in s.events() if name]
        s.close()
        self.assertEqual(len(events), 1, events)
        name, body = events[0]
        self.assertEqual(name, "result")
        self.assertEqual((body["status"], body["exit_code"], body["detail"]),
                         ("program_runner_error", -999, "Code is unsafe"), body)
        self.assertEqual(body["violations"][0]["rule"], "import.not-allowed", body)

    def test_client_hang_up_destroys_the_sandbox_within_a_second(self):
        before = self.settled(self.py)
        s = self.stream(PY_LONG)
        for _, name, data in s.events():
            if name == "stdout":
                self.assertEqual(data["text"], "started\n")
                break
        s.close()
        took = self.wait_one_gone(self.py, before)
        sys.stderr.write(f"[sandbox gone {took * 1000:.0f} ms after the hang-up] ")
        self.assertLess(took, 1.0, f"sandbox destroyed {took:.2f} s after the hang-up")
        # the executor counted it as cancelled (client gone), not as a success
        self.gw.wait_for(lambda: any(a.get("outcome") == "client_gone"
                                     for a in self.gw.audit_lines()), what="client_gone audit")

    def test_cancel_gives_cancelled_and_the_sandbox_is_gone(self):
        before = self.settled(self.py)
        s = self.stream(PY_LONG)
        job = s.headers["x-request-id"]
        events = s.events()
        for _, name, _ in events:
            if name == "stdout":
                break
        # another tenant cannot see it; its own tenant cancels it
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=B)
        self.assertEqual((st, body["error"]["code"]), (404, "job_not_found"), body)
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual((st, body), (202, {"job_id": job, "status": "cancelling"}))
        result = [data for _, name, data in events if name == "result"]
        s.close()
        self.assertEqual(len(result), 1)
        self.assertEqual((result[0]["status"], result[0]["exit_code"], result[0]["detail"]),
                         ("cancelled", -130, "cancelled"), result[0])
        self.wait_one_gone(self.py, before, timeout=2.0)
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual((st, body["error"]["code"]), (409, "job_ended"), body)
        st, _, body = self.gw.call("POST", "/v1/jobs/0123456789abcdef/cancel", headers=A)
        self.assertEqual((st, body["error"]["code"]), (404, "job_not_found"), body)

    def test_cancel_of_a_job_that_is_not_streamed(self):
        out = {}

        def run():
            out["r"] = self.gw.call("POST", "/v1/run", {"language": "python", "code": PY_LONG},
                                    headers=A, timeout=90)
        t = threading.Thread(target=run)
        t.start()
        # its id is in the audit line only at the end: find it in the gateway's table
        # through the executor's log instead, which names the job at its start
        deadline = time.time() + 30
        job = None
        while job is None and time.time() < deadline:
            for line in self.py.daemon.tail().splitlines():
                if "event=job_start" in line and "job_id=" in line:
                    cand = line.split("job_id=")[1].split()[0]
                    if cand not in self.seen_jobs():
                        job = cand
            time.sleep(0.05)
        self.assertIsNotNone(job, "the job never started")
        st, _, body = self.gw.call("POST", f"/v1/jobs/{job}/cancel", headers=A)
        self.assertEqual(st, 202, body)
        t.join(30)
        st, _, body = out["r"]
        self.assertEqual((st, body["status"], body["job_id"]), (200, "cancelled", job), body)

    def seen_jobs(self):
        return {a["request_id"] for a in self.gw.audit_lines()}


if __name__ == "__main__":
    unittest.main()
