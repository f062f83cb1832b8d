"""Extending the sandbox images, end to end: images/build-images.sh with one
extra Debian package (SANDGATE_PYTHON_PACKAGES=python3-tabulate) and one
pinned npm package (SANDGATE_NODE_PACKAGES=is-number@7.0.0, integrity from
images/nodejs/packages.lock), built from the apt mirror and the npm registry
under their own tag; the executors list both with their versions
(GET /v1/runtime, read from the image); under the default policy they stay
rejected with a message naming the policy; a policy that extends default
with them runs them. The build refuses unpinned, unlocked and tampered npm
packages before any docker build. The test removes the images it tagged."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402

BUILD = os.path.join(sgtest.ROOT, "images", "build-images.sh")
TAG = f"{os.environ.get('SANDGATE_TAG') or 'latest'}-ext{os.getpid()}"
EXT = {"python": f"sandgate/sandbox-python:{TAG}", "nodejs": f"sandgate/sandbox-nodejs:{TAG}"}
DATA_POLICY = {"name": "data", "extends": "default",
               "description": "default plus the packages the image was extended with",
               "python": {"imports": {"modules": ["tabulate"]}},
               "javascript": {"imports": {"modules": ["is-number"]}}}
PY_JOB = ("from tabulate import tabulate\n\n"
          "def main():\n    return tabulate([['x', 1]], tablefmt='plain').split()\n")
JS_JOB = "const isNumber = require('is-number');\nfunction main() { return isNumber('42'); }\n"


def build(names, **env):
    e = dict(os.environ)
    e.update({"SANDGATE_TAG": TAG, "SANDGATE_PYTHON_PACKAGES": "", "SANDGATE_NODE_PACKAGES": ""})
    e.update(env)
    with tempfile.TemporaryDirectory() as no_sets:  # no package set images under this tag
        e["SANDGATE_FLAVOURS_DIR"] = no_sets
        return subprocess.run([BUILD, *names], capture_output=True, text=True, env=e, timeout=900)


class TestBuildRefusals(unittest.TestCase):
    def test_unpinned_unlocked_and_tampered_npm_packages_stop_the_build(self):
        tex.require_engine_and_images()
        with tempfile.NamedTemporaryFile("w", suffix=".lock", delete=False) as f:
            f.write("is-number@7.0.0 sha512-AAAA\n")
            bad_lock = f.name
        self.addCleanup(os.unlink, bad_lock)
        cases = [({"SANDGATE_NODE_PACKAGES": "is-number@^7"}, "not name@exact-version"),
                 ({"SANDGATE_NODE_PACKAGES": "is-number"}, "not name@exact-version"),
                 ({"SANDGATE_NODE_PACKAGES": "left-pad@1.3.0"}, "is not in"),
                 ({"SANDGATE_NODE_PACKAGES": "is-number@7.0.0", "SANDGATE_NODE_LOCK": bad_lock},
                  "integrity mismatch for is-number@7.0.0"),
                 ({"SANDGATE_PYTHON_PACKAGES": "python3-tabulate;rm"}, "not a Debian package")]
        for env, needle in cases:
            with self.subTest(env=env):
                names = ["python"] if "SANDGATE_PYTHON_PACKAGES" in env else ["nodejs"]
                started = time.monotonic()
                r = build(names, **env)
                self.assertNotEqual(r.returncode, 0, r.stdout[-2000:])
                self.assertIn(needle, r.stderr)
                self.assertNotIn("building sandgate", r.stdout, "refused before docker build")
                self.assertLess(time.monotonic() - started, 120)


class TestExtendedImages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        started = time.monotonic()
        r = build(["python", "nodejs"], SANDGATE_PYTHON_PACKAGES="python3-tabulate",
                  SANDGATE_NODE_PACKAGES="is-number@7.0.0")
        cls.build_s = time.monotonic() - started
        if r.returncode != 0:
            cls.remove_images()
            raise AssertionError(f"extended build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        cls.py = tex.Executor("python", pool_size=1, extra=("--image", EXT["python"]))
        cls.js = tex.Executor("nodejs", pool_size=1, extra=("--image", EXT["nodejs"]))
        cls.gw = gateway_fakes.gateway_for(cls.py, cls.js, policies={"data": DATA_POLICY})

    @classmethod
    def remove_images(cls):
        for image in EXT.values():
            subprocess.run(["docker", "rmi", image], capture_output=True, timeout=120)

    @classmethod
    def tearDownClass(cls):
        tex.stop_clean(cls.gw, (cls.py, cls.js), then=cls.remove_images)

    def test_the_listing_shows_the_added_packages_with_versions(self):
        st, _, py = sgtest.http("GET", self.py.url + "/v1/runtime")
        self.assertEqual(st, 200, py)
        pkgs = {p["name"].lower(): p for p in py["packages"]}
        self.assertIn("tabulate", pkgs)
        self.assertEqual(pkgs["tabulate"]["modules"], ["tabulate"])
        debs = {p["name"]: p["version"] for p in py["system_packages"]}
        self.assertIn("python3-tabulate", debs)
        st, _, js = sgtest.http("GET", self.js.url + "/v1/runtime")
        listed = [(p["name"], p["version"]) for p in js["packages"]]
        self.assertIn(("is-number", "7.0.0"), listed)
        self.assertIn(("axios", "1.7.9"), listed)  # images/nodejs/packages.base, always there
        st, _, body = self.gw.call("GET", "/v1/runtimes")
        pol = body["runtimes"]["python"]["policies"]
        self.assertNotIn("tabulate", pol["default"]["importable"])
        self.assertIn("tabulate", pol["data"]["importable"])
        jpol = body["runtimes"]["nodejs"]["policies"]
        self.assertIn("is-number", jpol["data"]["importable"])
        self.assertNotIn("is-number", jpol["default"]["importable"])

    def test_installed_is_not_allowed_until_a_policy_says_so(self):
        for lang, code in (("python", PY_JOB), ("nodejs", JS_JOB)):
            with self.subTest(lang=lang):
                st, _, body = self.gw.call("POST", "/v1/run", {"language": lang, "code": code},
                                           timeout=120)
                self.assertEqual(body["exit_code"], -999, body)
                self.assertIn("by policy 'default'", body["stderr"])
                st, _, body = self.gw.call("POST", "/v1/run", {"language": lang, "code": code,
                                                               "policy": "data"}, timeout=120)
                self.assertEqual((st, body["status"]), (200, "success"), body)
                want = ["x", "1"] if lang == "python" else True
                self.assertEqual(body["result"]["value"], want)

    def test_build_time_is_modest(self):
        # the base layers come from the cache: only the extra layers are built
        self.assertLess(self.build_s, 300, f"extended build took {self.build_s:.0f} s")


class TestImageWithoutListing(unittest.TestCase):
    """A custom image without /opt/sandgate/runtime.json: jobs run as before,
    the listing is unknown (executor 404, gateway available: false)."""

    IMAGE = f"sandgate/sandbox-python:{TAG}-nolisting"

    def test_jobs_run_and_the_listing_is_unknown(self):
        tex.require_engine_and_images()
        with tempfile.TemporaryDirectory() as ctx:
            with open(os.path.join(ctx, "Dockerfile"), "w") as f:
                f.write(f"FROM {sgtest.image('python')}\nUSER root\n"
                        "RUN rm /opt/sandgate/runtime.json\nUSER 65534:65534\n")
            r = subprocess.run(["docker", "build", "-q", "-t", self.IMAGE, ctx],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.addCleanup(subprocess.run, ["docker", "rmi", self.IMAGE], capture_output=True,
                        timeout=120)
        ex = tex.Executor("python", pool_size=1, extra=("--image", self.IMAGE))
        try:
            st, _, body = sgtest.http("GET", ex.url + "/v1/runtime")
            self.assertEqual((st, body["error"]["code"]), (404, "runtime_unknown"), body)
            self.assertIn("event=runtime_unknown", ex.daemon.tail())
            self.assertEqual(ex.ok("def main():\n    return 7\n")["result"]["value"], 7)
            js = gateway_fakes.FakeExecutor("nodejs")
            gw = gateway_fakes.Gateway({"executors": {"python": [ex.url], "nodejs": [js.url]}})
            try:
                st, _, body = gw.call("GET", "/v1/runtimes")
                py = body["runtimes"]["python"]
                self.assertFalse(py["available"], py)
                self.assertIn("answered HTTP 404", py["error"])
            finally:
                self.assertEqual(gw.stop(), 0)
                js.stop()
        finally:
            self.assertEqual(ex.stop(), 0, ex.daemon.tail())
            self.assertEqual(ex.containers(), [])
