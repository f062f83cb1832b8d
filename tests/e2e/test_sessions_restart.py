"""Sessions survive an executor that dies: the gateway (sanitizer build) in
front of a real Python executor with a session directory, real dockerd +
runsc and this checkout's images.

The executor is killed with SIGKILL (as the kernel's OOM killer or a crash
would end it) and started again on the same port, instance and directory.
Sessions of two tenants keep their variables; a session whose sandbox went
while the executor was down, and one whose cell was running at the kill,
answer 410 session_lost saying the executor restarted, and their containers
are removed. At the end no container of the instance remains.
"""
import re
import shutil
import tempfile
import threading
import time
import unittest

import gateway_fakes
import sgtest
import test_executor as tex
from test_sessions_e2e import A, B, TOKEN_A, TOKEN_B

TOKENS = {"tenants": {"alice": {"tokens": [TOKEN_A]}, "bob": {"tokens": [TOKEN_B]}}}


class SessionsSurviveRestart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.dir = tempfile.mkdtemp(prefix="sg-sessions-")
        cls.instance = tex.unique_instance("restart")
        cls.port = sgtest.free_port()
        cls.ex = cls.start_executor()
        try:
            cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.ex.url]}},
                                           tokens=TOKENS)
        except BaseException:
            cls.ex.stop()
            raise

    @classmethod
    def start_executor(cls):
        return tex.Executor("python", pool_size=1, instance=cls.instance, port=cls.port,
                            extra=("--max-sessions", "8", "--session-dir", cls.dir))

    @classmethod
    def tearDownClass(cls):
        try:
            rc, left = tex.stop_gateway_and_executors(cls.gw, (cls.ex,))
            assert rc == 0
            assert left == [], f"containers left behind: {left}"
        finally:
            shutil.rmtree(cls.dir, ignore_errors=True)

    # helpers

    def open(self, headers):
        status, _, b = self.gw.call("POST", "/v1/sessions", {"language": "python"}, headers)
        self.assertEqual(status, 201, b)
        return b["session_id"]

    def cell(self, sid, code, headers, expect=200):
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": code}, headers,
                                    timeout=60)
        self.assertEqual(status, expect, b)
        return b

    def container_of(self, sid, tenant):
        status, _, b = sgtest.http("GET", f"{self.ex.url}/v1/sessions/{sid[3:]}",
                                   headers={"X-Sandgate-Tenant": tenant})
        self.assertEqual(status, 200, b)
        return b["container"]

    def kill_and_restart(self, while_down=None):
        """SIGKILL the executor, run while_down(), start it again; returns the
        seconds from start to ready and the recovery time it logged (ms)."""
        self.ex.daemon.proc.kill()
        self.ex.daemon.proc.wait(30)
        self.ex.daemon.stop()  # closes the log, checks it for sanitizer reports
        if while_down:
            while_down()
        t0 = time.monotonic()
        type(self).ex = self.start_executor()
        ready_s = time.monotonic() - t0
        m = re.search(r"sessions_recovered recovered=(\d+) lost=(\d+) expired=\d+ ms=([\d.]+)",
                      self.ex.daemon.tail(200000))
        self.assertIsNotNone(m, self.ex.daemon.tail())
        return ready_s, int(m.group(1)), int(m.group(2)), float(m.group(3))

    # tests

    def test_sessions_of_two_tenants_survive_a_kill(self):
        a, b, gone = self.open(A), self.open(B), self.open(A)
        self.cell(a, "x = 'alice'", A)
        self.cell(b, "y = 40", B)
        self.cell(gone, "z = 1", A)
        self.assertEqual(self.cell(a, "x2 = x + '!'\nx2", A)["result"]["value"], "alice!")
        status, _, put = self.gw.call("PUT", f"/v1/sessions/{b}/files/n.txt", b"2", B)
        self.assertEqual(status, 204, put)
        doomed = self.container_of(gone, "t.alice")

        def remove_one():
            sgtest.docker_api("DELETE", f"/containers/{doomed}?force=1")

        ready_s, recovered, lost, ms = self.kill_and_restart(remove_one)
        print(f"\nrestart: ready after {ready_s:.2f} s, recovery {ms:.0f} ms "
              f"({recovered} recovered, {lost} lost)")
        self.assertEqual((recovered, lost), (2, 1))
        # state kept: variables of cell 1 and 2 read in cell 3, files too
        self.assertEqual(self.cell(a, "x2 + x", A)["result"]["value"], "alice!alice")
        self.assertEqual(self.cell(b, "y + int(open('n.txt').read())", B)["result"]["value"], 42)
        # tenants stay apart after the restart
        status, _, err = self.gw.call("POST", f"/v1/sessions/{a}/exec", {"code": "1"}, B)
        self.assertEqual(status, 404, err)
        # the history the gateway analyses with came back too
        status, _, info = self.gw.call("GET", f"/v1/sessions/{a}", None, A)
        self.assertEqual((status, info["cells_run"], info["state"]), (200, 3, "idle"), info)
        # the session whose sandbox went: the documented answer
        status, _, err = self.gw.call("POST", f"/v1/sessions/{gone}/exec", {"code": "z"}, A)
        self.assertEqual(status, 410, err)
        self.assertEqual(err["error"]["code"], "session_lost")
        self.assertIn("executor restarted", err["error"]["message"])
        for sid, h in ((a, A), (b, B)):
            status, _, _ = self.gw.call("DELETE", f"/v1/sessions/{sid}", None, h)
            self.assertEqual(status, 204)

    def test_a_cell_running_at_the_kill_is_lost_honestly(self):
        sid = self.open(B)
        self.cell(sid, "w = 1", B)
        container = self.container_of(sid, "t.bob")
        started = threading.Event()

        def run():
            started.set()
            try:
                self.gw.call("POST", f"/v1/sessions/{sid}/exec",
                             {"code": "import time\ntime.sleep(20)"}, B, timeout=60)
            except OSError:
                pass

        t = threading.Thread(target=run)
        t.start()
        started.wait()
        time.sleep(1.5)  # the cell line is with the runner
        _, recovered, lost, _ = self.kill_and_restart()
        t.join(60)
        self.assertEqual((recovered, lost), (0, 1))
        status, _, err = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "w"}, B)
        self.assertEqual(status, 410, err)
        self.assertIn("executor restarted while a cell", err["error"]["message"])
        status, _ = sgtest.docker_api("GET", f"/containers/{container}/json")
        self.assertEqual(status, 404)


if __name__ == "__main__":
    unittest.main()
