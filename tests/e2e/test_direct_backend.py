"""The executor's direct sandbox backend (--sandbox-backend runsc), end to
end with the real runsc and images: each sandbox is `runsc run` on an OCI
bundle, no dockerd in the creation path. Hello world, the time, memory and
output limits and a refused process for Python and Node; the start-up
refusal of what the backend does not serve; and after each executor stops,
no sandbox in its runsc root, no bundle and no cgroup left behind.

Needs root (runsc creates the sandboxes) and a cgroup v1 memory controller,
as the backend does; dockerd for the images."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest

import sgtest
import test_executor as tex
from test_runtime_policy import REDTEAM, runtime_of, source

RUNSC = shutil.which("runsc") or "/usr/bin/runsc"


def stop_clean(ex, state):
    """Stops ex and asserts it left nothing in its runsc state: no sandbox,
    bundle or cgroup of its instance."""
    assert ex.stop() == 0, ex.daemon.tail()
    left = leftovers(state, ex.instance)
    assert left == {"sandboxes": [], "bundles": [], "cgroups": []}, left


def leftovers(state, instance):
    """What a stopped executor must not leave: sandboxes in its runsc root,
    bundles, cgroups."""
    out = subprocess.run([RUNSC, "--root", os.path.join(state, "runsc"), "list", "--quiet"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return {"sandboxes": out.stdout.split(),
            "bundles": glob.glob(os.path.join(state, "bundles", "*")),
            "cgroups": glob.glob(f"/sys/fs/cgroup/*/sandgate-{instance}")}


class DirectBackend(unittest.TestCase):
    language = "python"
    timeout_code = "def main():\n    while True:\n        pass\n"
    memory_code = ("def main():\n    x = []\n    while True:\n"
                   "        x.append(bytearray(16 << 20))\n")
    output_code = ("import sys\ndef main():\n    s = 'x' * (1 << 20)\n"
                   "    for _ in range(50):\n        sys.stdout.write(s)\n")
    process_file = "process_caught.py"

    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.state = tempfile.mkdtemp(prefix="sg-direct-")
        cls.ex = tex.Executor(cls.language, 1, extra=(
            "--sandbox-backend", "runsc", "--runsc-state-dir", cls.state,
            "--max-sessions", "0", "--max-timeout-ms", "60000"))

    @classmethod
    def tearDownClass(cls):
        try:
            stop_clean(cls.ex, cls.state)
            assert cls.ex.containers() == [], "Docker containers left behind"
        finally:
            shutil.rmtree(cls.state, ignore_errors=True)

    def test_hello_world_without_dockerd_in_the_path(self):
        code = ("def main():\n    print('hello')\n    return 42\n" if self.language == "python"
                else "function main() { console.log('hello'); return 42; }\n")
        r = self.ex.ok(code)
        self.assertEqual((r["status"], r["stdout"], r["result"]["value"]),
                         ("success", "hello\n", 42), r)
        self.assertEqual(r["sandbox"]["runtime"], "runsc", r)
        # The sandbox that ran it was runsc's, in this executor's root: no
        # Docker container carries the instance's label.
        self.assertEqual(self.ex.containers(), [])
        log = self.ex.daemon.tail(200000)
        self.assertIn("backend=runsc", log)
        # the start-up seccomp probe ran on this backend (it is set first)
        self.assertLess(log.index("event=sandbox_backend"), log.index("event=seccomp_enforced"))

    def test_time_limit(self):
        r = self.ex.ok(self.timeout_code, limits={"timeout_ms": 1500})
        self.assertEqual((r["status"], r["resource_limit_type"], r["exit_code"]),
                         ("resource_limit_exceeded", "time", -124), r)

    def test_memory_limit(self):
        r = self.ex.ok(self.memory_code, limits={"timeout_ms": 30000})
        if self.language == "nodejs" and r["status"] == "program_error":
            # As on the Docker path: gVisor ends the program with SIGKILL,
            # the runner reports that signal, and without the kernel's word
            # for it the answer does not claim memory.
            self.assertEqual((r["exit_code"], r["runtime_error_type"]), (-9, "signalled"), r)
            return
        self.assertEqual((r["status"], r["resource_limit_type"]),
                         ("resource_limit_exceeded", "memory"), r)

    def test_output_limit(self):
        r = self.ex.ok(self.output_code, limits={"timeout_ms": 30000})
        self.assertEqual((r["status"], r["resource_limit_type"], r["exit_code"]),
                         ("resource_limit_exceeded", "output", -125), r)

    def test_process_refused(self):
        r = self.ex.ok(source(REDTEAM, self.process_file), limits={"timeout_ms": 30000},
                       runtime=runtime_of("default", self.language))
        self.assertEqual((r["status"], r["unauthorized_access_type"]),
                         ("unauthorized_access", "process"), r)
        self.assertNotIn("uid=", r["stdout"])


class DirectBackendNode(DirectBackend):
    language = "nodejs"
    timeout_code = "function main() { for (;;) {} }\n"
    memory_code = ("function main() { const a = []; "
                   "for (;;) a.push(Buffer.alloc(16 << 20).fill(1)); }\n")
    output_code = ("function main() { const s = 'x'.repeat(1 << 20); "
                   "for (let i = 0; i < 50; i++) process.stdout.write(s); }\n")
    process_file = "process_caught.js"


class DirectBackendOrphans(unittest.TestCase):
    """An executor killed outright leaves its bundles and cgroups (and any
    sandbox still running); the next one of the same instance deletes them
    at start (`runsc list` in its root, then the directories)."""

    def test_orphans_of_a_killed_executor_are_deleted_at_start(self):
        tex.require_engine_and_images()
        state = tempfile.mkdtemp(prefix="sg-direct-")
        instance = tex.unique_instance("direct-orphans")
        extra = ("--sandbox-backend", "runsc", "--runsc-state-dir", state, "--max-sessions", "0")
        second = None
        try:
            first = tex.Executor("nodejs", 2, extra=extra, instance=instance)
            first.daemon.proc.kill()
            first.daemon.proc.wait(30)
            first.daemon.log.close()
            # Its runners see their stdin close and end, but what the
            # executor owned stays: bundles, cgroups (and any sandbox still
            # listed in its root).
            left = leftovers(state, instance)
            self.assertEqual(len(left["bundles"]), 2, left)
            self.assertTrue(left["cgroups"], left)
            second = tex.Executor("nodejs", 1, extra=extra, instance=instance)
            self.assertRegex(second.daemon.tail(), r"event=sandbox_backend .*reaped=\d")
            # The first life's are gone before the second serves: its
            # bundles, its sandboxes' cgroups in every controller.
            first = {os.path.basename(b) for b in left["bundles"]}
            now = leftovers(state, instance)
            self.assertFalse(first & {os.path.basename(b) for b in now["bundles"]}, now)
            self.assertFalse([d for cg in now["cgroups"] for d in os.listdir(cg) if d in first])
            self.assertEqual(second.ok("function main() { return 1; }\n")["result"]["value"], 1)
            rc, second = second.stop(), None
            self.assertEqual(rc, 0)
            self.assertEqual(leftovers(state, instance),
                             {"sandboxes": [], "bundles": [], "cgroups": []})
        finally:
            if second:
                second.stop()
            subprocess.run([RUNSC, "--root", os.path.join(state, "runsc"), "delete", "--force"]
                           + leftovers(state, instance)["sandboxes"], capture_output=True,
                           timeout=120)
            shutil.rmtree(state, ignore_errors=True)
            for cg in leftovers(state, instance)["cgroups"]:  # only after a failure
                for d in glob.glob(os.path.join(cg, "*/")) + [cg]:
                    try:
                        os.rmdir(d)
                    except OSError:
                        pass


class DirectBackendRefusals(unittest.TestCase):
    """What the backend does not serve stops the executor at start, with a
    message naming it, before any sandbox exists."""

    def refused(self, *extra):
        port = sgtest.free_port()
        out = subprocess.run(
            [sgtest.binary("sandgate-executor"), "--language", "python", "--listen",
             f"127.0.0.1:{port}", "--image", tex.IMAGES["python"], "--sandbox-backend",
             "runsc"] + list(extra), capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 2, out.stderr)
        return out.stderr

    def test_sessions_networked_pools_and_budget_refused(self):
        self.assertIn("sessions", self.refused())
        self.assertIn("--egress-network", self.refused(
            "--max-sessions", "0", "--egress-network", "n", "--egress-proxy", "10.0.0.2:3128"))
        self.assertIn("--pool-memory-mb", self.refused("--max-sessions", "0",
                                                       "--pool-memory-mb", "512"))
        self.assertIn("docker or runsc", self.refused("--max-sessions", "0",
                                                      "--sandbox-backend", "lxc"))
        self.assertIn("absolute", self.refused("--max-sessions", "0",
                                               "--runsc-state-dir", "rel/dir"))


if __name__ == "__main__":
    unittest.main()
