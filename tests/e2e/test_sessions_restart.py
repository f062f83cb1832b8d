"""Sessions survive an executor that dies: the gateway (sanitizer build) in
front of a real Python and a real Node executor, each with its session
directory, real dockerd + runsc and this checkout's images.

The executors are killed with SIGKILL (as the kernel's OOM killer or a crash
would end them) and started again on the same port, instance and directory;
meanwhile a session's call is 503 (retry), not 410.
Sessions of two tenants keep their variables; a session whose sandbox went
while the executor was down, and one whose cell was running at the kill,
answer 410 session_lost saying the executor restarted, and their containers
are removed. At the end no container of the instance remains.
"""
import json
import os
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


def metric_sum(url, name, labels=""):
    """The sum of an executor's /metrics samples name{labels...}."""
    status, _, text = sgtest.http("GET", url + "/metrics")
    assert status == 200, text
    pat = re.escape(name) + (re.escape(labels[:-1]) + r"[^}]*\}" if labels else r"(?:\{[^}]*\})?")
    return sum(int(v) for v in re.findall(r"^" + pat + r" (\d+)$", text, re.M))


class SessionsSurviveRestart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.ex = {}
        cls.where = {lang: (tempfile.mkdtemp(prefix="sg-sessions-"), tex.unique_instance(lang),
                            sgtest.free_port()) for lang in ("python", "nodejs")}
        try:
            for lang in cls.where:
                cls.ex[lang] = cls.start_executor(lang)
            cls.gw = gateway_fakes.Gateway({"executors": {lang: [ex.url]
                                                          for lang, ex in cls.ex.items()}},
                                           tokens=TOKENS)
        except BaseException:
            for ex in cls.ex.values():
                ex.stop()
            raise

    @classmethod
    def start_executor(cls, lang):
        where, instance, port = cls.where[lang]
        return tex.Executor(lang, pool_size=1, instance=instance, port=port,
                            extra=("--max-sessions", "8", "--session-dir", where))

    @classmethod
    def tearDownClass(cls):
        try:
            rc, left = tex.stop_gateway_and_executors(cls.gw, cls.ex.values())
            assert rc == 0
            assert left == [], f"containers left behind: {left}"
        finally:
            for where, _, _ in cls.where.values():
                shutil.rmtree(where, ignore_errors=True)

    # helpers

    def open(self, headers, language="python"):
        status, _, b = self.gw.call("POST", "/v1/sessions", {"language": language}, headers)
        self.assertEqual(status, 201, b)
        return b["session_id"]

    def cell(self, sid, code, headers, expect=200):
        status, _, b = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": code}, headers,
                                    timeout=60)
        self.assertEqual(status, expect, b)
        return b

    def container_of(self, sid, tenant):
        status, _, b = sgtest.http("GET", f"{self.ex['python'].url}/v1/sessions/{sid[3:]}",
                                   headers={"X-Sandgate-Tenant": tenant})
        self.assertEqual(status, 200, b)
        return b["container"]

    def kill_and_restart(self, while_down=None, lost_reason=None):
        """SIGKILL both executors, run while_down(), start them again; returns
        the seconds from start to ready of the Python one and the sessions
        recovered and lost and the recovery time (ms) the executors logged.
        Their /metrics say the same: recovered, and lost with lost_reason
        (when given) as the only reason."""
        for ex in self.ex.values():
            ex.daemon.proc.kill()
            ex.daemon.proc.wait(30)
            ex.daemon.stop()  # closes the log, checks it for sanitizer reports
        if while_down:
            while_down()
        found, counted = [0, 0, 0.0], [0, 0, 0]
        for lang in self.ex:
            t0 = time.monotonic()
            self.ex[lang] = self.start_executor(lang)
            if lang == "python":
                ready_s = time.monotonic() - t0
            m = re.search(r"sessions_recovered recovered=(\d+) lost=(\d+) expired=\d+ "
                          r"ms=([\d.]+)", self.ex[lang].daemon.tail(200000))
            if m:
                found = [found[0] + int(m.group(1)), found[1] + int(m.group(2)),
                         max(found[2], float(m.group(3)))]
            counted[0] += metric_sum(self.ex[lang].url, "sandgate_executor_sessions_recovered_total")
            counted[1] += metric_sum(self.ex[lang].url, "sandgate_executor_sessions_lost_total")
            if lost_reason:
                counted[1] -= metric_sum(self.ex[lang].url, "sandgate_executor_sessions_lost_total",
                                         f'{{reason="{lost_reason}"}}')
                counted[2] += metric_sum(self.ex[lang].url, "sandgate_executor_sessions_lost_total",
                                         f'{{reason="{lost_reason}"}}')
        self.assertEqual(counted[0], found[0], "/metrics: recovered as logged")
        self.assertEqual(counted[1], 0 if lost_reason else found[1], "/metrics: lost as logged")
        if lost_reason:
            self.assertEqual(counted[2], found[1], f"/metrics: lost, reason {lost_reason}")
        return ready_s, found[0], found[1], found[2]

    # tests

    def test_sessions_of_two_tenants_survive_a_kill(self):
        a, b, gone = self.open(A), self.open(B), self.open(A)
        js = self.open(B, "nodejs")
        self.cell(js, "let v = 'node'", B)
        self.cell(a, "x = 'alice'", A)
        self.cell(b, "y = 40", B)
        self.cell(gone, "z = 1", A)
        self.assertEqual(self.cell(a, "x2 = x + '!'\nx2", A)["result"]["value"], "alice!")
        status, _, put = self.gw.call("PUT", f"/v1/sessions/{b}/files/n.txt", b"2", B)
        self.assertEqual(status, 204, put)
        doomed = self.container_of(gone, "t.alice")

        def remove_one():
            sgtest.docker_api("DELETE", f"/containers/{doomed}?force=1")
            # while the executor is down: not reachable now, retry (not lost)
            time.sleep(0.5)  # a health round sees it down
            status, hdrs, err = self.gw.call("POST", f"/v1/sessions/{a}/exec", {"code": "1"}, A)
            self.assertEqual((status, err["error"]["code"], hdrs.get("retry-after")),
                             (503, "executor_unreachable", "1"), err)

        ready_s, recovered, lost, ms = self.kill_and_restart(remove_one, "sandbox_gone")
        print(f"\nrestart: ready after {ready_s:.2f} s, recovery {ms:.0f} ms "
              f"({recovered} recovered, {lost} lost)")
        self.assertEqual((recovered, lost), (3, 1))
        # state kept: variables of cell 1 and 2 read in cell 3, files too
        self.assertEqual(self.cell(a, "x2 + x", A)["result"]["value"], "alice!alice")
        self.assertEqual(self.cell(b, "y + int(open('n.txt').read())", B)["result"]["value"], 42)
        self.assertEqual(self.cell(js, "v + '!'", B)["result"]["value"], "node!")
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
        for sid, h in ((a, A), (b, B), (js, B)):
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
        _, recovered, lost, _ = self.kill_and_restart(lost_reason="operation_running")
        t.join(60)
        self.assertEqual((recovered, lost), (0, 1))
        status, _, err = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "w"}, B)
        self.assertEqual(status, 410, err)
        self.assertIn("executor restarted while a cell", err["error"]["message"])
        status, _ = sgtest.docker_api("GET", f"/containers/{container}/json")
        self.assertEqual(status, 404)

    def test_a_record_naming_another_container_never_touches_it(self):
        sid = self.open(A)
        status, foreign = sgtest.docker_api("POST", "/containers/create",
                                            {"Image": tex.IMAGES["python"], "Cmd": ["true"]})
        self.assertEqual(status, 201, foreign)
        self.addCleanup(sgtest.docker_api, "DELETE", f"/containers/{foreign['Id']}?force=1")
        path = os.path.join(self.where["python"][0], sid[3:] + ".json")

        def point_elsewhere():
            with open(path) as f:
                record = json.load(f)
            record["container"] = foreign["Id"]  # not labelled as this executor's
            with open(path, "w") as f:
                json.dump(record, f)

        _, recovered, lost, _ = self.kill_and_restart(point_elsewhere, "sandbox_gone")
        self.assertEqual((recovered, lost), (0, 1))
        status, _, err = self.gw.call("POST", f"/v1/sessions/{sid}/exec", {"code": "1"}, A)
        self.assertEqual((status, err["error"]["code"]), (410, "session_lost"), err)
        status, _ = sgtest.docker_api("GET", f"/containers/{foreign['Id']}/json")
        self.assertEqual(status, 200, "another's container is never removed")

    def test_records_of_another_boot_id_are_removed(self):
        sid = self.open(A)
        container = self.container_of(sid, "t.alice")

        def new_boot_id():  # the kept boot id is lost: the old ids cannot be routed here
            with open(os.path.join(self.where["python"][0], "boot_id"), "w") as f:
                f.write("0123456789abcdef")

        _, recovered, lost, _ = self.kill_and_restart(new_boot_id, "other_boot_id")
        self.assertEqual((recovered, lost), (0, 1))
        status, _ = sgtest.docker_api("GET", f"/containers/{container}/json")
        self.assertEqual(status, 404)


if __name__ == "__main__":
    unittest.main()
