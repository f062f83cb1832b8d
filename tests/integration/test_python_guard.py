"""The Python run-time guard's decisions (images/python/runtime_guard.py),
with the host's python3: each case runs a job's main.py from a temporary
workspace in a fresh interpreter with the audit hook installed (no seccomp:
that layer has its own tests, tests/unit/test_rt_filter.c, and the e2e suite
runs both together inside runsc). Checks what is denied, what is reported,
and that benign library internals (exec, compile, _getframe) keep working."""
import json
import marshal
import os
import py_compile
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUARD = os.path.join(ROOT, "images", "python", "runtime_guard.py")

DRIVER = textwrap.dedent("""
    import importlib.util, json, os, sys
    spec = importlib.util.spec_from_file_location("guard", sys.argv[1])
    guard = importlib.util.module_from_spec(spec); spec.loader.exec_module(guard)
    rt, ws = json.loads(sys.argv[2]), sys.argv[3]
    sys.path.insert(0, sys.argv[4])
    r, w = os.pipe()
    guard.install(rt, w, ws, None)
    spec = importlib.util.spec_from_file_location("main", ws + "/main.py")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        out = {"outcome": "ok", "value": mod.main()}
    except BaseException as e:
        out = {"outcome": "exception", "value": f"{type(e).__name__}: {e}"}
    os.close(w)
    out["denials"] = [json.loads(l) for l in os.read(r, 1 << 16).decode().splitlines()]
    print(json.dumps(out))
""")

LIB = textwrap.dedent("""
    import subprocess
    try:  # an import-time probe, as platform and matplotlib do
        subprocess.run(["uname", "-p"], capture_output=True)
        PROBE = "ran"
    except OSError:
        PROBE = "denied"

    def run(cmd):
        return subprocess.run(cmd, capture_output=True).stdout

    def walk():  # a library helper that walks every live object
        import gc
        return len(gc.get_objects())

    def frame_locals(tb):  # a library helper that reads a traceback's frames
        import traceback
        return [sorted(f.f_locals) for f, _ in traceback.walk_tb(tb)]

    def evaluate(text):  # a library that evaluates a string it was handed
        return eval(text)

    def compile_text(text):  # a library that compiles a string it was handed
        return compile(text, "<string>", "exec")

    def compile_as(text, name):  # ... under a name it was handed too (codeop-like)
        return compile(text, name, "exec")

    def rename(code, filename):  # a library that rebuilds a code object
        return code.replace(co_filename=filename)
""")

# A library imported from its cached bytecode (.pyc): the import system
# unmarshals it, which the guard allows only with the file's own bytes.
CACHED_LIB = "VALUE = sum(range(10))\n"

ALLOW = ["abc", "asyncio", "cachedlib", "collections", "dataclasses", "enum", "fakelib",
         "functools", "json", "math", "pickle", "threading", "typing", "urllib.parse"]


# The fake installed library's directory (set up by the test class): readable
# as the interpreter's library is in the image.
LIB_DIRS = []


def runtime(**over):
    rt = {"processes": False, "network": False,
          "imports": {"mode": "allow", "modules": ALLOW}, "files": "sandbox",
          # this interpreter's own library, wherever the host keeps it
          "read_paths": sorted({os.path.realpath(sysconfig.get_paths()[k])
                                for k in ("stdlib", "platstdlib")} | set(LIB_DIRS)),
          "native_code": False, "unpickle": False, "reflection": False}
    rt.update(over)
    return rt


def scratch_base():
    """A writable directory outside /tmp for the fake installed library and
    the workspaces: /var/tmp, else the home directory (a checkout cloned
    under /tmp must not decide where the library lives)."""
    for d in ("/var/tmp", os.path.expanduser("~")):
        real = os.path.realpath(d)
        if os.path.isdir(real) and os.access(real, os.W_OK) and \
                not (real + "/").startswith("/tmp/"):
            return real
    raise AssertionError("no writable directory outside /tmp (/var/tmp or $HOME)")


class PythonGuard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Not under /tmp, wherever the checkout is: the guard counts code
        # there as the job's (the job can write it), and fakelib must be an
        # installed library.
        cls.tmp = tempfile.TemporaryDirectory(dir=scratch_base(), prefix="sandgate-guard-")
        cls.lib = os.path.join(cls.tmp.name, "lib")
        os.mkdir(cls.lib)
        LIB_DIRS.append(cls.lib)
        with open(os.path.join(cls.lib, "fakelib.py"), "w") as f:
            f.write(LIB)
        cached = os.path.join(cls.lib, "cachedlib.py")
        with open(cached, "w") as f:
            f.write(CACHED_LIB)
        py_compile.compile(cached, doraise=True)
        # The image's layout: the driver (as runner.py) is a file beside the
        # guard, so its own <module> frame is on the stack as the runner's is.
        cls.runner_dir = os.path.join(cls.tmp.name, "runner")
        os.mkdir(cls.runner_dir)
        with open(GUARD) as src, open(os.path.join(cls.runner_dir, "runtime_guard.py"), "w") as f:
            f.write(src.read())
        cls.driver = os.path.join(cls.runner_dir, "driver.py")
        with open(cls.driver, "w") as f:
            f.write(DRIVER)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def job(self, code, rt=None):
        ws = tempfile.mkdtemp(dir=self.tmp.name)
        with open(os.path.join(ws, "main.py"), "w") as f:
            f.write(textwrap.dedent(code))
        p = subprocess.run([sys.executable, "-I", "-B", self.driver,
                            os.path.join(self.runner_dir, "runtime_guard.py"),
                            json.dumps(rt or runtime()), ws, self.lib],
                           capture_output=True, text=True, timeout=60, cwd=ws)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout.strip().splitlines()[-1])

    def denied(self, code, kind, rt=None):
        out = self.job(code, rt)
        self.assertTrue(out["denials"], out)
        self.assertEqual(out["denials"][0]["type"], kind, out)
        return out

    # ---------------------------------------------------------- benign
    def test_benign_library_internals_keep_working(self):
        out = self.job("""
            import dataclasses, enum, functools, typing, collections, json, asyncio, threading
            @dataclasses.dataclass(frozen=True)
            class P:
                x: int
                y: int = 2
            class N(typing.NamedTuple):
                a: int
            T = typing.TypeVar("T")
            E = enum.Enum("E", "A B")
            Pt = collections.namedtuple("Pt", "x y")
            @functools.lru_cache(None)
            def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
            async def co(): await asyncio.sleep(0); return 3
            def main():
                box = []
                t = threading.Thread(target=lambda: box.append(1)); t.start(); t.join()
                with open("out.txt", "w") as f: f.write("x")
                with open("/tmp/sg-guard-test.txt", "w") as f: f.write("y")
                return [P(1).y, N(4).a, E.B.value, Pt(1, 2).y, fib(20), asyncio.run(co()),
                        box, open("out.txt").read(), json.dumps({"a": 1})]
        """)
        self.assertEqual(out, {"outcome": "ok", "denials": [],
                               "value": [2, 4, 2, 2, 6765, 3, [1], "x", '{"a": 1}']})

    def test_import_time_probe_of_a_library_is_denied_quietly(self):
        out = self.job("import fakelib\ndef main(): return fakelib.PROBE\n")
        self.assertEqual(out, {"outcome": "ok", "value": "denied", "denials": []})

    # ---------------------------------------------------------- denials
    def test_replaced_builtins_do_not_reach_the_guard(self):
        out = self.denied("""
            def main():
                __builtins__["any"] = lambda items: True
                return open("/etc/hostname").read()
        """, "file")
        self.assertIn("PermissionError", out["value"])

    def test_gc_walk_by_a_library_is_denied(self):
        """gc walks reach every object, the guard's own among them: stopped
        whoever asks (a library helper here), not only the job's frame."""
        out = self.denied("import fakelib\ndef main(): return fakelib.walk()\n", "reflection")
        self.assertEqual(out["denials"][0]["target"], "gc.get_objects")

    def test_code_a_library_evaluates_is_the_jobs(self):
        """A string the job handed to a library's eval runs as "<string>":
        the job's code, so its reflection and imports are checked."""
        out = self.denied("import fakelib\ndef main():\n"
                          "    return fakelib.evaluate('__import__(\"sys\")._getframe(0)')\n",
                          "import")
        self.assertEqual(out["denials"][0]["target"], "sys")

    def test_a_denials_traceback_holds_nothing_of_the_guard(self):
        """The traceback of a denial holds the hook's frame; its locals
        (and those of every frame in it) give nothing of the guard away."""
        out = self.job("""
            import fakelib
            def main():
                try:
                    open("/etc/hostname")
                except PermissionError as e:
                    return fakelib.frame_locals(e.__traceback__)
        """)
        self.assertEqual([d["type"] for d in out["denials"]], ["file"], out)
        self.assertEqual(out["value"], [["e"], ["event", "exc", "failed", "me", "user"]], out)

    def test_process_through_an_allowed_library_helper(self):
        out = self.denied("import fakelib\ndef main(): return fakelib.run(['id'])\n", "process")
        self.assertIn("subprocess.Popen", out["denials"][0]["target"])
        self.assertIn("PermissionError", out["value"])

    def test_process_through_a_module_attribute_chain(self):
        out = self.denied("import typing\ndef main():\n"
                          "    m = getattr(typing, 'sy' + 's').modules['o' + 's']\n"
                          "    return m.system('id')\n", "process")
        self.assertIn("os.system", out["denials"][0]["target"])

    def test_computed_import_of_a_loaded_module(self):
        out = self.denied("def main():\n    return __import__('o' + 's').getpid()\n", "import")
        self.assertEqual(out["denials"][0]["target"], "os")

    def test_import_module_of_a_loaded_module(self):
        out = self.denied("import typing\ndef main():\n"
                          "    il = getattr(typing, 'sys').modules['importlib']\n"
                          "    return il.import_module('o' + 's').sep\n", "import",
                          runtime(reflection=True))
        self.assertEqual(out["denials"][0]["target"], "os")

    def test_from_import_of_a_sibling_outside_the_list(self):
        self.denied("def main():\n    from urllib import request\n", "import")
        out = self.job("def main():\n    from urllib.parse import quote\n    return quote('a b')\n")
        self.assertEqual((out["value"], out["denials"]), ("a%20b", []))

    def test_caught_denial_is_still_reported(self):
        out = self.job("def main():\n    try:\n        __import__('sub' + 'process')\n"
                       "    except ImportError:\n        pass\n    return 'carried on'\n")
        self.assertEqual(out["outcome"], "ok")
        self.assertEqual(out["value"], "carried on")
        self.assertEqual(out["denials"][0], {"type": "import", "target": "subprocess"})

    def test_network_offline(self):
        out = self.denied("import typing\ndef main():\n"
                          "    s = getattr(typing, 'sys').modules['_socket']\n"
                          "    return s.socket(2, 1)\n", "network")
        self.assertIn("family=2", out["denials"][0]["target"])
        out = self.job("import typing\ndef main():\n"
                       "    s = getattr(typing, 'sys').modules['_socket']\n"
                       "    a, b = s.socketpair(1, 1); a.close(); b.close(); return 1\n",
                       runtime(reflection=True))
        self.assertEqual(out["denials"], [])

    def test_native_code(self):
        out = self.denied("import typing\ndef main():\n"
                          "    c = __import__('ctypes')\n"
                          "    return c.CDLL('libc.so.6').getpid()\n", "native_code",
                          runtime(imports=None))

    def test_unpickle(self):
        out = self.denied("import pickle\ndef main():\n"
                          "    return pickle.loads(b\"cos\\nsystem\\n(S'id'\\ntR.\")\n", "unpickle")
        self.assertIn("os.system", out["denials"][0]["target"])
        out = self.job("import pickle\ndef main():\n"
                       "    return pickle.loads(pickle.dumps([1, {'a': 2.5}]))\n")
        self.assertEqual((out["value"], out["denials"]), ([1, {"a": 2.5}], []))

    def test_files_outside_the_sandbox(self):
        out = self.denied("def main():\n    return open('/etc/hostname').read()\n", "file")
        self.assertEqual(out["denials"][0]["target"], "read /etc/hostname")
        self.denied("def main():\n    return open('/tmp/../etc/passwd').read()\n", "file")
        self.denied("def main():\n    open('/usr/lib/x.txt', 'w')\n", "file")
        out = self.job("def main():\n    return len(open('/etc/hostname').read()) > 0\n",
                       runtime(files="any"))
        self.assertEqual(out["denials"], [])

    def test_symlink_out_of_the_sandbox_is_resolved(self):
        self.denied("import typing\ndef main():\n"
                    "    os = getattr(typing, 'sys').modules['os']\n"
                    "    os.symlink('/etc/hostname', 'link')\n"
                    "    return open('link').read()\n", "file", runtime(imports=None))

    def test_reflection_from_the_job(self):
        out = self.denied("import typing\ndef main():\n"
                          "    return getattr(typing, 'sys')._getframe(0).f_globals\n",
                          "reflection")
        self.assertEqual(out["denials"][0]["target"], "sys._getframe")
        out = self.denied("def main():\n    f = lambda: 0\n"
                          "    return getattr(f, '__co' + 'de__')\n", "reflection")
        self.assertEqual(out["denials"][0]["target"], "function.__code__")

    def test_a_library_module_loads_from_its_bytecode(self):
        out = self.job("import cachedlib\ndef main(): return cachedlib.VALUE\n")
        self.assertEqual(out, {"outcome": "ok", "value": 45, "denials": []})

    def test_unmarshalled_code_under_a_library_name_is_denied(self):
        """The import system's own unmarshalling, handed the job's bytes: code
        named like a library file would pass for library code (its frames'
        reflection and imports unchecked)."""
        code = compile("import sys\nFRAME = sys._getframe(0)\n",
                       os.path.join(self.lib, "fakelib.py"), "exec")
        out = self.denied("import typing\ndef main():\n"
                          "    sys = getattr(typing, 'sys')\n"
                          "    ext = sys.modules['importlib._bootstrap_external']\n"
                          "    code = ext._compile_bytecode(bytes.fromhex("
                          f"'{marshal.dumps(code).hex()}'), name='x')\n"
                          "    return str(code)\n", "reflection")
        self.assertIn("marshal.loads", out["denials"][0]["target"])

    def test_a_library_renaming_code_to_a_library_file_is_denied(self):
        out = self.denied("import fakelib\ndef main():\n"
                          "    code = fakelib.compile_text('x = 1')\n"
                          "    return str(fakelib.rename(code, fakelib.__file__))\n",
                          "reflection")
        self.assertIn("made by a library", out["denials"][0]["target"])

    def test_code_compiled_under_a_frozen_name_is_denied(self):
        """"<frozen ...>" counts as library code (frozen modules): a library
        compiling the job's source under such a name would make it pass for
        one, and nothing compiles frozen modules at run time."""
        cases = (("fakelib.compile_as('x = 1', '<frozen os>')", "<frozen os>"),
                 ("fakelib.rename(fakelib.compile_text('x = 1'), '<frozen importlib._x>')",
                  "made by a library"))
        for call, want in cases:
            out = self.denied(f"import fakelib\ndef main():\n    return str({call})\n",
                              "reflection")
            self.assertIn(want, out["denials"][0]["target"], call)

    def test_patching_os_does_not_blind_the_hook(self):
        out = self.denied("import typing\ndef main():\n"
                          "    os = getattr(typing, 'sys').modules['os']\n"
                          "    os.path.realpath = lambda p: '/tmp/x'\n"
                          "    os.path.abspath = lambda p: '/tmp/x'\n"
                          "    os.write = lambda fd, b: len(b)\n"
                          "    os.fsdecode = lambda p: '/tmp/x'\n"
                          "    return open('/etc/hostname').read()\n", "file")
        self.assertEqual(out["denials"][0]["target"], "read /etc/hostname")

    def test_the_import_gates_globals_are_not_the_hooks(self):
        out = self.job("def main():\n"
                       "    g = getattr(__import__, '__glo' + 'bals__')\n"
                       "    g['under'] = lambda *a: True\n"
                       "    g['write_denial'] = lambda *a: None\n"
                       "    g['real_path'] = lambda p: '/tmp/x'\n"
                       "    return open('/etc/hostname').read()\n")
        self.assertEqual(out["outcome"], "exception", out)
        self.assertIn("runtime.file", out["value"])
        self.assertEqual(out["denials"][-1], {"type": "file", "target": "read /etc/hostname"})

    def test_replacing_the_denial_pipe_ends_the_process(self):
        code = ("import typing\ndef main():\n"
                "    os = getattr(typing, 'sys').modules['os']\n"
                "    r, w = os.pipe()\n"
                "    for fd in range(3, 64):\n"
                "        if fd not in (r, w):\n"
                "            try:\n"
                "                os.dup2(w, fd)\n"
                "            except OSError:\n"
                "                pass\n"
                "    return open('/etc/hostname').read()\n")
        ws = tempfile.mkdtemp(dir=self.tmp.name)
        with open(os.path.join(ws, "main.py"), "w") as f:
            f.write(code)
        p = subprocess.run([sys.executable, "-I", "-B", self.driver,
                            os.path.join(self.runner_dir, "runtime_guard.py"),
                            json.dumps(runtime()), ws, self.lib],
                           capture_output=True, text=True, timeout=60, cwd=ws)
        self.assertEqual(p.returncode, 86, (p.stdout, p.stderr))

    def test_imports_off_and_deny_mode(self):
        out = self.job("def main():\n    return __import__('o' + 's').sep\n", runtime(imports=None))
        self.assertEqual((out["value"], out["denials"]), ("/", []))
        self.denied("def main():\n    return __import__('o' + 's').sep\n", "import",
                    runtime(imports={"mode": "deny", "modules": ["os"]}))


if __name__ == "__main__":
    unittest.main()
