"""The run-time promises with the in-process layer switched OFF, end to end
on dockerd + runsc with the real Python image: the executor runs with its
test-only --test-guard-off, so the runner installs the kernel filter but no
audit hook and no import gate. What still holds here rests on what the job
cannot reach (README, "Security model"): the kernel filter (no process, no
socket offline: the job is killed and the parent reports it), the job's
identity and file system view (no runner files, no /proc of the runner, no
/etc beyond the runtime's, nothing writable but /tmp and the workspace), and
the parent (status, exit and memory are what wait4 saw, whatever the job
wrote on its report pipe). Jobs and a multi-cell session.

No new native code rests on the kernel filter too (PythonNoNewCodeGuardOff):
the image's extension modules are mapped before the job, nothing after.
A promise the table marks "in-process only" is not claimed here."""
import json
import os
import unittest

import sgguardoff
from sgguardoff import EITHER, KILLED, b64

import test_runtime_policy as rtp


class PythonGuardOff(sgguardoff.GuardOff, unittest.TestCase):
    LANGUAGE = "python"
    TENANT = "t.guardoff"

    # -- the switch

    def test_the_switch_is_on_and_logged(self):
        self.assertIn("event=test_guard_off", self.ex.daemon.tail(100000))
        # /etc/passwd is in the view (names) but not in the policy's
        # read_paths: the audit hook would refuse it; here nothing does.
        body = self.job("def main():\n    return 'nobody:x:65534' in open('/etc/passwd').read()\n")
        self.assertEqual((body["status"], body["result"]["value"]), ("success", True), body)

    # -- kernel filter, reported by the parent

    def test_fork_is_killed_even_when_caught(self):
        self.killed("import os\ndef main():\n    try:\n        pid = os.fork()\n"
                    "    except OSError:\n        return 'caught'\n"
                    "    if pid == 0:\n        os._exit(0)\n    print('EFFECT')\n")

    def test_subprocess_is_killed(self):
        self.killed("import subprocess\ndef main():\n    try:\n"
                    "        print('EFFECT', subprocess.run(['id'], capture_output=True))\n"
                    "    except Exception:\n        return 'caught'\n")

    def test_offline_socket_is_killed(self):
        self.killed("import socket\ndef main():\n    try:\n"
                    "        socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                    "        print('EFFECT')\n    except OSError:\n        return 'caught'\n")

    def test_socket_with_processes_allowed_is_reported_as_network(self):
        self.killed("import socket\ndef main():\n    socket.socket()\n    print('EFFECT')\n",
                    kind="network", runtime={"processes": True})

    def test_threads_and_unix_sockets_still_work(self):
        body = self.job("import threading, socket, asyncio\ndef main():\n"
                        "    t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                        "    a, b = socket.socketpair(); a.close(); b.close()\n"
                        "    async def f():\n        return 2\n"
                        "    return asyncio.run(f())\n")
        self.assertEqual((body["status"], body["result"]["value"]), ("success", 2), body)

    # -- identity and view

    def test_identity_without_capabilities(self):
        body = self.job("import os, ctypes\ndef main():\n"
                        "    st = {l.split(':')[0]: l.split()[1] for l in open('/proc/self/status')"
                        " if l.startswith('Cap')}\n"
                        "    nnp = ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS\n"
                        "    return [os.getresuid(), os.getresgid(), os.getgroups(), st, nnp]\n")
        uid, gid, groups, st, nnp = body["result"]["value"]
        self.assertEqual((uid, gid, groups, nnp), ([65534] * 3, [65534] * 3, [], 1), body)
        # gVisor's status has no CapAmb line; every set it shows is empty
        self.assertLessEqual({"CapInh", "CapPrm", "CapEff", "CapBnd"}, set(st), st)
        self.assertEqual(set(st.values()), {"0" * 16}, st)

    def test_nothing_outside_the_view_is_readable(self):
        code = ("import os\ndef main():\n    out = {}\n"
                "    for p in ('/opt/sandgate/runner.py', '/opt/sandgate/runtime_guard.py',\n"
                "              '/opt/sandgate', '/etc/shadow', '/etc/gshadow', '/etc/ssl/private',\n"
                "              '/root', '/var/lib/dpkg/status', '/home', '/sys/kernel',\n"
                "              '/.old', '/opt'):\n"
                "        try:\n            open(p, 'rb').read(1)\n            out[p] = 'READ'\n"
                "        except OSError as e:\n            out[p] = e.__class__.__name__\n"
                "    return out\n")
        body = self.job(code)
        self.assertEqual(body["status"], "success", body)
        for path, what in body["result"]["value"].items():
            self.assertIn(what, ("FileNotFoundError", "PermissionError"), (path, body))

    def test_the_runners_proc_is_out_of_reach(self):
        # gVisor shows any uid the environ and cmdline of another process;
        # in its own PID namespace the job has no name for the runner.
        body = self.job("import os\ndef main():\n"
                        "    pids = sorted(d for d in os.listdir('/proc') if d.isdigit())\n"
                        "    return [os.getpid(), os.getppid(), pids]\n")
        self.assertEqual(body["result"]["value"], [1, 0, ["1"]], body)

    def test_writes_only_under_tmp_and_workspace(self):
        code = ("import os\ndef main():\n    out = {}\n"
                "    for p in ('/usr/x', '/etc/x', '/x', '/dev/shm/../x', '/proc/x',\n"
                "              '/tmp/ok', '/workspace/ok'):\n"
                "        try:\n            open(p, 'w').write('EFFECT')\n            out[p] = 'WROTE'\n"
                "        except OSError as e:\n            out[p] = e.__class__.__name__\n"
                "    return out\n")
        got = self.job(code)["result"]["value"]
        self.assertEqual((got.pop("/tmp/ok"), got.pop("/workspace/ok")), ("WROTE", "WROTE"))
        self.assertNotIn("WROTE", got.values(), got)

    def test_input_files_are_not_modules(self):
        files = {"json.py": b64(b"def dumps(*a, **k):\n    return 'shadowed'\n"),
                 "helper.py": b64(b"print('EFFECT')\n")}
        body = self.job("import json, importlib\ndef main():\n    try:\n"
                        "        importlib.import_module('helper')\n    except ImportError:\n"
                        "        pass\n    return json.dumps([1])\n", files=files)
        self.assertEqual((body["status"], body["result"]["value"]), ("success", "[1]"), body)
        self.assertNotIn("EFFECT", body["stdout"])

    # -- the parent's observations

    def test_forged_report_does_not_set_status_or_memory(self):
        # The lowest pipe above stderr is the report pipe (the denial pipe
        # comes after it): a report of success with a made-up memory figure,
        # then exit(3).
        code = ("import os, stat\ndef main():\n"
                "    fd = min(f for f in range(3, 256) if _pipe(f))\n"
                "    os.write(fd, b'{\"outcome\":\"ok\",\"present\":true,\"value\":\"forged\",'\n"
                "                 b'\"exit\":0,\"maxrss_kb\":999999}')\n"
                "    os._exit(3)\n"
                "def _pipe(f):\n    try:\n        return stat.S_ISFIFO(os.fstat(f).st_mode)\n"
                "    except OSError:\n        return False\n")
        body = self.job(code)
        self.assertEqual((body["status"], body["exit_code"]), ("program_error", 3), body)
        self.assertFalse(body["result"]["present"], body)
        self.assertNotEqual(body["memory_used_kb"], 999999, body)
        self.assertLess(body["memory_used_kb"], 256 * 1024, body)

    def test_forged_success_then_killed_is_unauthorized(self):
        code = ("import os, stat, socket\ndef main():\n"
                "    fd = min(f for f in range(3, 256) if stat.S_ISFIFO(_mode(f)))\n"
                "    os.write(fd, b'{\"outcome\":\"ok\",\"present\":true,\"value\":\"forged\"}')\n"
                "    os.close(fd)\n    socket.socket()\n"
                "def _mode(f):\n    try:\n        return os.fstat(f).st_mode\n"
                "    except OSError:\n        return 0\n")
        body = self.killed(code)
        self.assertNotIn("forged", json.dumps(body["result"]))

    def test_the_runners_pipes_cannot_be_reopened(self):
        # The report and denial pipes are the parent's (root's, 0600): the job
        # writes them by number only, never through /proc.
        code = ("import os\ndef main():\n    out = []\n"
                "    for f in range(3, 64):\n"
                "        try:\n            link = os.readlink(f'/proc/self/fd/{f}')\n"
                "        except OSError:\n            continue\n"
                "        if link.startswith('pipe:'):\n"
                "            try:\n                open(f'/proc/self/fd/{f}', 'wb')\n"
                "                out.append('REOPENED')\n"
                "            except OSError as e:\n                out.append(e.__class__.__name__)\n"
                "    return out\n")
        body = self.job(code)
        self.assertEqual(body["status"], "success", body)
        self.assertTrue(body["result"]["value"], body)
        self.assertEqual(set(body["result"]["value"]), {"PermissionError"}, body)

    # -- a session: one view and filter for all its cells

    def test_session_cells_share_the_view_and_the_filter(self):
        cell = self.session()

        first = cell("import os\nuid = os.getuid()\n"
                     "try:\n    open('/opt/sandgate/runner.py')\n    seen = True\n"
                     "except OSError:\n    seen = False\nprint(uid, seen)\n")
        self.assertEqual((first["status"], first["stdout"]), ("success", "65534 False\n"), first)
        second = cell("import socket\ntry:\n    socket.socket()\nexcept OSError:\n    pass\n"
                      "print('EFFECT')\n")
        self.assertEqual((second["status"], second["unauthorized_access_type"]),
                         ("unauthorized_access", EITHER), second)
        self.assertIn(KILLED, second["detail"])
        self.assertNotIn("EFFECT", second["stdout"])



# A library no extension module of the image needs (so never mapped before
# the job), and an OpenSSL engine.
IMAGE_LIB = "/usr/lib/x86_64-linux-gnu/libanl.so.1"
ENGINE = "/usr/lib/x86_64-linux-gnu/engines-3/afalg.so"
MAP_REFUSED = "failed to map segment from shared object"


class PythonNoNewCodeGuardOff(sgguardoff.GuardOff, unittest.TestCase):
    """No new native code, by the kernel filter alone (SG_RT_NO_NEW_CODE,
    isolation.py's map_native): the child maps the image's extension modules
    before the job, then no executable mapping is possible. A refusal is
    EPERM (no effect, not reported): the job sees the loader's error."""

    LANGUAGE = "python"
    TENANT = "t.guardoff"

    def test_no_library_loads_from_a_writable_file_the_image_or_an_engine(self):
        code = ("import ctypes, shutil\n"
                f"LIB, ENGINE = {IMAGE_LIB!r}, {ENGINE!r}\n"
                "def load(p):\n    try:\n        ctypes.CDLL(p)\n        return 'LOADED'\n"
                "    except OSError as e:\n        return str(e)\n"
                "def main():\n"
                "    maps = open('/proc/self/maps').read()\n"
                "    shutil.copy(LIB, '/tmp/x.so')\n    shutil.copy(LIB, '/workspace/y.so')\n"
                "    return {'mapped before': [p for p in (LIB, ENGINE) if p in maps],\n"
                "            'tmp': load('/tmp/x.so'), 'workspace': load('/workspace/y.so'),\n"
                "            'image': load(LIB), 'engine': load(ENGINE),\n"
                "            'executable after': [l for l in open('/proc/self/maps')\n"
                "                                 if l.split()[1][2] == 'x' and l.split()[-1] in\n"
                "                                 ('/tmp/x.so', '/workspace/y.so', LIB, ENGINE)]}\n")
        body = self.job(code)
        self.assertEqual(body["status"], "success", body)
        got = body["result"]["value"]
        # (the loader's first, read-only mapping of the file may stay)
        self.assertEqual((got.pop("mapped before"), got.pop("executable after")), ([], []), body)
        for what, text in got.items():
            self.assertIn(MAP_REFUSED, text, (what, body))

    def test_a_library_loaded_through_sqlite_is_refused(self):
        # sqlite3 raises no ctypes event: only the kernel stands here.
        # sqlite tries the name, then the name + ".so": both are copies. Loaded,
        # the library would fail for its missing sqlite3_extension_init.
        code = ("import sqlite3, shutil\ndef main():\n"
                f"    shutil.copy({IMAGE_LIB!r}, '/tmp/ext')\n"
                f"    shutil.copy({IMAGE_LIB!r}, '/tmp/ext.so')\n"
                "    db = sqlite3.connect(':memory:')\n    db.enable_load_extension(True)\n"
                "    try:\n        db.load_extension('/tmp/ext')\n"
                "    except sqlite3.OperationalError as e:\n        return str(e)\n")
        body = self.job(code, policy="permissive")
        self.assertEqual(body["status"], "success", body)
        self.assertIn(MAP_REFUSED, body["result"]["value"], body)

    def test_an_uncaught_refusal_is_the_programs_error(self):
        body = self.job(f"import ctypes, shutil\nshutil.copy({IMAGE_LIB!r}, '/tmp/x.so')\n"
                        "def main():\n    ctypes.CDLL('/tmp/x.so')\n    print('EFFECT')\n")
        self.assertEqual(body["status"], "program_error", body)
        self.assertIn(f"OSError: /tmp/x.so: {MAP_REFUSED}", body["stderr"], body)
        self.assertNotIn("EFFECT", body["stdout"])

    def test_no_memory_becomes_executable(self):
        code = ("import ctypes, mmap, os\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "libc.mmap.restype = ctypes.c_void_p\n"
                "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,\n"
                "                      ctypes.c_int, ctypes.c_int, ctypes.c_long]\n"
                "libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]\n"
                "FAILED = (1 << 64) - 1\n"
                "def errno_name():\n    return os.strerror(ctypes.get_errno())\n"
                "def main():\n    out = {}\n"
                "    try:\n        mmap.mmap(-1, 4096, prot=7)\n        out['mmap module'] = 'EXEC'\n"
                "    except OSError as e:\n        out['mmap module'] = os.strerror(e.errno)\n"
                "    p = libc.mmap(None, 4096, 7, 0x22, -1, 0)  # RWX, private anonymous\n"
                "    out['anonymous rwx'] = 'EXEC' if p != FAILED else errno_name()\n"
                "    q = libc.mmap(None, 4096, 3, 0x22, -1, 0)  # RW\n"
                "    ctypes.memmove(q, b'\\xb8\\x2a\\x00\\x00\\x00\\xc3', 6)  # mov eax, 42; ret\n"
                "    r = libc.mprotect(q, 4096, 5)\n"
                "    out['mprotect rx'] = 'EXEC' if r == 0 else errno_name()\n"
                "    text = ctypes.cast(libc.getpid, ctypes.c_void_p).value & ~0xfff\n"
                "    r = libc.mprotect(text, 4096, 7)\n"
                "    out['libc text rwx'] = 'EXEC' if r == 0 else errno_name()\n"
                "    r = libc.personality(0x0400000)  # READ_IMPLIES_EXEC\n"
                "    out['personality'] = 'EXEC' if r != -1 else errno_name()\n"
                "    try:\n        ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 7)\n"
                "        out['callback'] = 'EXEC'\n"
                "    except MemoryError:\n        out['callback'] = 'MemoryError'\n"
                "    try:\n        with open('/proc/self/mem', 'r+b', buffering=0) as f:\n"
                "            f.seek(text)\n            f.write(b'\\xc3')\n"
                "        out['proc mem'] = 'EXEC'\n"
                "    except OSError as e:\n        out['proc mem'] = type(e).__name__\n"
                "    return out\n")
        body = self.job(code)
        self.assertEqual(body["status"], "success", body)
        got = body["result"]["value"]
        self.assertEqual((got.pop("callback"), got.pop("proc mem")),
                         ("MemoryError", "PermissionError"), body)
        self.assertEqual(set(got.values()), {os.strerror(1)}, body)

    def test_benign_packages_import_lazily(self):
        body = self.job(rtp.BENIGN_NATIVE, policy="permissive")
        self.assertEqual(body["status"], "success", (body["detail"], body["stderr"][-2000:]))
        self.assertEqual(body["result"]["value"], rtp.BENIGN_NATIVE_VALUE, body)

    def test_matplotlib_renders_with_agg(self):
        code = ("def main():\n    import matplotlib\n    import matplotlib.pyplot as plt\n"
                "    fig, ax = plt.subplots()\n    ax.plot([1, 2, 3])\n"
                "    fig.savefig('artifacts/plot.png')\n    return matplotlib.get_backend()\n")
        body = self.job(code)
        self.assertEqual(body["status"], "success", (body["detail"], body["stderr"][-2000:]))
        self.assertEqual(body["result"]["value"].lower(), "agg", body)
        self.assertEqual([a["name"] for a in body["artifacts"]], ["plot.png"], body)

    def test_native_code_allowed_leaves_the_filter_out(self):
        # native_code: true is the policy's choice: nothing is refused then
        body = self.job(f"import ctypes, shutil\ndef main():\n"
                        f"    shutil.copy({IMAGE_LIB!r}, '/tmp/x.so')\n"
                        "    ctypes.CDLL('/tmp/x.so')\n    return 'loaded'\n",
                        policy="permissive", runtime={"native_code": True})
        self.assertEqual((body["status"], body["result"]["value"]), ("success", "loaded"), body)

    def test_session_imports_numpy_in_its_third_cell(self):
        cells = rtp.SESSION_NUMPY_CELLS + (
            f"import ctypes, shutil\nshutil.copy({IMAGE_LIB!r}, '/tmp/x.so')\n"
            "try:\n    ctypes.CDLL('/tmp/x.so')\n    print('EFFECT')\n"
            "except OSError as e:\n    print(e)\n",)
        cell = self.session()
        bodies = [cell(code) for code in cells]
        self.assertEqual([b["status"] for b in bodies], ["success"] * 4, bodies)
        self.assertEqual(bodies[2]["stdout"], "42\n", bodies)
        self.assertIn(MAP_REFUSED, bodies[3]["stdout"])
        self.assertNotIn("EFFECT", bodies[3]["stdout"])


if __name__ == "__main__":
    unittest.main()
