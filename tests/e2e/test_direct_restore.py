"""The direct backend's restored sandboxes (--sandbox-restore on), end to end
with the real runsc and the Python image: pool sandboxes restored from a
checkpoint of a warm one answer jobs with their limits held, each draws its
own random numbers (the runner re-keys its generators: restored sandboxes
share the hash key, measured here too, but not the generators), a new
checkpoint after --restore-max-uses restores, a checkpoint whose files are
gone falls back to a boot and the job still succeeds, and nothing is left
after the stop (no sandbox, bundle, cgroup or checkpoint). Node with restore
is refused at start.

Needs root, a cgroup v1 memory controller and dockerd for the images, as
test_direct_backend.py."""
import glob
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import sgtest
import test_executor as tex
from test_direct_backend import stop_clean
from test_runtime_policy import REDTEAM, runtime_of, source

MAX_USES = 5
# Run in the "gen" flavour, which imported these before its checkpoint.
DRAW = """import numpy, random, ssl, tempfile
def main():
    return {"random": random.random(), "gauss": random.gauss(0, 1),
            "numpy": float(numpy.random.random()), "temp": tempfile.mktemp(),
            "ssl": ssl.RAND_bytes(16).hex(), "hash": hash("sandgate")}
"""
GEN = ["numpy", "random", "ssl", "tempfile"]


class DirectRestore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.state = tempfile.mkdtemp(prefix="sg-restore-")
        # One refill per pool: every launch restores (none boots beside the
        # one making a checkpoint), so each job below runs on a restored one.
        cls.ex = tex.Executor("python", 2, extra=(
            "--sandbox-backend", "runsc", "--runsc-state-dir", cls.state, "--max-sessions", "0",
            "--create-parallel", "1", "--flavour", "plain:2",
            "--flavour", "gen=numpy,random,ssl,tempfile:1",
            "--sandbox-restore", "on", "--restore-max-uses", str(MAX_USES),
            "--max-timeout-ms", "60000", "--pool-wait-ms", "20000"), wait_idle=False)
        cls.ex.wait_idle(3, timeout=120)

    @classmethod
    def tearDownClass(cls):
        try:
            stop_clean(cls.ex, cls.state)
            assert not glob.glob(os.path.join(cls.state, "checkpoints", "*")), "checkpoints left"
        finally:
            shutil.rmtree(cls.state, ignore_errors=True)

    def wait_gen_idle(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            _, _, h = self.ex.health()
            if [f for f in h["flavours"] if f["name"] == "gen" and f["idle"] >= 1]:
                return
            time.sleep(0.1)
        raise AssertionError(f"no idle gen sandbox: {self.ex.daemon.tail()}")

    def plain_generation(self):
        gens = {g["pool"]: g for g in self.restore_stats()["generations"]}
        return gens.get(f"{self.ex.instance}.plain")

    def restore_stats(self):
        _, _, h = self.ex.health()
        return h["restore"]

    def restored_ok(self, code, **fields):
        r = self.ex.ok(code, **fields)
        self.assertEqual(r["sandbox"]["start"], "restored", r)
        return r

    def test_restored_sandboxes_answer_and_hold_their_limits(self):
        r = self.restored_ok("def main():\n    print('hello')\n    return 42\n")
        self.assertEqual((r["status"], r["stdout"], r["result"]["value"]),
                         ("success", "hello\n", 42), r)
        r = self.restored_ok("def main():\n    while True:\n        pass\n",
                             limits={"timeout_ms": 1500})
        self.assertEqual((r["status"], r["resource_limit_type"], r["exit_code"]),
                         ("resource_limit_exceeded", "time", -124), r)
        r = self.restored_ok("def main():\n    x = []\n    while True:\n"
                             "        x.append(bytearray(16 << 20))\n",
                             limits={"timeout_ms": 30000})
        self.assertEqual((r["status"], r["resource_limit_type"]),
                         ("resource_limit_exceeded", "memory"), r)
        r = self.restored_ok("import sys\ndef main():\n    s = 'x' * (1 << 20)\n"
                             "    for _ in range(50):\n        sys.stdout.write(s)\n",
                             limits={"timeout_ms": 30000})
        self.assertEqual((r["status"], r["resource_limit_type"], r["exit_code"]),
                         ("resource_limit_exceeded", "output", -125), r)

    def test_the_job_keeps_its_identity_and_filters(self):
        # uid 65534, no capability, a seccomp filter on, and the spec's
        # profile still refusing a new user namespace after the restore
        code = ("import ctypes, os\ndef main():\n    s = dict(l.split(':', 1) for l in "
                "open('/proc/self/status') if ':' in l)\n"
                "    libc = ctypes.CDLL(None, use_errno=True)\n"
                "    refused = libc.unshare(0x10000000) == -1 and ctypes.get_errno()\n"
                "    return [os.getuid(), s['CapEff'].strip(), s['Seccomp'].strip(), refused]\n")
        r = self.restored_ok(code)
        self.assertEqual(r["result"]["value"], [65534, "0000000000000000", "2", 1], r)

    def test_the_run_time_policy_holds_after_a_restore(self):
        rt = runtime_of("default", "python")
        r = self.restored_ok(source(REDTEAM, "process_caught.py"), runtime=rt,
                             limits={"timeout_ms": 30000})
        self.assertEqual((r["status"], r["unauthorized_access_type"]),
                         ("unauthorized_access", "process"), r)
        # no new executable memory (the kernel filter's no-new-code rule,
        # installed when the job arrives: after the restore)
        code = ("import mmap, os\ndef main():\n    try:\n"
                "        mmap.mmap(-1, 4096, prot=7)\n        return 'EXEC'\n"
                "    except OSError as e:\n        return os.strerror(e.errno)\n")
        allowed = rt["imports"]["modules"] + ["mmap", "os"]
        rt = dict(rt, imports=dict(rt["imports"], modules=allowed))
        r = self.restored_ok(code, runtime=rt)
        self.assertEqual((r["status"], r["result"]["value"]),
                         ("success", "Operation not permitted"), r)

    def test_two_restored_sandboxes_draw_their_own_numbers(self):
        draws = []
        for _ in range(2):
            self.wait_gen_idle()
            r = self.restored_ok(DRAW, imports=GEN)
            self.assertEqual(r["pool"]["flavour"], "gen", r)
            draws.append(r["result"]["value"])
        a, b = draws
        # one checkpoint's memory: the hash key is shared (the security
        # model's part) ...
        self.assertEqual(a["hash"], b["hash"])
        # ... the generators are not (without the runner's re-keying, random
        # and numpy come out equal here)
        for key in ("random", "gauss", "numpy", "temp", "ssl"):
            self.assertNotEqual(a[key], b[key], key)

    def test_a_new_checkpoint_after_max_uses(self):
        for _ in range(MAX_USES + 1):
            self.restored_ok("def main():\n    return 1\n")
        gens = {g["pool"]: g for g in self.restore_stats()["generations"]}
        plain = gens[f"{self.ex.instance}.plain"]
        self.assertGreaterEqual(plain["generation"], 2, gens)
        self.assertLessEqual(plain["uses"], MAX_USES, gens)
        # the used-up checkpoints are deleted: one per pool, and one being
        # read at most
        dirs = glob.glob(os.path.join(self.state, "checkpoints", "*"))
        self.assertLessEqual(len(dirs), 4, dirs)
        _, _, text = sgtest.http("GET", self.ex.url + "/metrics")
        self.assertIn("sandgate_executor_sandbox_restore 1", text)
        self.assertRegex(text, r'sandgate_executor_sandbox_starts_total\{how="restored"\} [1-9]')
        self.assertRegex(text, r'sandgate_executor_checkpoints_total\{result="ok"\} [2-9]')

    def test_zz_a_failed_restore_falls_back_to_a_boot(self):
        # the plain pool's current checkpoint, with restores left in it
        deadline = time.time() + 60
        while time.time() < deadline:
            g = self.plain_generation()
            if g and g["age_s"] > 0 and g["uses"] <= MAX_USES - 2:
                break
            self.ex.ok("def main():\n    return 0\n")
        before = self.restore_stats()
        for f in glob.glob(os.path.join(self.state, "checkpoints", "*", "*")):
            os.unlink(f)  # the image files gone
        starts = []
        deadline = time.time() + 60
        while time.time() < deadline:
            r = self.ex.ok("def main():\n    return 7\n")
            self.assertEqual((r["status"], r["result"]["value"]), ("success", 7), r)
            starts.append(r["sandbox"]["start"])
            st = self.restore_stats()
            if st["fallbacks"] > before["fallbacks"] and "booted" in starts:
                break
        self.assertGreater(st["fallbacks"], before["fallbacks"], (st, self.ex.daemon.tail()))
        self.assertIn("booted", starts)
        self.assertIn("event=runsc_restore_failed", self.ex.daemon.tail(400000))


class RestoreRefusals(unittest.TestCase):
    """Restore is refused at start where it cannot keep its promise."""

    def refused(self, language, *extra):
        port = sgtest.free_port()
        out = subprocess.run(
            [sgtest.binary("sandgate-executor"), "--language", language, "--listen",
             f"127.0.0.1:{port}", "--image", tex.IMAGES[language], "--max-sessions", "0",
             "--sandbox-restore", "on"] + list(extra), capture_output=True, text=True,
            timeout=60)
        self.assertEqual(out.returncode, 2, out.stderr)
        return out.stderr

    def test_node_and_the_docker_backend_refused(self):
        err = self.refused("nodejs", "--sandbox-backend", "runsc")
        self.assertIn("Python only", err)
        self.assertIn("re-keyed", err)
        self.assertIn("--sandbox-backend runsc", self.refused("python"))


if __name__ == "__main__":
    unittest.main()
