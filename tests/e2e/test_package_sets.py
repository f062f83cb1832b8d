"""Package sets an operator declares, end to end (real dockerd + runsc):
images/build-sets.py builds a Python set from a pure-Python wheel this test
writes by hand (no registry, no build backend) and a Debian package from the
mirror (python3-tabulate), and a Node set from a tiny npm tarball this test
writes; the built-in plain set is built from the repository's flavours/ as
any declared set. The executors take the sets (--set IMAGE) and read each
image's manifest; a job importing a set's packages runs on that set's warm
pool (pool.flavour) under a policy that allows them and is rejected, naming
the policy, under one that does not; a package no set provides is rejected
at the gateway, saying so. The listings show
the sets with their packages, versions and sources. A tampered, missing or
unpinned wheel and a tampered npm tarball stop the build naming the package;
building an unchanged set again is a cache hit.

The test's set images are untagged at the end (docker rmi --no-prune: their
layers stay in the build cache, so the next run builds nothing); the plain set
only when the test tagged it (make images may have)."""
import base64
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest
import zipfile

import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402

BUILD = os.path.join(sgtest.ROOT, "images", "build-sets.py")
TAG = os.environ.get("SANDGATE_TAG") or "latest"
SET_PY = f"sandgate/set-python-e2e:{TAG}"
SET_JS = f"sandgate/set-nodejs-e2e:{TAG}"
SET_PY2 = f"sandgate/set-python-e2e2:{TAG}"
SET_PLAIN = f"sandgate/set-python-plain:{TAG}"
SETS_POLICY = {"name": "sets", "extends": "default",
               "description": "default plus the e2e sets' packages",
               "python": {"imports": {"modules": ["sgtiny", "tabulate", "sgmissing"]}},
               "javascript": {"imports": {"modules": ["sgtinyjs"]}}}
PY_JOB = ("import sgtiny\nfrom tabulate import tabulate\n\n"
          "def main():\n    return [sgtiny.answer(), tabulate([['x', 1]], tablefmt='plain').split()]\n")
JS_JOB = "const t = require('sgtinyjs');\nfunction main() { return t.answer(); }\n"
FIXED = (2020, 1, 1, 0, 0, 0)  # wheel and tarball bytes are the same every run (cache)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def make_wheel(path, name="sgtiny", version="1.0"):
    """A pure-Python wheel of package `name`, built by hand: a zip with the
    package, METADATA, WHEEL and RECORD (what pip checks)."""
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": b"def answer():\n    return 42\n",
             f"{info}/METADATA":
                 f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{info}/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = ""
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(zipfile.ZipInfo(name, FIXED), data)
    return hashlib.sha256(read_bytes(path)).hexdigest()


def make_npm_tarball(path):
    """sgtinyjs@1.0.0 as npm pack lays it out (package/...)."""
    files = {"package/package.json": json.dumps({"name": "sgtinyjs", "version": "1.0.0",
                                                 "main": "index.js"}).encode(),
             "package/index.js": b"exports.answer = () => 7;\n"}
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1577836800, 0o644
            t.addfile(info, io.BytesIO(data))
    with open(path, "wb") as f:
        f.write(gzip.compress(raw.getvalue(), mtime=0))
    data = read_bytes(path)
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def write_sets(d):
    """The e2e sets in d (with d/wheelhouse); returns the wheel's sha256."""
    os.makedirs(os.path.join(d, "wheelhouse"), exist_ok=True)
    sha = make_wheel(os.path.join(d, "wheelhouse", "sgtiny-1.0-py3-none-any.whl"))
    integ = make_npm_tarball(os.path.join(d, "wheelhouse", "sgtinyjs-1.0.0.tgz"))
    with open(os.path.join(d, "python-e2e.json"), "w") as f:
        json.dump({"name": "e2e", "language": "python", "debian": ["python3-tabulate"],
                   "python": {"wheels": [{"file": "sgtiny-1.0-py3-none-any.whl", "sha256": sha}]},
                   "preimport": ["sgtiny"], "pool": {"size": 1, "memory_mb": 60}}, f)
    other = make_wheel(os.path.join(d, "wheelhouse", "sgother-1.0-py3-none-any.whl"), "sgother")
    with open(os.path.join(d, "python-e2e2.json"), "w") as f:  # no sandbox: only routing
        json.dump({"name": "e2e2", "language": "python", "pool": {"size": 0},
                   "python": {"wheels": [{"file": "sgother-1.0-py3-none-any.whl",
                                          "sha256": other}]}}, f)
    with open(os.path.join(d, "nodejs-e2e.json"), "w") as f:
        json.dump({"name": "e2e", "language": "nodejs",
                   "npm": [{"package": "sgtinyjs@1.0.0", "integrity": integ}],
                   "pool": {"size": 1}}, f)
    return sha


def build_sets(d, *names):
    return subprocess.run([sys.executable, BUILD, "--dir", d, "--tag", TAG,
                           "--work", os.path.join(d, "work"), *names],
                          capture_output=True, text=True, timeout=900, cwd=sgtest.ROOT)


class TestBuildRefusals(unittest.TestCase):
    """A tampered, missing or unpinned package stops the build naming it,
    before any docker build."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        write_sets(self.dir)
        os.unlink(os.path.join(self.dir, "nodejs-e2e.json"))

    def refused(self, needle, *names):
        r = build_sets(self.dir, *names)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn(needle, r.stderr)
        self.assertNotIn("built", r.stdout)
        return r.stderr

    def test_tampered_wheel(self):
        path = os.path.join(self.dir, "wheelhouse", "sgtiny-1.0-py3-none-any.whl")
        with open(path, "ab") as f:
            f.write(b"\0")
        err = self.refused("wheel sgtiny==1.0 does not match its pinned sha256")
        self.assertIn("sgtiny-1.0-py3-none-any.whl", err)

    def test_missing_wheel(self):
        os.unlink(os.path.join(self.dir, "wheelhouse", "sgtiny-1.0-py3-none-any.whl"))
        self.refused("wheel sgtiny==1.0 is missing from")

    def test_unpinned_wheel_and_requirement(self):
        p = os.path.join(self.dir, "python-e2e.json")
        doc = read_json(p)
        doc["python"]["wheels"][0].pop("sha256")
        write_json(p, doc)
        self.refused("sgtiny-1.0-py3-none-any.whl is not pinned")
        with open(os.path.join(self.dir, "reqs.txt"), "w") as f:
            f.write("sgtiny==1.0\n")
        doc["python"] = {"requirements": "reqs.txt"}
        write_json(p, doc)
        self.refused("sgtiny==1.0 is not pinned by a --hash=sha256")

    def test_requirements_with_hashes_are_the_python_part(self):
        sha = hashlib.sha256(read_bytes(os.path.join(self.dir, "wheelhouse",
                                               "sgtiny-1.0-py3-none-any.whl")))
        p = os.path.join(self.dir, "python-e2e.json")
        doc = read_json(p)
        with open(os.path.join(self.dir, "reqs.txt"), "w") as f:
            f.write(f"# as pip freeze --require-hashes writes it\nsgtiny==1.0 \\\n"
                    f"    --hash=sha256:{sha.hexdigest()}\n")
        doc["python"] = {"requirements": "reqs.txt"}
        write_json(p, doc)
        r = subprocess.run([sys.executable, BUILD, "--dir", self.dir, "--check"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("python-e2e: valid", r.stdout)

    def test_tampered_npm_tarball(self):
        write_sets(self.dir)
        path = os.path.join(self.dir, "wheelhouse", "sgtinyjs-1.0.0.tgz")
        with open(path, "ab") as f:
            f.write(b"\0")
        self.refused("npm package sgtinyjs@1.0.0 does not match its pinned integrity",
                     "nodejs-e2e")

    def test_hostile_set_files(self):
        p = os.path.join(self.dir, "python-e2e.json")
        good = read_json(p)
        cases = [({"debian": ["python3-tabulate; rm -rf /"]}, "debian[0]"),
                 ({"name": "Bad Name"}, "name: 1..31"),
                 ({"extra": 1}, "extra: unknown key"),
                 ({"preimport": ["a"] * 17}, "preimport: a list of at most 16"),
                 ({"pool": {"size": 65}}, "pool.size: an integer 0..64"),
                 ({"npm": []}, "npm: only in a nodejs set"),
                 ({"language": "ruby"}, "language: one of")]
        for change, needle in cases:
            with self.subTest(change=change):
                doc = dict(good)
                doc.update(change)
                write_json(p, doc)
                r = subprocess.run([sys.executable, BUILD, "--dir", self.dir, "--check"],
                                   capture_output=True, text=True, timeout=60)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(needle, r.stderr)
                self.assertIn("python-e2e.json", r.stderr)


class TestPackageSets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.dir = tempfile.mkdtemp()
        write_sets(cls.dir)
        # the plain set is the repository's: untagged at the end only if this built it
        cls.had_plain = subprocess.run(["docker", "image", "inspect", SET_PLAIN],
                                       capture_output=True).returncode == 0
        started = time.monotonic()
        r = build_sets(cls.dir)
        cls.build_s = time.monotonic() - started
        cls.build_out = r.stdout
        plain = subprocess.run([sys.executable, BUILD, "--tag", TAG, "--work",
                                os.path.join(cls.dir, "work"), "python-plain"],
                               capture_output=True, text=True, timeout=600, cwd=sgtest.ROOT)
        if r.returncode != 0 or plain.returncode != 0:
            cls.remove()
            raise AssertionError(f"set build failed:\n{r.stdout}\n{r.stderr[-3000:]}\n"
                                 f"{plain.stderr[-2000:]}")
        cls.py = tex.Executor("python", pool_size=1, wait_idle=False,
                              extra=("--set", SET_PLAIN, "--set", SET_PY, "--set", SET_PY2,
                                     "--pool-memory-mb", "400"))
        cls.js = tex.Executor("nodejs", pool_size=1, wait_idle=False, extra=("--set", SET_JS))
        cls.gw = gateway_fakes.gateway_for(cls.py, cls.js, policies={"sets": SETS_POLICY})

    @classmethod
    def remove(cls):
        for image in (SET_PY, SET_PY2, SET_JS) + (() if cls.had_plain else (SET_PLAIN,)):
            subprocess.run(["docker", "rmi", "--no-prune", image], capture_output=True,
                           timeout=120)
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        tex.stop_clean(cls.gw, (cls.py, cls.js), then=cls.remove)

    def wait_flavour(self, ex, name, timeout=90):
        deadline = time.time() + timeout
        body = None
        while time.time() < deadline:
            _, _, body = ex.health()
            got = [f for f in body.get("flavours", []) if f["name"] == name]
            if got and got[0]["idle"] >= 1:
                return body
            time.sleep(0.2)
        raise AssertionError(f"flavour {name} never had an idle sandbox: {body}")

    def run_job(self, lang, code, policy=None):
        body = {"language": lang, "code": code}
        if policy:
            body["policy"] = policy
        st, _, out = self.gw.call("POST", "/v1/run", body, timeout=120)
        return st, out

    def test_jobs_run_on_their_sets_warm_pool(self):
        for ex, lang, code, want in ((self.py, "python", PY_JOB, [42, ["x", "1"]]),
                                     (self.js, "nodejs", JS_JOB, 7)):
            with self.subTest(lang=lang):
                self.wait_flavour(ex, "e2e")
                st, body = self.run_job(lang, code, "sets")
                self.assertEqual((st, body["status"]), (200, "success"), body)
                self.assertEqual(body["result"]["value"], want)
                self.assertEqual(body["pool"], {"flavour": "e2e", "fallback": False})

    def test_plain_jobs_stay_on_the_declared_plain_set(self):
        self.wait_flavour(self.py, "plain")
        st, body = self.run_job("python", "import json\n\ndef main():\n    return json.dumps(1)\n")
        self.assertEqual((st, body["status"]), (200, "success"), body)
        self.assertEqual(body["pool"]["flavour"], "plain")

    def test_rejected_under_a_policy_without_the_packages(self):
        for lang, code, mod in (("python", PY_JOB, "sgtiny"), ("nodejs", JS_JOB, "sgtinyjs")):
            with self.subTest(lang=lang):
                st, body = self.run_job(lang, code)
                self.assertEqual(body["exit_code"], -999, body)
                self.assertIn(f"'{mod}' is not allowed by policy 'default'", body["stderr"])

    def test_a_package_no_set_provides_is_rejected_saying_so(self):
        st, body = self.run_job("python", "import sgmissing\n\ndef main():\n    return 1\n",
                                "sets")
        self.assertEqual(body["exit_code"], -999, body)
        self.assertEqual([v["rule"] for v in body["violations"]], ["import.not-installed"])
        self.assertIn("module 'sgmissing' is not installed: no image or package set",
                      body["stderr"])

    def test_modules_of_two_sets_at_once_are_refused_by_the_executor(self):
        st, _, body = self.py.run("def main():\n    return 1\n", imports=["sgtiny", "sgother"])
        self.assertEqual(st, 422, body)  # not busy: no wait changes it
        self.assertEqual(body["error"]["code"], "no_package_set")
        self.assertIn("no package set of this executor installs 'sgtiny'",
                      body["error"]["message"])

    def test_executor_listing_shows_the_sets(self):
        st, _, py = sgtest.http("GET", self.py.url + "/v1/runtime")
        self.assertEqual(st, 200, py)
        sets = {s["set"]: s for s in py["sets"]}
        self.assertEqual(set(sets), {"plain", "e2e", "e2e2"})
        e2e = sets["e2e"]
        self.assertEqual(e2e["image"], SET_PY)
        pkgs = {p["name"]: p for p in e2e["packages"]}
        self.assertEqual(pkgs["sgtiny"]["version"], "1.0")
        self.assertEqual(pkgs["sgtiny"]["modules"], ["sgtiny"])
        self.assertIn("sha256:", pkgs["sgtiny"]["source"])
        self.assertEqual(pkgs["python3-tabulate"]["kind"], "debian")
        self.assertEqual(pkgs["python3-tabulate"]["modules"], ["tabulate"])
        st, _, js = sgtest.http("GET", self.js.url + "/v1/runtime")
        js_pkgs = {p["name"]: p for p in js["sets"][0]["packages"]}
        self.assertEqual(js_pkgs["sgtinyjs"]["version"], "1.0.0")

    def test_gateway_listing_says_which_policies_allow_the_sets(self):
        st, _, body = self.gw.call("GET", "/v1/runtimes")
        self.assertEqual(st, 200, body)
        py = body["runtimes"]["python"]
        e2e = [s for s in py["sets"] if s["set"] == "e2e"][0]
        self.assertEqual(sorted(e2e["policies"]["sets"]["importable"]), ["sgtiny", "tabulate"])
        self.assertEqual(e2e["policies"]["default"]["importable"], [])
        self.assertIn("sgtiny", py["policies"]["sets"]["importable"])
        self.assertNotIn("sgtiny", py["policies"]["default"]["importable"])

    def test_pool_memory_within_the_budget(self):
        self.wait_flavour(self.py, "e2e")
        _, _, health = self.py.health()
        planned = sum(f["target"] * f["memory_mb"] for f in health["flavours"])
        self.assertLessEqual(planned, 400, health["flavours"])

    def test_an_unchanged_set_is_a_cache_hit(self):
        started = time.monotonic()
        r = build_sets(self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"{SET_PY}: unchanged (cache hit)", r.stdout)
        self.assertIn(f"{SET_JS}: unchanged (cache hit)", r.stdout)
        self.assertLess(time.monotonic() - started, 60)
