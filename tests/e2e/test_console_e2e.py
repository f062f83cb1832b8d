"""The operator console in a real browser: Debian's headless Chromium driven by
playwright-core (console_browser.mjs) against the gateway (sanitizer build)
with real executors on dockerd + runsc and this checkout's images.

Sign in; a Python job's first line streamed before the job ends; `import os`
marked on line 1 with its rule as you type; a job printing HTML shown as
text; the audit filtered by rule and the job opened with its violation
underlined; another tenant's jobs invisible (page and API); session mode
keeping `x` between cells; the Overview's warm pool rows. Each test saves a screenshot under
build/console-e2e/. Needs chromium (make deps) and the console's packages
(make console); fails otherwise.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import gateway_fakes
import sgtest
import test_executor as tex

TOKEN_A, TOKEN_B = "console-a-" + "a" * 22, "console-b-" + "b" * 22
TOKENS = {"tenants": {"alice": {"tokens": [TOKEN_A], "audit_code": "all"},
                      "bob": {"tokens": [TOKEN_B]}}}
SHOTS = os.path.join(sgtest.ROOT, "build", "console-e2e")
CHROMIUM = os.environ.get("SANDGATE_CHROMIUM", "/usr/bin/chromium")
REJECTED = "import os\n\ndef main():\n    return os.getcwd()\n"


def setUpModule():
    if not os.access(CHROMIUM, os.X_OK):
        raise AssertionError(f"{CHROMIUM} is missing: run 'make deps' (Debian chromium)")
    r = subprocess.run(["make", "--no-print-directory", "-C", sgtest.ROOT, "console"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f"make console failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
    tex.require_engine_and_images()
    os.makedirs(SHOTS, exist_ok=True)


class ConsoleE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = tex.Executor("python", pool_size=2, extra=("--max-sessions", "4"))
        cls.js = None
        try:
            cls.js = tex.Executor("nodejs", pool_size=1)
            cls.gw = gateway_fakes.Gateway(
                {"executors": {"python": [cls.py.url], "nodejs": [cls.js.url]},
                 "console_dir": os.path.join(sgtest.ROOT, "build", "console"),
                 "audit_index": "AUDIT_DB"}, tokens=TOKENS, start=False)
            cls.gw_index()
            cls.gw.start()
        except BaseException:
            for ex in (cls.py, cls.js):
                if ex:
                    ex.stop()
            raise

    @classmethod
    def gw_index(cls):
        with open(cls.gw.config_path) as f:
            cfg = json.load(f)
        cfg["audit_index"] = os.path.join(cls.gw.dir, "audit.db")
        with open(cls.gw.config_path, "w") as f:
            json.dump(cfg, f)

    @classmethod
    def tearDownClass(cls):
        rc, left = tex.stop_gateway_and_executors(cls.gw, (cls.py, cls.js))
        assert rc == 0
        assert left == [], f"containers left behind: {left}"

    def browse(self, scenario, token=TOKEN_A, tenant="alice", **extra):
        profile = tempfile.mkdtemp(prefix="sg-chromium-")
        self.addCleanup(shutil.rmtree, profile, True)
        env = dict(os.environ, SG_URL=self.gw.url, SG_TOKEN=token, SG_TENANT=tenant,
                   SG_USER_DATA=profile, SG_CHROMIUM=CHROMIUM,
                   SG_SHOT=os.path.join(SHOTS, f"{scenario}.png"), **extra)
        t0 = time.time()
        r = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "console_browser.mjs"),
                            scenario], env=env, capture_output=True, text=True, timeout=150)
        self.assertEqual(r.returncode, 0, f"{scenario} ({time.time() - t0:.1f} s): {r.stderr[-3000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])["seen"]

    def job(self, code, token):
        st, hdr, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": code},
                                     {"Authorization": f"Bearer {token}"}, timeout=60)
        self.assertEqual(st, 200, body)
        return hdr["x-request-id"]

    def indexed(self, token, rid):
        self.gw.wait_for(lambda: self.gw.call("GET", f"/v1/audit/{rid}", None,
                                              {"Authorization": f"Bearer {token}"})[0] == 200,
                         15, f"{rid} in the audit index")

    def served_from_a_pool(self):
        st, _, body = self.gw.call("GET", "/v1/overview", None,
                                   {"Authorization": f"Bearer {TOKEN_A}"})
        return st == 200 and any(f["hits"] + f["fallbacks"] > 0 for e in body["executors"]
                                 if e["language"] == "python" and e["pools"]
                                 for f in e["pools"]["flavours"])

    def test_assets_are_served_strictly(self):
        st, hdr, body = self.gw.call("GET", "/console/")
        self.assertEqual(st, 200)
        self.assertEqual(hdr["content-type"], "text/html; charset=utf-8")
        self.assertIn("script-src 'self'", hdr["content-security-policy"])
        self.assertNotIn("unsafe-inline", hdr["content-security-policy"])
        self.assertEqual(hdr["x-content-type-options"], "nosniff")
        self.assertEqual(hdr["cache-control"], "no-cache")

    def test_sign_in(self):
        seen = self.browse("signin")
        self.assertIn("alice", seen["who"])

    def test_first_line_streams_before_the_job_ends(self):
        seen = self.browse("stream")
        self.assertEqual(seen["during"]["stdout"], "first\n")

    def test_cancel_stops_a_running_job(self):
        seen = self.browse("cancel")
        self.assertLess(seen["seconds"], 25)

    def test_import_os_is_marked_on_line_1_with_its_rule(self):
        seen = self.browse("marker")
        self.assertEqual(seen["line"]["line"], 1)

    def test_output_is_text_not_html(self):
        seen = self.browse("xss")
        self.assertEqual(seen["imgs"], 0)

    def test_audit_filtered_by_rule_and_the_job_opened(self):
        rid = self.job(REJECTED, TOKEN_A)
        self.indexed(TOKEN_A, rid)
        seen = self.browse("audit", SG_JOB=rid)
        self.assertEqual(seen["job"]["underlined"][0], "os")

    def test_a_tenant_cannot_see_another_tenants_jobs(self):
        ids = [self.job(REJECTED, TOKEN_A), self.job("def main():\n    return 1\n", TOKEN_A)]
        for rid in ids:
            self.indexed(TOKEN_A, rid)
        bob = {"Authorization": f"Bearer {TOKEN_B}"}
        st, _, listing = self.gw.call("GET", "/v1/audit?limit=200", None, bob)
        self.assertEqual(st, 200)
        self.assertFalse({i["request_id"] for i in listing["items"]} & set(ids))
        self.assertEqual(self.gw.call("GET", f"/v1/audit/{ids[0]}", None, bob)[0], 404)
        self.assertEqual(self.gw.call("GET", "/v1/audit?tenant=alice", None, bob)[0], 403)
        self.browse("isolation", token=TOKEN_B, tenant="bob", SG_OTHER_JOBS=",".join(ids))

    def test_policies_and_overview_pages(self):
        self.browse("policies")
        self.job("def main():\n    return 1\n", TOKEN_A)
        self.gw.wait_for(self.served_from_a_pool, 15, "the job in the pools' figures")
        seen = self.browse("overview")
        self.assertGreater(seen["bars"], 0)
        # a pool row per flavour, without the executors' URLs for a tenant
        rows = {(r["language"], r["flavour"]): r for r in seen["pools"]}
        self.assertIn(("python", "plain"), rows, seen["pools"])
        py = rows[("python", "plain")]
        self.assertNotIn("executor", py)
        self.assertRegex(py["size/target"], r"^\d+/\d+$")
        self.assertRegex(py["creation time"], r"^\d+ ms$")
        self.assertGreaterEqual(sum(int(r["hits"]) + int(r["fall-backs"]) for r in seen["pools"]
                                    if r["language"] == "python"), 1)  # the job above
        self.assertIn("jobs in flight: ", seen["inFlight"])

    def test_session_mode_keeps_x_between_cells(self):
        seen = self.browse("session")
        self.assertEqual((seen["first"], seen["second"]), ("41\n", "42\n"))


if __name__ == "__main__":
    unittest.main()
