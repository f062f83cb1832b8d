"""The in-container runners (images/*/runner.*), driven directly with the docker
CLI: one container per job, started the way an executor starts them (runsc, no
network, read-only root, tmpfs workspace, uid 65534 and no capabilities or,
for an image labelled org.sandgate.identity=split, uid 0 with the five the
runner needs to drop the job to 65534 in its own view; the sandbox seccomp
profile), one job line on stdin, one result line back.

Needs dockerd with runsc and the images (`make images`); fails otherwise.
"""
import base64
import json
import os
import secrets
import subprocess
import threading
import time
import unittest

import sgtest

PY_IMAGE = sgtest.image("python")
JS_IMAGE = sgtest.image("nodejs")
# per process: two checkouts running this suite at once keep apart
LABEL = f"sandgate.test=runners-{os.getpid()}"
SECCOMP = os.path.join(sgtest.ROOT, "images", "seccomp", "sandbox.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def setUpModule():
    sgtest.ensure_docker()
    for image in (PY_IMAGE, JS_IMAGE):
        r = subprocess.run(["docker", "image", "inspect", image], capture_output=True)
        if r.returncode != 0:
            raise AssertionError(f"image {image} is missing: run 'make images'")


def tearDownModule():
    ids = sgtest.containers_with_label(LABEL)
    if ids:
        subprocess.run(["docker", "rm", "-f"] + ids, capture_output=True)
    assert not sgtest.containers_with_label(LABEL), "runner test containers left behind"


def run_job(image, job, env=None, timeout=90):
    """Runs one job; returns (result line as dict, everything on stdout)."""
    job = dict(job)
    job.setdefault("nonce", secrets.token_hex(16))
    cmd = ["docker", "run", "-i", "--rm", "--label", LABEL, "--runtime=runsc",
           "--network=none", "--read-only",
           "--tmpfs", "/tmp:size=64m,uid=65534,gid=65534",
           "--tmpfs", "/workspace:size=64m,uid=65534,gid=65534,mode=0700"] + \
        sgtest.sandbox_identity_args(image) + [
           "--security-opt", "no-new-privileges",
           "--security-opt", f"seccomp={SECCOMP}",
           "--memory", "512m", "--memory-swap", "512m", "--pids-limit", "256"]
    for k, v in (env or {}).items():
        cmd += ["-e", f"{k}={v}"]
    cmd.append(image)
    proc = subprocess.run(cmd, input=(json.dumps(job) + "\n").encode(), capture_output=True,
                          timeout=timeout)
    out = proc.stdout.decode("utf-8", "replace")
    results = []
    for line in out.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("sandgate_runner") == 1 \
                and obj.get("nonce") == job["nonce"]:
            results.append(obj)
    if len(results) != 1:
        raise AssertionError(f"expected one result line, got {len(results)}; rc={proc.returncode}\n"
                             f"stdout={out[-3000:]}\nstderr={proc.stderr.decode()[-3000:]}")
    return results[0], out


def ready_line_before_job(image, preimport, code):
    """Starts a runner with SANDGATE_PREIMPORT and sends no job until its ready
    line is on stdout (what the executor's pool waits for); then one job.
    Returns (seconds until the ready line, the result line)."""
    nonce = secrets.token_hex(16)
    cmd = ["docker", "run", "-i", "--rm", "--label", LABEL, "--runtime=runsc",
           "--network=none", "--read-only"] + sgtest.sandbox_identity_args(image) + [
           "--tmpfs", "/tmp:size=64m,uid=65534,gid=65534",
           "--tmpfs", "/workspace:size=64m,uid=65534,gid=65534,mode=0700",
           "--security-opt", "no-new-privileges", "--security-opt", f"seccomp={SECCOMP}", "-e", f"SANDGATE_PREIMPORT={preimport}", image]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        timer = threading.Timer(60, proc.kill)  # bounded: no ready line means a kill
        timer.start()
        first = proc.stdout.readline()
        timer.cancel()
        waited = time.monotonic() - t0
        if json.loads(first or b"null") != {"sandgate_runner_ready": 1}:
            raise AssertionError(f"first stdout line is not the ready line: {first!r}, "
                                 f"stderr={proc.stderr.read()[-2000:]!r}")
        out, _ = proc.communicate((json.dumps({"code": code, "nonce": nonce}) + "\n").encode(),
                                  timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("nonce") == nonce:
            return waited, obj
    raise AssertionError(f"no result line: {out[-2000:]!r}")


class ReadyLine(unittest.TestCase):
    """Both runners print the ready line once SANDGATE_PREIMPORT is done, before
    any job arrives: the pool keeps a heavy sandbox out of rotation until then."""

    def test_python_runner_reports_ready_after_preimport(self):
        _, r = ready_line_before_job(PY_IMAGE, "json,zlib",
                                     "import zlib\ndef main():\n    return 1\n")
        self.assertEqual((r["outcome"], r["result"]), ("ok", {"present": True, "value": 1}), r)

    def test_node_runner_reports_ready_after_preimport(self):
        _, r = ready_line_before_job(JS_IMAGE, "zlib,http",
                                     "function main() { return require('zlib') ? 1 : 0; }\n")
        self.assertEqual((r["outcome"], r["result"]), ("ok", {"present": True, "value": 1}), r)


def b64(data):
    return base64.b64encode(data).decode()


class PythonRunner(unittest.TestCase):
    def run_py(self, code, **kw):
        job = {"code": code}
        job.update({k: v for k, v in kw.items() if k != "env"})
        return run_job(PY_IMAGE, job, env=kw.get("env"))[0]

    def test_hello_dict_result_and_stdout_apart(self):
        r = self.run_py("def main():\n    print('hello')\n    return {'a': 1, 'b': [1, 2]}\n")
        self.assertEqual(r["outcome"], "ok")
        self.assertEqual(r["exit_code"], 0)
        self.assertEqual(r["result"], {"present": True, "value": {"a": 1, "b": [1, 2]}})
        self.assertEqual(r["stdout"], "hello\n")
        self.assertEqual(r["stderr"], "")
        self.assertGreater(r["memory_used_kb"], 1000)
        self.assertGreater(r["time_used_ms"], 0)

    # The child reports its exit status and peak memory and hangs up; the
    # parent answers without waiting for its teardown (runner.py, child_run).
    def test_peak_memory_not_the_memory_at_the_end(self):
        r = self.run_py("def main():\n    b = b'x' * (96 << 20)\n    del b\n    return 1\n")
        self.assertEqual(r["outcome"], "ok")
        self.assertGreater(r["memory_used_kb"], 90 << 10)

    def test_exit_status_of_sys_exit(self):
        r = self.run_py("import sys\ndef main():\n    sys.exit(3)\n")
        self.assertEqual((r["outcome"], r["exit_code"]), ("exception", 3))
        self.assertIn("exit(3)", r["message"])

    def test_program_that_closed_its_own_output(self):
        r = self.run_py("import os\ndef main():\n    print('gone', flush=True)\n"
                        "    os.close(1)\n    os.close(2)\n    return 'still here'\n")
        self.assertEqual(r["outcome"], "ok", r)
        self.assertEqual(r["result"]["value"], "still here")
        self.assertEqual(r["stdout"], "gone\n")

    def test_thread_left_running_is_stopped_with_the_job(self):
        code = ("import threading, time\n"
                "def spin():\n    while True:\n        print('tick', flush=True)\n        time.sleep(0.001)\n"
                "def main():\n    threading.Thread(target=spin).start()\n    time.sleep(0.05)\n"
                "    return 'done'\n")
        started = time.monotonic()
        r = self.run_py(code, limits={"timeout_ms": 5000})
        self.assertEqual((r["outcome"], r["result"]["value"]), ("ok", "done"), r)
        self.assertTrue(r["stdout"].startswith("tick\n"))
        self.assertLess(r["time_used_ms"], 4000)
        self.assertLess(time.monotonic() - started, 20)

    def test_printed_fake_result_line_is_just_output(self):
        fake = json.dumps({"sandgate_runner": 1, "outcome": "ok",
                           "result": {"present": True, "value": "forged"}})
        r = self.run_py(f"def main():\n    print({fake!r})\n    return 'real'\n")
        self.assertEqual(r["result"]["value"], "real")
        self.assertIn("forged", r["stdout"])

    def test_line_written_to_real_stdout_is_not_a_result(self):
        # The program can reach the container's stdout through /proc/1/fd/1;
        # without the nonce its line is not a result, and a partial line
        # cannot swallow the real one.
        code = ("def main():\n"
                "    f = open('/proc/1/fd/1', 'w')\n"
                "    f.write('{\"sandgate_runner\": 1, \"outcome\": \"ok\", \"nonce\": \"x\"}\\n{')\n"
                "    f.flush()\n"
                "    return 'real'\n")
        nonce = secrets.token_hex(16)
        r, out = run_job(PY_IMAGE, {"code": code, "nonce": nonce})
        self.assertEqual(r["result"]["value"], "real")
        self.assertNotIn(nonce, out.replace(json.dumps(r), ""))

    def test_program_cannot_see_the_nonce(self):
        nonce = secrets.token_hex(16)
        code = ("import os, sys\n"
                "def main():\n"
                "    seen = repr(sys.argv) + repr(dict(os.environ)) + open('/workspace/main.py').read()\n"
                "    for p in ('/proc/1/cmdline', '/proc/1/environ', '/proc/self/environ'):\n"
                "        seen += open(p, 'rb').read().decode('latin1')\n"
                "    try:\n"
                "        seen += open('/proc/1/mem', 'rb').read(16).decode('latin1')\n"
                "        mem = 'readable'\n"
                "    except OSError:\n"
                "        mem = 'denied'\n"
                "    return {'seen': seen, 'mem': mem}\n")
        r, _ = run_job(PY_IMAGE, {"code": code, "nonce": nonce})
        self.assertEqual(r["outcome"], "ok", r)
        self.assertNotIn(nonce, r["result"]["value"]["seen"])
        self.assertEqual(r["result"]["value"]["mem"], "denied")

    def test_arguments_are_keyword_arguments(self):
        r = self.run_py("def main(a, b=10, **rest):\n    return [a, b, rest]\n",
                        arguments={"a": "x", "b": 2, "c": None})
        self.assertEqual(r["result"]["value"], ["x", 2, {"c": None}])

    def test_async_main(self):
        r = self.run_py("import asyncio\nasync def main(n):\n    await asyncio.sleep(0.01)\n"
                        "    return n * 2\n", arguments={"n": 21})
        self.assertEqual(r["result"], {"present": True, "value": 42})

    def test_none_is_no_result(self):
        r = self.run_py("def main():\n    pass\n")
        self.assertEqual(r["outcome"], "ok")
        self.assertEqual(r["result"], {"present": False})

    def test_exception_has_traceback(self):
        r = self.run_py("def helper():\n    raise ValueError('boom')\n\ndef main():\n    helper()\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertEqual(r["exit_code"], 1)
        self.assertIn("Traceback (most recent call last)", r["stderr"])
        self.assertIn('File "/workspace/main.py", line 2, in helper', r["stderr"])
        self.assertIn("ValueError: boom", r["stderr"])
        self.assertNotIn("runner.py", r["stderr"])
        self.assertEqual(r["message"], "ValueError: boom")

    def test_syntax_error_is_an_exception(self):
        r = self.run_py("def main(:\n    pass\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("SyntaxError", r["stderr"])

    def test_sys_exit(self):
        r = self.run_py("import sys\ndef main():\n    sys.exit(3)\n")
        self.assertEqual((r["outcome"], r["exit_code"]), ("exception", 3))

    def test_no_main(self):
        r = self.run_py("x = 1\n")
        self.assertEqual(r["outcome"], "no_main")
        r = self.run_py("main = 42\n")
        self.assertEqual(r["outcome"], "no_main")

    def test_not_serialisable(self):
        r = self.run_py("def main():\n    return {1, 2}\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("not JSON-serialisable", r["message"])
        r = self.run_py("def main():\n    return float('nan')\n")
        self.assertEqual(r["outcome"], "exception")
        r = self.run_py("def main():\n    return '\\udc80'\n")
        self.assertEqual(r["outcome"], "exception")

    def test_bad_file_names_refused(self):
        # The rule of every layer (common/sg_file_name.h) plus the runner's own names.
        for name in ("../x", "a/b", ".hidden", "x\0y", "..", "main.py", "artifacts", "a b", "a..b",
                     "caf\u00e9", "x" * 129):
            r = self.run_py("def main():\n    return 1\n", files={name: b64(b"a")})
            self.assertEqual(r["outcome"], "bad_job", name)
            self.assertEqual(r["result"], {"present": False}, name)
        r = self.run_py("def main():\n    return 1\n", files={"a.csv": "not base64!"})
        self.assertEqual(r["outcome"], "bad_job")

    def test_input_files_over_cap_refused(self):
        files = {"a.bin": b64(b"x" * 600), "b.bin": b64(b"y" * 600)}
        r = self.run_py("def main():\n    return 1\n", files=files,
                        env={"SANDGATE_MAX_INPUT_BYTES": "1000"})
        self.assertEqual(r["outcome"], "bad_job")
        self.assertIn("1000 bytes", r["message"])

    def test_bad_job_lines(self):
        for job in ({"code": 5}, {"code": "", "arguments": []}, {"code": "", "limits": {"timeout_ms": -1}},
                    {"code": "", "nonce": "short"}):
            nonce = job.get("nonce")
            proc = subprocess.run(["docker", "run", "-i", "--rm", "--label", LABEL, "--runtime=runsc",
                                   "--network=none", "--tmpfs", "/workspace:uid=65534",
                                   PY_IMAGE], input=(json.dumps(job) + "\n").encode(),
                                  capture_output=True, timeout=60)
            line = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            self.assertEqual(line["outcome"], "bad_job", job)
            if nonce == "short":
                self.assertIsNone(line["nonce"])

    def test_input_files_are_data_not_modules(self):
        # A file named like a module is data: neither a new module nor one
        # that shadows the real json (the workspace is not on the import path).
        files = {"data.csv": b64(b"a,b\n1,2\n3,4\n"), "helper.py": b64(b"K = 7\n"),
                 "json.py": b64(b"def dumps(*a, **k):\n    return 'shadowed'\n")}
        r = self.run_py("import json\ndef main():\n    rows = open('data.csv').read().split()\n"
                        "    try:\n        import helper\n        h = helper.K\n"
                        "    except ImportError:\n        h = None\n"
                        "    return [len(rows), h, json.dumps(1)]\n", files=files)
        self.assertEqual(r["result"]["value"], [3, None, "1"], r)

    def test_sys_path_has_no_writable_entry(self):
        r = self.run_py("import os, sys\ndef main():\n"
                        "    return [p for p in sys.path if os.access(p, os.W_OK)"
                        " or p.startswith('/workspace')]\n")
        self.assertEqual(r["result"]["value"], [])

    def test_artifacts_round_trip(self):
        png = PNG_MAGIC + bytes(range(256))
        code = ("def main(png):\n"
                "    import base64\n"
                "    open('artifacts/a.png', 'wb').write(base64.b64decode(png))\n"
                "    open('artifacts/notes.md', 'w').write('# hi')\n"
                "    open('artifacts/tool.exe', 'w').write('ignored')\n"
                "    return 'done'\n")
        r = self.run_py(code, arguments={"png": b64(png)})
        self.assertEqual(r["outcome"], "ok", r)
        arts = {a["name"]: a for a in r["artifacts"]}
        self.assertEqual(sorted(arts), ["a.png", "notes.md"])
        self.assertEqual(base64.b64decode(arts["a.png"]["content_b64"]), png)
        self.assertEqual(arts["a.png"]["mime_type"], "image/png")
        self.assertEqual(arts["a.png"]["size"], len(png))
        self.assertEqual(arts["notes.md"]["mime_type"], "text/markdown")

    def test_files_saved_at_the_root_are_artifacts_not_the_inputs(self):
        code = ("def main():\n"
                "    open('chart.png', 'wb').write(b'\\x89PNG-chart')\n"
                "    open('data.csv', 'a').write('more\\n')\n"
                "    open('tool.exe', 'w').write('ignored')\n")
        r = self.run_py(code, files={"data.csv": b64(b"a,b\n")})
        self.assertEqual(r["outcome"], "ok", r)
        self.assertEqual([a["name"] for a in r["artifacts"]], ["chart.png"])
        self.assertEqual(base64.b64decode(r["artifacts"][0]["content_b64"]), b"\x89PNG-chart")

    def test_script_mode_runs_the_program_as_main_and_calls_nothing(self):
        code = ("import json\n"
                "def main():\n"
                "    raise AssertionError('main() must not be called')\n"
                "if __name__ == '__main__':\n"
                "    print(json.dumps({'Hello': 'World'}))\n")
        r = self.run_py(code, mode="script")
        self.assertEqual((r["outcome"], r["exit_code"], r["stdout"]),
                         ("ok", 0, '{"Hello": "World"}\n'), r)
        self.assertEqual(r["result"], {"present": False})
        r = self.run_py("import sys\nprint('x')\nraise ValueError('boom')\n", mode="script")
        self.assertEqual((r["outcome"], r["exit_code"], r["stdout"]), ("exception", 1, "x\n"), r)
        self.assertIn("ValueError: boom", r["stderr"])
        r = self.run_py("print(1)\n", mode="repl")
        self.assertEqual(r["outcome"], "bad_job", r)

    def test_artifact_caps(self):
        code = ("import os\ndef main():\n"
                "    for i in range(12):\n"
                "        open(f'artifacts/f{i:02}.txt', 'w').write('x')\n"
                "    open('artifacts/big.csv', 'w').write('y' * 5000)\n"
                "    os.symlink('/etc/passwd', 'artifacts/link.txt')\n")
        r = self.run_py(code, env={"SANDGATE_ARTIFACT_MAX_BYTES": "4096"})
        names = [a["name"] for a in r["artifacts"]]
        self.assertEqual(len(names), 10)
        self.assertNotIn("big.csv", names)
        self.assertNotIn("link.txt", names)
        skipped = {s["name"]: s["reason"] for s in r["artifacts_skipped"]}
        self.assertEqual(skipped["big.csv"], "too large")

    def test_output_cap(self):
        r = self.run_py("def main():\n    print('x' * 100000)\n    return 1\n",
                        limits={"max_output_bytes": 1000})
        self.assertEqual(r["outcome"], "output_limit")
        self.assertEqual(r["exit_code"], -125)
        self.assertEqual(r["stdout"], "x" * 1000)
        self.assertEqual(r["result"], {"present": False})

    def test_result_over_cap(self):
        r = self.run_py("def main():\n    return 'z' * 5000\n", limits={"max_output_bytes": 1000})
        self.assertEqual(r["outcome"], "output_limit")
        self.assertIn("result", r["message"])

    def test_runner_timeout(self):
        started = time.monotonic()
        r = self.run_py("def main():\n    print('started', flush=True)\n    while True:\n        pass\n",
                        limits={"timeout_ms": 700})
        self.assertEqual(r["outcome"], "timeout")
        self.assertEqual(r["exit_code"], -124)
        self.assertGreaterEqual(r["time_used_ms"], 700)
        self.assertLess(r["time_used_ms"], 3000)
        self.assertEqual(r["stdout"], "started\n")
        self.assertLess(time.monotonic() - started, 30)

    def test_timeout_kills_what_the_program_started(self):
        code = ("import subprocess\ndef main():\n"
                "    subprocess.Popen(['sleep', '60'])\n"
                "    return 'left a sleeper'\n")
        started = time.monotonic()
        r = self.run_py(code, limits={"timeout_ms": 5000})
        self.assertEqual(r["outcome"], "ok")
        self.assertLess(time.monotonic() - started, 20)

    def test_threads_work(self):
        r = self.run_py("import threading\ndef main():\n    out = []\n"
                        "    t = threading.Thread(target=out.append, args=(1,))\n"
                        "    t.start(); t.join()\n    return out\n")
        self.assertEqual(r["result"]["value"], [1])

    def test_pandas(self):
        r = self.run_py("import pandas as pd\ndef main():\n"
                        "    df = pd.DataFrame({'a': [1, 2, 3], 'b': [4.5, 5.5, 6.5]})\n"
                        "    return {'sum': int(df.a.sum()), 'mean': float(df.b.mean())}\n")
        self.assertEqual(r["result"]["value"], {"sum": 6, "mean": 5.5}, r.get("stderr"))

    def test_zone_list_from_the_image_build_is_the_stdlibs(self):
        # runner.py answers zoneinfo.available_timezones() from the list the
        # image build wrote (child_zoneinfo_keys): the same zones as the
        # stdlib's walk of the zone files, and the walk again once a program
        # moves the search path.
        code = (
            "import os, shutil, zoneinfo, pytz\n"
            "def walk(root):\n"
            "    found = set()\n"
            "    for d, dirs, files in os.walk(root):\n"
            "        if d == root:\n"
            "            dirs[:] = [x for x in dirs if x not in ('right', 'posix')]\n"
            "        for f in files:\n"
            "            with open(os.path.join(d, f), 'rb') as fh:\n"
            "                if fh.read(4) == b'TZif':\n"
            "                    found.add(os.path.relpath(os.path.join(d, f), root))\n"
            "    return found - {'posixrules'}\n"
            "def main():\n"
            "    listed = zoneinfo.available_timezones()\n"
            "    same = listed == walk('/usr/share/zoneinfo')\n"
            "    os.makedirs('/tmp/zi/Test')\n"
            "    shutil.copy('/usr/share/zoneinfo/UTC', '/tmp/zi/Test/Zone')\n"
            "    zoneinfo.reset_tzpath(to=['/tmp/zi'])\n"
            "    moved = zoneinfo.available_timezones()\n"
            "    return {'same': same, 'n': len(listed), 'pytz': len(pytz.all_timezones),\n"
            "            'cached': zoneinfo.available_timezones.__module__ != 'zoneinfo._tzpath',\n"
            "            'moved': sorted(moved)}\n")
        r = self.run_py(code)
        v = r["result"]["value"]
        self.assertTrue(v["same"], r)
        self.assertGreater(v["n"], 500)
        self.assertEqual(v["pytz"], v["n"] - 2)  # pytz leaves out Factory and localtime
        self.assertTrue(v["cached"])
        self.assertEqual(v["moved"], ["Test/Zone"])

    def test_matplotlib_savefig(self):
        r = self.run_py("import matplotlib.pyplot as plt\ndef main():\n"
                        "    plt.plot([1, 2, 3], [1, 4, 9])\n    plt.title('squares')\n"
                        "    plt.savefig('artifacts/plot.png')\n    return 'saved'\n")
        self.assertEqual(r["outcome"], "ok", r.get("stderr"))
        self.assertEqual([a["name"] for a in r["artifacts"]], ["plot.png"])
        data = base64.b64decode(r["artifacts"][0]["content_b64"])
        self.assertTrue(data.startswith(PNG_MAGIC))
        self.assertGreater(len(data), 1000)


class NodeRunner(unittest.TestCase):
    def run_js(self, code, **kw):
        job = {"code": code}
        job.update({k: v for k, v in kw.items() if k != "env"})
        return run_job(JS_IMAGE, job, env=kw.get("env"))[0]

    def test_module_exports_object(self):
        r = self.run_js("function main(args) { console.log('hi'); return {x: args.x + 1}; }\n"
                        "module.exports = {main};\n", arguments={"x": 41})
        self.assertEqual(r["outcome"], "ok", r)
        self.assertEqual(r["result"], {"present": True, "value": {"x": 42}})
        self.assertEqual(r["stdout"], "hi\n")
        self.assertEqual(r["stderr"], "")  # nothing of the runner's own (snapshot warnings)

    def test_script_mode_runs_the_program_and_waits_for_its_timers(self):
        code = ("obj = {'Hello': 'World'}\n"  # sloppy mode: an implicit global, as Dify's tests
                "function main() { throw new Error('main must not be called'); }\n"
                "setTimeout(() => console.log(JSON.stringify(obj)), 50);\n")
        r = self.run_js(code, mode="script")
        self.assertEqual((r["outcome"], r["exit_code"], r["stdout"]),
                         ("ok", 0, '{"Hello":"World"}\n'), r)
        r = self.run_js("console.log('x');\nnull.f();\n", mode="script")
        self.assertEqual((r["outcome"], r["exit_code"], r["stdout"]), ("exception", 1, "x\n"), r)
        self.assertIn("TypeError", r["stderr"])

    def test_exports_main(self):
        r = self.run_js("exports.main = (args) => args.a * 2;\n", arguments={"a": 4})
        self.assertEqual(r["result"]["value"], 8)

    def test_module_exports_function(self):
        r = self.run_js("module.exports = function (args) { return 'fn'; };\n")
        self.assertEqual(r["result"]["value"], "fn")

    def test_bare_function_main(self):
        r = self.run_js("#!/usr/bin/env node\nfunction main(args) {\n  return [args.a, 'bare'];\n}\n",
                        arguments={"a": 1})
        self.assertEqual(r["result"]["value"], [1, "bare"])

    def test_bare_const_arrow_main(self):
        r = self.run_js("const main = async ({n}) => n + 1;\n", arguments={"n": 1})
        self.assertEqual(r["result"]["value"], 2)

    def test_async_main(self):
        r = self.run_js("async function main() {\n"
                        "  await new Promise((res) => setTimeout(res, 10));\n  return 'later';\n}\n")
        self.assertEqual(r["result"]["value"], "later")

    def test_undefined_is_no_result_null_is_a_value(self):
        r = self.run_js("function main() {}\n")
        self.assertEqual(r["result"], {"present": False})
        r = self.run_js("function main() { return null; }\n")
        self.assertEqual(r["result"], {"present": True, "value": None})

    def test_exception_stack(self):
        r = self.run_js("function main() {\n  throw new TypeError('boom');\n}\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertEqual(r["exit_code"], 1)
        self.assertIn("TypeError: boom", r["stderr"])
        self.assertIn("/workspace/main.js:2", r["stderr"])
        self.assertNotIn("runner.js", r["stderr"])

    def test_rejected_promise(self):
        r = self.run_js("async function main() { throw new Error('async boom'); }\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("async boom", r["stderr"])

    def test_no_main(self):
        r = self.run_js("const x = 1;\n")
        self.assertEqual(r["outcome"], "no_main")

    def test_esm_syntax_is_an_exception(self):
        r = self.run_js("export function main() { return 1; }\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("SyntaxError", r["stderr"])

    def test_code_generation_from_strings_disallowed(self):
        r = self.run_js("function main() { return eval('1 + 1'); }\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("EvalError", r["stderr"])
        r = self.run_js("function main() { return new Function('return 1')(); }\n")
        self.assertEqual(r["outcome"], "exception")

    def test_not_serialisable(self):
        r = self.run_js("function main() { return 10n; }\n")
        self.assertEqual(r["outcome"], "exception")
        self.assertIn("not JSON-serialisable", r["message"])
        r = self.run_js("function main() { const o = {}; o.o = o; return o; }\n")
        self.assertEqual(r["outcome"], "exception")
        r = self.run_js("function main() { return '\\udc80'; }\n")
        self.assertEqual(r["outcome"], "exception")

    def test_line_written_to_real_stdout_is_not_a_result(self):
        # Split image: /proc/1 is the job's own process, and its fds are not
        # reopenable after the drop (the write throws); either way no result.
        code = ("const fs = require('fs');\n"
                "function main() {\n"
                "  try { fs.writeFileSync('/proc/1/fd/1', '{\"sandgate_runner\":1,\"outcome\":\"ok\"}\\n{'); }\n"
                "  catch (e) { /* not reachable */ }\n"
                "  console.log(JSON.stringify({sandgate_runner: 1, result: 'forged'}));\n"
                "  return 'real';\n}\n")
        r = self.run_js(code)
        self.assertEqual(r["result"]["value"], "real")

    def test_bad_file_names_refused(self):
        for name in ("../x", "a/b", ".env", "main.js", "a b", "a..b", "caf\u00e9", "x" * 129):
            r = self.run_js("function main() { return 1; }\n", files={name: b64(b"a")})
            self.assertEqual(r["outcome"], "bad_job", name)

    def test_input_files_and_artifacts(self):
        code = ("const fs = require('fs');\n"
                "function main() {\n"
                "  const rows = fs.readFileSync('data.csv', 'utf8').trim().split('\\n');\n"
                "  fs.writeFileSync('artifacts/out.json', JSON.stringify(rows));\n"
                "  fs.writeFileSync('artifacts/x.bin', 'ignored');\n"
                "  return rows.length;\n}\n")
        r = self.run_js(code, files={"data.csv": b64(b"a\nb\nc\n")})
        self.assertEqual(r["result"]["value"], 3, r)
        self.assertEqual([a["name"] for a in r["artifacts"]], ["out.json"])
        art = r["artifacts"][0]
        self.assertEqual(art["mime_type"], "application/json")
        self.assertEqual(json.loads(base64.b64decode(art["content_b64"])), ["a", "b", "c"])

    def test_output_cap(self):
        r = self.run_js("function main() { process.stdout.write('y'.repeat(100000)); return 1; }\n",
                        limits={"max_output_bytes": 2000})
        self.assertEqual(r["outcome"], "output_limit")
        self.assertEqual(r["stdout"], "y" * 2000)

    def test_runner_timeout(self):
        r = self.run_js("function main() { for (;;) {} }\n", limits={"timeout_ms": 700})
        self.assertEqual(r["outcome"], "timeout")
        self.assertEqual(r["exit_code"], -124)
        self.assertGreaterEqual(r["time_used_ms"], 700)
        self.assertLess(r["time_used_ms"], 3000)

    def test_process_exit(self):
        r = self.run_js("function main() { process.exit(4); }\n")
        self.assertEqual((r["outcome"], r["exit_code"]), ("exception", 4))

    def test_each_sandbox_has_its_own_randomness(self):
        # The node child starts from a snapshot taken at image build time;
        # nothing random may be frozen into it.
        code = ("const c = require('crypto');\n"
                "function main() { return [Math.random(), c.randomBytes(16).toString('hex')]; }\n")
        a, b = self.run_js(code), self.run_js(code)
        self.assertNotEqual(a["result"]["value"][0], b["result"]["value"][0])
        self.assertNotEqual(a["result"]["value"][1], b["result"]["value"][1])

    def test_preimport_is_quiet_and_optional(self):
        r = self.run_js("function main() { return require('zlib').gzipSync('x').length > 0; }\n",
                        env={"SANDGATE_PREIMPORT": "zlib, http,child_process,no-such-module"})
        self.assertEqual(r["result"], {"present": True, "value": True}, r)
        self.assertEqual(r["stderr"], "")

    def test_killed_by_a_signal(self):
        r = self.run_js("function main() { process.kill(process.pid, 'SIGKILL'); }\n")
        self.assertEqual((r["outcome"], r["exit_code"], r["signal"]), ("killed", -9, 9))

    def test_program_cannot_see_the_nonce(self):
        # The nonce lives only in sandgate-runner (PID 1), which is
        # non-dumpable: its memory cannot be read, and nothing handed to the
        # program carries the nonce.
        nonce = secrets.token_hex(16)
        code = ("const fs = require('fs');\n"
                "function main() {\n"
                "  let seen = JSON.stringify(process.argv) + JSON.stringify(process.env)\n"
                "    + fs.readFileSync('/workspace/main.js', 'latin1');\n"
                "  for (const p of ['/proc/1/cmdline', '/proc/1/environ', '/proc/self/environ'])\n"
                "    { try { seen += fs.readFileSync(p, 'latin1'); } catch (e) { seen += e.code; } }\n"
                "  let mem = 'denied';\n"
                "  try { const fd = fs.openSync('/proc/1/mem', 'r'); mem = 'opened';\n"
                "        const b = Buffer.alloc(16); fs.readSync(fd, b, 0, 16, 0x400000); mem = 'readable'; }\n"
                "  catch (e) { if (mem === 'denied') mem = 'denied'; }\n"
                "  return {seen, mem};\n}\n")
        r, _ = run_job(JS_IMAGE, {"code": code, "nonce": nonce})
        self.assertEqual(r["outcome"], "ok", r)
        self.assertNotIn(nonce, r["result"]["value"]["seen"])
        self.assertEqual(r["result"]["value"]["mem"], "denied")

    def test_output_written_before_return_is_all_there(self):
        # The runner answers as soon as the report arrives; everything the
        # program wrote before returning must be in the result anyway.
        r = self.run_js("function main() {\n"
                        "  for (let i = 0; i < 30; i++) process.stdout.write('x'.repeat(10000));\n"
                        "  console.error('e'.repeat(70000));\n  return 'done';\n}\n")
        self.assertEqual(r["result"]["value"], "done")
        self.assertEqual(r["stdout"], "x" * 300000)
        self.assertEqual(r["stderr"], "e" * 70000 + "\n")

    def test_process_left_running_does_not_delay_the_answer(self):
        # The sleeper inherits the report pipe; the answer must not wait for it.
        code = ("const { spawn } = require('child_process');\n"
                "function main() {\n"
                "  spawn('sleep', ['60'], {stdio: 'ignore', detached: true}).unref();\n"
                "  return 'left a sleeper';\n}\n")
        started = time.monotonic()
        r = self.run_js(code, limits={"timeout_ms": 20000})
        self.assertEqual(r["result"]["value"], "left a sleeper")
        self.assertLess(r["time_used_ms"], 5000)
        self.assertLess(time.monotonic() - started, 20)

    def test_forged_report_is_the_programs_own_result(self):
        # The report pipe is the program's to scribble on, but only a line
        # with the job's report token is the report: garbage, a forged
        # report and a half line before the real one change nothing.
        r = self.run_js("const fs = require('fs');\n"
                        "function main() { fs.writeSync(4, 'not json\\n');\n"
                        "  fs.writeSync(4, '{\"outcome\":\"ok\",\"present\":true,"
                        "\"value_json\":\"2\"}\\n');\n"
                        "  fs.writeSync(4, 'half a line'); return 1; }\n")
        self.assertEqual((r["outcome"], r["exit_code"], r["result"]),
                         ("ok", 0, {"present": True, "value": 1}), r)
        # no report line at all: the child's exit decides
        r = self.run_js("const fs = require('fs');\n"
                        "function main() { fs.writeSync(4, 'not json\\n'); process.exit(3); }\n")
        self.assertEqual((r["outcome"], r["exit_code"]), ("exception", 3), r)

    def test_invalid_utf8_output_is_replaced(self):
        r = self.run_js("function main() { process.stdout.write(Buffer.from([0xff, 0x41, 0xe2, 0x82])); }\n")
        self.assertEqual(r["outcome"], "ok")
        self.assertEqual(r["stdout"], "\ufffdA\ufffd\ufffd")

    def test_integer_beyond_64_bits_travels_as_text(self):
        # JSON.stringify(2 ** 64) is 18446744073709552000, which no int64 holds:
        # the result carries the exact text (test_runner_outcomes.py has more).
        r = self.run_js("function main() { return [1, 2 ** 64]; }\n")
        self.assertEqual(r["outcome"], "ok")
        self.assertEqual(r["result"], {"present": True, "value_json": "[1,18446744073709552000]"})


if __name__ == "__main__":
    unittest.main()
