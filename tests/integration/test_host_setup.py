"""images/host-setup.sh: starting dockerd when an old one is still on its way
out. The real dockerd is shared and never touched here: the script's process
check, dockerd command and docker CLI are injected (SANDGATE_DOCKERD_NAME,
SANDGATE_DOCKERD_CMD, SANDGATE_DOCKER_CLI), and its functions are sourced.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import sgtest

SCRIPT = os.path.join(sgtest.ROOT, "images", "host-setup.sh")


def read(path):
    with open(path) as f:
        return f.read()


class DockerdRestart(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sg-hostsetup-")
        # A fake dockerd: a copy of sleep under its own name, so that
        # `pgrep -x` finds it and nothing else (comm is at most 15 bytes).
        self.name = "sgfake%d" % (os.getpid() % 100000)
        self.fake = os.path.join(self.dir, self.name)
        shutil.copy(shutil.which("sleep"), self.fake)
        self.marker = os.path.join(self.dir, "started")
        self.log = os.path.join(self.dir, "start.log")
        self.pidfile = os.path.join(self.dir, "new.pid")
        self.procs = []
        # The "new dockerd": records whether the old one was still there when
        # it was started, then serves (the fake CLI answers once it exists).
        self.start_cmd = os.path.join(self.dir, "start-new")
        with open(self.start_cmd, "w") as f:
            f.write("#!/bin/sh\n"
                    f"echo $$ > {self.pidfile}\nstate=old-gone\n"
                    f"for p in $(pgrep -x {self.name}); do\n"
                    "  case $(ps -o stat= -p $p) in Z*) ;; *) state=old-alive ;; esac\ndone\n"
                    f"echo $state >> {self.log}\ntouch {self.marker}\nexec sleep 30\n")
        os.chmod(self.start_cmd, 0o755)
        self.cli = os.path.join(self.dir, "docker")
        with open(self.cli, "w") as f:
            f.write(f"#!/bin/sh\n[ -e {self.marker} ]\n")
        os.chmod(self.cli, 0o755)

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        # the fake "new dockerd" outlives the sourced shell (nohup ... &)
        if os.path.exists(self.pidfile):
            try:
                os.kill(int(read(self.pidfile)), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def start_dockerd(self, wait_s="10"):
        env = dict(os.environ, SANDGATE_DOCKERD_NAME=self.name,
                   SANDGATE_DOCKERD_CMD=self.start_cmd, SANDGATE_DOCKER_CLI=self.cli,
                   SANDGATE_DOCKERD_LOG=os.path.join(self.dir, "dockerd.log"),
                   SANDGATE_DOCKERD_EXIT_WAIT_S=wait_s)
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-c", f"source {SCRIPT} && start_dockerd"], env=env,
                           capture_output=True, text=True, timeout=60)
        return r, time.monotonic() - t0

    def linger(self, seconds):
        p = subprocess.Popen([self.fake, str(seconds)])
        self.procs.append(p)
        return p

    def started(self):
        return read(self.log).split() if os.path.exists(self.log) else []

    def test_waits_for_a_dying_dockerd_then_starts_a_new_one(self):
        self.linger(2)  # unreachable (no marker) and gone after 2 s
        r, took = self.start_dockerd()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.started(), ["old-gone"], r.stdout + r.stderr)
        self.assertGreaterEqual(took, 1.5)
        self.assertIn("waiting", r.stdout)

    def test_no_dockerd_starts_at_once(self):
        r, took = self.start_dockerd()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.started(), ["old-gone"])
        self.assertLess(took, 5)

    def test_reachable_dockerd_is_left_alone(self):
        open(self.marker, "w").close()
        self.linger(30)
        r, _ = self.start_dockerd()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.started(), [])

    def test_dockerd_that_neither_answers_nor_exits_is_a_problem(self):
        self.linger(30)
        r, took = self.start_dockerd(wait_s="2")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(self.started(), [], "never start a second dockerd beside a live one")
        self.assertIn("neither", r.stderr)
        self.assertLess(took, 10)

    def test_zombie_does_not_count(self):
        # A dockerd that has exited but is not reaped yet is gone.
        p = self.linger(0)
        time.sleep(0.5)  # exited, not waited for: a zombie of this process
        self.assertIsNone(p.returncode)
        r, took = self.start_dockerd(wait_s="5")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.started(), ["old-gone"])
        self.assertLess(took, 4)


if __name__ == "__main__":
    unittest.main()


class DaemonJson(unittest.TestCase):
    """fix_daemon_json on a scratch daemon.json (never the real one): runsc
    gets its arguments, runsc-net is added for networked pools, and every
    other runtime and key is kept; an existing runsc-net is left alone."""

    def fix(self, before):
        d = tempfile.mkdtemp(prefix="sg-daemonjson-")
        path = os.path.join(d, "daemon.json")
        try:
            with open(path, "w") as f:
                json.dump(before, f)
            env = dict(os.environ, SANDGATE_DOCKER_DAEMON_JSON=path)
            subprocess.run(["bash", "-c", f"source {SCRIPT} && fix_daemon_json"], env=env,
                           check=False, capture_output=True, text=True, timeout=30)
            with open(path) as f:
                return json.load(f)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_adds_runsc_net_and_keeps_the_rest(self):
        after = self.fix({"runtimes": {"other": {"path": "/x"}}, "debug": True})
        rts = after["runtimes"]
        self.assertEqual(rts["other"], {"path": "/x"})
        self.assertTrue(after["debug"])
        self.assertEqual(rts["runsc"]["runtimeArgs"], ["--network=none", "--oci-seccomp"])
        self.assertEqual(rts["runsc-net"]["runtimeArgs"], ["--network=host", "--oci-seccomp"])

    def test_an_existing_runsc_net_is_left_alone(self):
        mine = {"path": "/opt/runsc", "runtimeArgs": ["--network=host", "--debug"]}
        after = self.fix({"runtimes": {"runsc-net": mine}})
        self.assertEqual(after["runtimes"]["runsc-net"], mine)
