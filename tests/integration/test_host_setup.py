"""images/host-setup.sh: starting dockerd when an old one is still on its way
out; daemon.json edits; installing a current runsc from backports and
choosing the gVisor platform by probe (host-runsc.sh), with fake runsc,
apt-get and apt sources. The real dockerd is shared and never touched here: the script's process
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


    def test_the_chosen_platform_goes_on_both_runtimes(self):
        d = tempfile.mkdtemp(prefix="sg-daemonjson-")
        path = os.path.join(d, "daemon.json")
        try:
            with open(path, "w") as f:
                json.dump({"runtimes": {"runsc-net": {"path": "/r", "runtimeArgs": [
                    "--network=host", "--platform=ptrace", "--debug"]}}}, f)
            env = dict(os.environ, SANDGATE_DOCKER_DAEMON_JSON=path)
            subprocess.run(["bash", "-c", f"source {SCRIPT} && RUNSC_PLATFORM_CHOSEN=systrap "
                            "fix_daemon_json"], env=env, check=True, capture_output=True,
                           text=True, timeout=30)
            rts = json.loads(read(path))["runtimes"]
            self.assertEqual(rts["runsc"]["runtimeArgs"],
                             ["--network=none", "--oci-seccomp", "--platform=systrap"])
            self.assertEqual(rts["runsc-net"]["runtimeArgs"],
                             ["--network=host", "--debug", "--platform=systrap"])
        finally:
            shutil.rmtree(d, ignore_errors=True)


# kvm hangs, systrap fails, ptrace runs the probe's command; `list` (the
# clean-up after a probe) shows nothing.
FAKE_RUNSC = """#!/bin/sh
for a; do case $a in --platform=*) p=${a#--platform=} ;; esac; done
case " $* " in *" list "*) exit 0 ;; *" --version "*) cat %(dir)s/version; exit 0 ;; esac
echo "$p" >> %(dir)s/probes
case $p in
  kvm) exec sleep 60 ;;
  systrap) echo "systrap: cannot start" >&2; exit 1 ;;
  *) shift 4; exec "$@" ;;
esac
"""


class Runsc(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sg-runsc-")
        self.runsc = os.path.join(self.dir, "runsc")
        self.state = os.path.join(self.dir, "state")
        os.mkdir(self.state)
        with open(self.runsc, "w") as f:
            f.write(FAKE_RUNSC % {"dir": self.dir})
        os.chmod(self.runsc, 0o755)
        self.version("runsc version 0.0~20221219.0")
        self.apt = os.path.join(self.dir, "apt")
        os.makedirs(os.path.join(self.apt, "sources.list.d"))
        with open(os.path.join(self.apt, "sources.list.d", "debian.sources"), "w") as f:
            f.write("Types: deb\nURIs: http://mirror.invalid/debian\n"
                    "Suites: bookworm bookworm-updates\nComponents: main\n"
                    "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
                    "Types: deb-src\nURIs: http://src.invalid/debian\n"
                    "Suites: bookworm-backports\nComponents: main\n")
        self.os_release = os.path.join(self.dir, "os-release")
        with open(self.os_release, "w") as f:
            f.write("ID=debian\nVERSION_CODENAME=bookworm\n")
        # apt-get: records its arguments; `install` brings the new version
        self.apt_get = os.path.join(self.dir, "apt-get")
        with open(self.apt_get, "w") as f:
            f.write(f"#!/bin/sh\necho \"$*\" >> {self.dir}/apt.log\n"
                    f"case \"$*\" in *install*) echo 'runsc version 0.0~20240729.0' "
                    f"> {self.dir}/version ;; esac\n")
        os.chmod(self.apt_get, 0o755)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def version(self, text):
        with open(os.path.join(self.dir, "version"), "w") as f:
            f.write(text + "\n")

    def run_fn(self, fn, **env):
        e = dict(os.environ, SANDGATE_RUNSC=self.runsc, SANDGATE_APT_DIR=self.apt,
                 SANDGATE_APT_GET=self.apt_get, SANDGATE_OS_RELEASE=self.os_release,
                 SANDGATE_KVM_DEVICE=os.path.join(self.dir, "no-kvm"),
                 SANDGATE_RUNSC_PROBE_S="2", SANDGATE_STATE_DIR=self.state)
        e.pop("SANDGATE_RUNSC_PLATFORM", None)
        e.update(env)
        t0 = time.monotonic()
        r = subprocess.run(["bash", "-c", f"source {SCRIPT} && {fn}; rc=$?; "
                            "echo \"chosen=$RUNSC_PLATFORM_CHOSEN problems=$problems\"; exit $rc"],
                           env=e, capture_output=True, text=True, timeout=60)
        return r, time.monotonic() - t0

    def probes(self):
        p = os.path.join(self.dir, "probes")
        return read(p).split() if os.path.exists(p) else []

    def test_backports_added_from_the_machines_mirror_and_the_pinned_version_installed(self):
        r, _ = self.run_fn("fix_runsc")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        added = read(os.path.join(self.apt, "sources.list.d", "sandgate-backports.sources"))
        self.assertEqual(added, "Types: deb\nURIs: http://mirror.invalid/debian\n"
                                "Suites: bookworm-backports\nComponents: main\n"
                                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
        self.assertEqual(read(os.path.join(self.dir, "apt.log")).splitlines(),
                         ["update -qq", "install -y -qq runsc=0.0~20240729*"])
        # current now: nothing more to do, and the source is not added twice
        os.remove(os.path.join(self.apt, "sources.list.d", "sandgate-backports.sources"))
        r, _ = self.run_fn("fix_runsc")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(os.listdir(os.path.join(self.apt, "sources.list.d")), ["debian.sources"])

    def test_an_existing_backports_source_is_used(self):
        with open(os.path.join(self.apt, "sources.list"), "w") as f:
            f.write("deb [signed-by=/k.gpg] http://other.invalid/debian bookworm-backports main\n")
        r, _ = self.run_fn("fix_runsc")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(os.listdir(os.path.join(self.apt, "sources.list.d")), ["debian.sources"])

    def test_an_install_that_leaves_an_old_runsc_is_a_problem(self):
        with open(self.apt_get, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        r, _ = self.run_fn("fix_runsc")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("older than the minimum 20240729", r.stderr)

    def test_check_reports_an_old_runsc(self):
        r, _ = self.run_fn("check_runsc_version")
        self.assertIn("problems=1", r.stdout)
        self.assertIn("0.0~20221219.0 is older than sandgate's minimum", r.stderr)
        self.version("runsc version 0.0~20240729.0")
        r, _ = self.run_fn("check_runsc_version")
        self.assertIn("problems=0", r.stdout)

    def test_platform_by_probe_skips_a_missing_kvm_and_a_failing_systrap(self):
        r, _ = self.run_fn("choose_platform")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.probes(), ["systrap", "ptrace"])
        self.assertIn("chosen=ptrace", r.stdout)
        self.assertIn("platform kvm:", r.stdout)
        self.assertIn("systrap: cannot start", r.stdout)

    def test_a_platform_that_hangs_is_bounded(self):
        r, took = self.run_fn("choose_platform", SANDGATE_RUNSC_PLATFORM="kvm")
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(self.probes(), ["kvm"])
        self.assertIn("no answer within 2s", r.stdout)
        self.assertIn("forced platform kvm", r.stderr)
        self.assertLess(took, 10)

    def test_a_forced_platform_is_probed_and_used(self):
        r, _ = self.run_fn("choose_platform", SANDGATE_RUNSC_PLATFORM="ptrace")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.probes(), ["ptrace"])
        self.assertIn("chosen=ptrace", r.stdout)
        r, _ = self.run_fn("choose_platform", SANDGATE_RUNSC_PLATFORM="nope")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not one of kvm systrap ptrace", r.stderr)

    def test_a_recorded_choice_for_this_version_is_kept_and_a_new_version_probes_again(self):
        with open(os.path.join(self.state, "runsc"), "w") as f:
            f.write("version=0.0~20221219.0\nplatform=systrap\npath=/x\n")
        r, _ = self.run_fn("choose_platform")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.probes(), [])
        self.assertIn("chosen=systrap", r.stdout)
        self.version("runsc version 0.0~20240729.0")
        r, _ = self.run_fn("choose_platform")
        self.assertEqual(self.probes(), ["systrap", "ptrace"])
        self.assertIn("chosen=ptrace", r.stdout)

    def test_record(self):
        self.version("runsc version 0.0~20240729.0")
        r, _ = self.run_fn("RUNSC_PLATFORM_CHOSEN=systrap; record_runsc")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rec = dict(l.split("=", 1) for l in read(os.path.join(self.state, "runsc")).splitlines())
        self.assertEqual((rec["version"], rec["platform"], rec["path"]),
                         ("0.0~20240729.0", "systrap", self.runsc))


if __name__ == "__main__":
    unittest.main()
