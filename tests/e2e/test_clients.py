"""The client libraries against the real stack: the gateway (sanitizer
build) in front of real executors (Python, Node) on dockerd + runsc, started
once. Each client's live tests run against it (clients/python/live,
clients/typescript/live: a job, a rejection, a stream's first output before
its end, cancel, a stream closed early, a session, a 429), and the README's
examples run exactly as a user would: `pip install ./clients/python` into a
fresh virtual environment, `npm pack` + `npm install <tarball>` into an empty
project, both offline."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import sgclients
import sgtest

sys.path.append(os.path.join(sgtest.ROOT, "tests", "integration"))  # after e2e: no shadowing
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)

TOKEN = "clients-tenant-token-0123456789abcdef"
LIMITED = "clients-limited-token-0123456789abcdef"
TENANTS = {"tenants": {"a": {"tokens": [TOKEN], "max_sessions": 4},
                       "limited": {"tokens": [LIMITED],
                                   "rate_limit": {"per_second": 1, "burst": 1}}}}


def readme_example(language):
    """The code block under `<!-- example: LANGUAGE -->` in README.md."""
    with open(os.path.join(sgtest.ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"<!-- example: %s -->\s*```\w*\n(.*?)```" % language, text, re.S)
    assert m, f"README.md has no '<!-- example: {language} -->' code block"
    return m.group(1)


class ClientsE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        t0 = time.monotonic()
        tex.require_engine_and_images()
        sgclients.build_typescript()  # before the executors: their pools are not kept waiting
        t1 = time.monotonic()
        cls.py = tex.Executor("python", pool_size=2)
        cls.js = None
        try:
            cls.js = tex.Executor("nodejs", pool_size=1)
            cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.py.url],
                                                          "nodejs": [cls.js.url]}},
                                           tokens=TENANTS)
        except BaseException:
            for ex in (cls.py, cls.js):
                if ex:
                    ex.stop()
            raise
        sys.stderr.write(f"[set-up: TypeScript build {t1 - t0:.1f} s, stack "
                         f"{time.monotonic() - t1:.1f} s] ")
        cls.env = {"SANDGATE_URL": cls.gw.url, "SANDGATE_TOKEN": TOKEN,
                   "SANDGATE_TEST_LIMITED_TOKEN": LIMITED,
                   "SANDGATE_TEST_AUDIT_LOG": cls.gw.audit_path}

    @classmethod
    def tearDownClass(cls):
        rc, left = tex.stop_gateway_and_executors(cls.gw, (cls.py, cls.js))
        assert rc == 0
        assert left == [], f"containers left behind: {left}"

    def setUp(self):
        self.t0 = time.monotonic()

    def tearDown(self):
        sys.stderr.write(f"[{time.monotonic() - self.t0:.1f} s] ")

    def check(self, passed, failed, out, at_least):
        sys.stderr.write(f"[{passed} passed] ")
        self.assertEqual(failed, 0, out[-8000:])
        self.assertGreaterEqual(passed, at_least, out[-8000:])

    def test_python_client_live(self):
        self.check(*sgclients.python_tests("live", self.env, timeout=300), at_least=11)

    def test_typescript_client_live(self):
        self.check(*sgclients.node_tests("live", self.env, timeout=300), at_least=12)

    def test_readme_examples_installed_offline(self):
        work = tempfile.mkdtemp(prefix="sg-clients-")
        self.addCleanup(shutil.rmtree, work, True)
        # Python: a fresh virtual environment, the package from the checkout, no index
        venv = os.path.join(work, "venv")
        rc, out = sgclients.run([sys.executable, "-m", "venv", venv], work, 120)
        self.assertEqual(rc, 0, out)
        pip = os.path.join(venv, "bin", "pip")
        rc, out = sgclients.run([pip, "install", "--no-index", sgclients.PY_DIR], work, 120,
                                {"PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull})
        self.assertEqual(rc, 0, out)
        example = os.path.join(work, "example.py")
        with open(example, "w") as f:
            f.write(readme_example("python"))
        rc, out = sgclients.run([os.path.join(venv, "bin", "python"), example], work, 120, self.env)
        self.assertEqual((rc, out), (0, "success 5\n"))
        # TypeScript: npm pack (its prepack build is the one build_typescript ran), then
        # an empty project installs the tarball offline
        rc, out = sgclients.run(["npm", "pack", "--ignore-scripts", "--pack-destination", work],
                                sgclients.TS_BUILD, 120)
        self.assertEqual(rc, 0, out)
        tarball = os.path.join(work, "sandgate-client-0.1.0.tgz")
        self.assertTrue(os.path.exists(tarball), out)
        app = os.path.join(work, "app")
        os.makedirs(app)
        with open(os.path.join(app, "package.json"), "w") as f:
            f.write('{"name": "app", "private": true}\n')
        rc, out = sgclients.run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                                 tarball], app, 120)
        self.assertEqual(rc, 0, out)
        with open(os.path.join(app, "example.mjs"), "w") as f:
            f.write(readme_example("typescript"))
        rc, out = sgclients.run(["node", "example.mjs"], app, 120, self.env)
        self.assertEqual((rc, out), (0, "success 5\n"))
        rc, out = sgclients.run(["node", "-e", "const {Client} = require('@sandgate/client');"
                                 "new Client().whoami().then(w => console.log(w.tenant.name))"],
                                app, 120, self.env)
        self.assertEqual((rc, out), (0, "a\n"))


if __name__ == "__main__":
    unittest.main()
