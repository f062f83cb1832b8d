"""sandgate-executor refuses an old gVisor (runsc_info.h): the real executor
binary started with --runsc-path pointing at a fake runsc script. The check
comes before dockerd is asked, so no Docker is needed: a start that gets
past it fails on the (missing) Docker socket instead, which is how the
tests tell "refused" from "accepted"."""
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import sgtest

SECCOMP = os.path.join(sgtest.ROOT, "images", "seccomp", "sandbox.json")


class RunscVersion(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sg-runsc-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def fake(self, body):
        path = os.path.join(self.dir, "runsc")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path

    def start(self, runsc, *extra, env=None):
        cmd = [sgtest.binary("sandgate-executor"), "--language", "python", "--runsc-path", runsc,
               "--docker-socket", os.path.join(self.dir, "no-docker.sock"), "--seccomp",
               SECCOMP, *extra]
        t0 = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **(env or {})))
        return r, time.monotonic() - t0

    def assert_refused(self, r, what):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("event=runsc_refused", r.stderr)
        self.assertIn(what, r.stderr)
        self.assertNotIn("dockerd is not reachable", r.stderr)

    def assert_past_the_check(self, r):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertNotIn("runsc_refused", r.stderr)
        self.assertIn("dockerd is not reachable", r.stderr)

    def test_an_old_runsc_is_refused(self):
        r, _ = self.start(self.fake('echo "runsc version 0.0~20221219.0"\necho "spec: 1"\n'))
        self.assert_refused(r, "runsc 0.0~20221219.0 is older than the minimum 20240729")
        self.assertIn("SANDGATE_RUNSC_ACCEPT_OLD", r.stderr)

    def test_the_minimum_and_newer_start(self):
        for v in ("0.0~20240729.0", "release-20250101.0"):
            r, _ = self.start(self.fake(f'echo "runsc version {v}"\n'))
            self.assert_past_the_check(r)

    def test_an_old_runsc_accepted_by_the_operator_starts_with_a_warning(self):
        old = self.fake('echo "runsc version 0.0~20221219.0"\n')
        r, _ = self.start(old, "--runsc-accept-old", "true")
        self.assert_past_the_check(r)
        self.assertIn("event=runsc_accepted", r.stderr)
        r, _ = self.start(old, env={"SANDGATE_RUNSC_ACCEPT_OLD": "true"})
        self.assert_past_the_check(r)

    def test_an_unknown_version_is_refused(self):
        for body in ('echo "runc version 1.1"\n', "exit 3\n", 'echo "runsc version x"\n'):
            r, _ = self.start(self.fake(body))
            self.assert_refused(r, "the runsc version is unknown")
        r, _ = self.start(os.path.join(self.dir, "missing"))
        self.assert_refused(r, "the runsc version is unknown")

    def test_a_runsc_that_hangs_is_bounded(self):
        r, took = self.start(self.fake("exec sleep 60\n"))
        self.assert_refused(r, "the runsc version is unknown")
        self.assertIn("did not answer within 5000 ms", r.stderr)
        self.assertLess(took, 20)

    def test_a_flood_of_output_is_bounded(self):
        r, _ = self.start(self.fake('echo "runsc version 0.0~20240729.0"\nyes | head -c 10000000\n'))
        self.assert_past_the_check(r)


if __name__ == "__main__":
    unittest.main()
