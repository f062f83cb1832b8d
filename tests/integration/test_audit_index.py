"""The audit index and GET /v1/audit with the real sandgate binary and fake
executors: tenant scoping and the admin flag, filters and cursor pages, the
job detail with its code as audit_code says, console calls audited, and the
index's life: catch-up after a stop and after a crash, rotation while running
and while stopped, retention by rows, the sandgate-audit rebuild command."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes

sys.path.insert(0, os.path.join(sgtest.ROOT, "bench"))
import gen_audit_log  # noqa: E402  (the benchmark's generator of audit lines)

OK_PY = "def main():\n    return 1\n"
BAD_PY = "import os\n\ndef main():\n    return os.getcwd()\n"
TOKEN_A = "tenant-a-token-0123456789"
TOKEN_B = "tenant-b-token-0123456789"
TOKEN_OPS = "operator-token-0123456789"
TOKENS = {"tenants": {
    "alpha": {"tokens": [TOKEN_A], "audit_code": "all", "policies": ["default"]},
    "gamma": {"tokens": ["gamma-token-0123456789"], "policies": ["strict"],
              "default_policy": "strict"},
    "beta": {"tokens": [TOKEN_B]},
    "ops": {"tokens": [TOKEN_OPS], "admin": True},
}}


def auth(token):
    return {"Authorization": "Bearer " + token}


class AuditCase(GatewayWithFakes):
    extra = {}

    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gw(self.config(), tokens=self.tokens)

    tokens = TOKENS

    def config(self, **more):
        cfg = {"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
               "audit_index": "AUDIT_DB"}
        cfg.update(self.extra)
        cfg.update(more)
        return cfg

    def run_job(self, code, token):
        st, hdr, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": code},
                                     auth(token))
        self.assertEqual(st, 200, body)
        return hdr["x-request-id"], body

    def list(self, token, query=""):
        return self.gw.call("GET", "/v1/audit" + query, None, auth(token))

    def wait_indexed(self, token, request_id, timeout=10):
        def seen():
            st, _, body = self.gw.call("GET", "/v1/audit/" + request_id, None, auth(token))
            return st == 200
        self.gw.wait_for(seen, timeout, f"{request_id} in the index")


class Gw(Gateway):
    """A Gateway whose config names its index inside its own directory."""

    def __init__(self, config, **kw):
        super().__init__(config, start=False, **kw)
        with open(self.config_path) as f:
            cfg = json.load(f)
        if cfg.get("audit_index") == "AUDIT_DB":
            cfg["audit_index"] = os.path.join(self.dir, "audit.db")
        with open(self.config_path, "w") as f:
            json.dump(cfg, f)
        self.start()


class TestQueries(AuditCase):
    def setUp(self):
        super().setUp()
        self.a_ok, _ = self.run_job(OK_PY, TOKEN_A)
        self.a_bad, body = self.run_job(BAD_PY, TOKEN_A)
        self.rule = body["violations"][0]["rule"]
        self.b_bad, _ = self.run_job(BAD_PY, TOKEN_B)
        self.b_ok, _ = self.run_job(OK_PY, TOKEN_B)
        self.wait_indexed(TOKEN_OPS, self.b_ok)

    def ids(self, resp):
        st, _, body = resp
        self.assertEqual(st, 200, body)
        return [i["request_id"] for i in body["items"]]

    def test_a_tenant_sees_only_its_own_jobs(self):
        self.assertEqual(self.ids(self.list(TOKEN_A)), [self.a_bad, self.a_ok])
        self.assertEqual(self.ids(self.list(TOKEN_B)), [self.b_ok, self.b_bad])
        st, _, body = self.list(TOKEN_A, "?tenant=beta")
        self.assertEqual((st, body["error"]["code"]), (403, "forbidden"))
        st, _, body = self.gw.call("GET", "/v1/audit/" + self.b_bad, None, auth(TOKEN_A))
        self.assertEqual((st, body["error"]["code"]), (404, "not_found"))
        st, _, _ = self.gw.call("GET", "/v1/audit", None, None)
        self.assertEqual(st, 401)
        st, _, _ = self.gw.call("GET", "/v1/audit", None, auth("not-a-token-0123456789"))
        self.assertEqual(st, 401)

    def test_an_admin_sees_every_tenant_and_filters_by_tenant(self):
        self.assertEqual(self.ids(self.list(TOKEN_OPS)),
                         [self.b_ok, self.b_bad, self.a_bad, self.a_ok])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?tenant=alpha")), [self.a_bad, self.a_ok])
        st, _, body = self.gw.call("GET", "/v1/audit/" + self.b_bad, None, auth(TOKEN_OPS))
        self.assertEqual((st, body["tenant"]), (200, "beta"))

    def test_filters(self):
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?rule=" + self.rule)),
                         [self.b_bad, self.a_bad])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?verdict=accept")), [self.b_ok, self.a_ok])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?verdict=reject&tenant=beta")),
                         [self.b_bad])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?outcome=success&language=python")),
                         [self.b_ok, self.a_ok])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?endpoint=v1_run&policy=default")),
                         [self.b_ok, self.b_bad, self.a_bad, self.a_ok])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?language=nodejs")), [])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?status=200&rule=nope")), [])
        self.assertEqual(self.ids(self.list(TOKEN_OPS, "?until=2000-01-01T00:00:00Z")), [])
        self.assertEqual(len(self.ids(self.list(TOKEN_OPS, "?since=2000-01-01T00:00:00.5Z"))), 4)
        item = self.list(TOKEN_OPS, "?rule=" + self.rule)[2]["items"][0]
        self.assertEqual(item["rules"], [self.rule])
        self.assertEqual(item["policy"], "default")
        self.assertEqual(len(item["policy_sha256"]), 64)
        self.assertRegex(item["time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

    def test_bad_queries_are_400(self):
        for q in ("?limit=0", "?limit=201", "?limit=x", "?cursor=abc", "?cursor=-1",
                  "?since=yesterday", "?until=2026-13-01T00:00:00Z", "?status=99",
                  "?rule=", "?tenant=" + "x" * 300):
            st, _, body = self.list(TOKEN_OPS, q)
            self.assertEqual((st, body["error"]["code"]), (400, "bad_request"), q)

    def test_cursor_pages(self):
        seen, cursor = [], None
        for _ in range(10):
            st, _, body = self.list(TOKEN_OPS, "?limit=1" + (f"&cursor={cursor}" if cursor else ""))
            self.assertEqual(st, 200, body)
            seen += [i["request_id"] for i in body["items"]]
            cursor = body["next_cursor"]
            if not cursor:
                break
        self.assertEqual(seen, [self.b_ok, self.b_bad, self.a_bad, self.a_ok])
        st, _, body = self.list(TOKEN_OPS, "?limit=3&rule=" + self.rule)
        self.assertEqual((len(body["items"]), body["next_cursor"]), (2, None))

    def test_the_detail_keeps_code_as_the_tenant_says(self):
        _, _, a_bad = self.gw.call("GET", "/v1/audit/" + self.a_bad, None, auth(TOKEN_A))
        self.assertEqual(a_bad["code"], BAD_PY)
        v = a_bad["violations"][0]
        self.assertEqual((v["rule"], v["line"], v["column"]), (self.rule, 1, 8), v)  # "os" in "import os"
        self.assertTrue(v["message"])
        _, _, a_ok = self.gw.call("GET", "/v1/audit/" + self.a_ok, None, auth(TOKEN_A))
        self.assertEqual(a_ok["code"], OK_PY)  # alpha: audit_code "all"
        _, _, b_bad = self.gw.call("GET", "/v1/audit/" + self.b_bad, None, auth(TOKEN_B))
        self.assertEqual(b_bad["code"], BAD_PY)  # beta: the default, "rejected"
        _, _, b_ok = self.gw.call("GET", "/v1/audit/" + self.b_ok, None, auth(TOKEN_B))
        self.assertNotIn("code", b_ok)
        self.assertEqual(b_ok["outcome"], "success")

    def test_console_calls_are_audited_and_listed_only_on_request(self):
        st, hdr, _ = self.list(TOKEN_B)
        rid = hdr["x-request-id"]
        self.assertEqual(hdr["cache-control"], "no-store")
        self.gw.wait_for(lambda: any(l["request_id"] == rid for l in self.gw.audit_lines()),
                         5, "the console call's audit line")
        line = [l for l in self.gw.audit_lines() if l["request_id"] == rid][0]
        self.assertEqual((line["endpoint"], line["tenant"], line["status"]), ("console", "beta", 200))
        self.wait_indexed(TOKEN_B, rid)
        self.assertNotIn(rid, self.ids(self.list(TOKEN_B)))
        self.assertIn(rid, self.ids(self.list(TOKEN_B, "?endpoint=console")))

    def test_summary_of_the_last_hour(self):
        st, _, body = self.list(TOKEN_OPS, "/summary")
        self.assertEqual(st, 200, body)
        self.assertEqual(len(body["minutes"]), 60)
        outcomes, busy = {}, [m for m in body["minutes"] if m["requests"]]
        for m in busy:
            for k, v in m["outcomes"].items():
                outcomes[k] = outcomes.get(k, 0) + v
        self.assertEqual(outcomes, {"success": 2, "rejected": 2})
        self.assertLessEqual(len(busy), 2)  # this minute, or across a minute's end
        self.assertEqual(sum(m["requests"] for m in busy), 4)
        for m in busy:
            self.assertLessEqual(m["p50_ms"], m["p99_ms"])
        self.assertEqual(body["rules"], [{"rule": self.rule, "count": 2}])
        _, _, mine = self.list(TOKEN_A, "/summary")  # a tenant: its own lines only
        self.assertEqual(sum(m["requests"] for m in mine["minutes"]), 2)
        self.assertEqual(mine["rules"], [{"rule": self.rule, "count": 1}])
        _, _, beta = self.list(TOKEN_OPS, "/summary?tenant=beta")
        self.assertEqual(sum(m["requests"] for m in beta["minutes"]), 2)
        self.assertEqual(self.list(TOKEN_A, "/summary?tenant=beta")[0], 403)

    def test_one_policy_document(self):
        st, _, body = self.gw.call("GET", "/v1/policies/default", None, auth(TOKEN_A))
        self.assertEqual(st, 200, body)
        self.assertEqual((body["name"], body["default"], len(body["sha256"])), ("default", True, 64))
        self.assertEqual(body["document"]["python"]["imports"]["mode"], "allow")
        self.assertIn("runtime", body["document"]["python"])
        # a policy the tenant may not use is as unknown as a missing one
        st, _, body = self.gw.call("GET", "/v1/policies/default", None,
                                   auth("gamma-token-0123456789"))
        self.assertEqual((st, body["error"]["code"]), (404, "policy_not_found"))
        st, _, body = self.gw.call("GET", "/v1/policies/strict", None,
                                   auth("gamma-token-0123456789"))
        self.assertEqual((st, body["name"]), (200, "strict"))
        st, _, body = self.gw.call("GET", "/v1/policies/nope", None, auth(TOKEN_A))
        self.assertEqual((st, body["error"]["code"]), (404, "policy_not_found"))
        self.assertEqual(self.gw.call("GET", "/v1/policies/default", None, None)[0], 401)

    def test_only_get(self):
        st, hdr, body = self.gw.call("POST", "/v1/audit", {}, auth(TOKEN_OPS))
        self.assertEqual((st, body["error"]["code"], hdr["allow"]), (405, "method_not_allowed", "GET"))


class TestRateLimit(AuditCase):
    tokens = {"tenants": {"slow": {"tokens": [TOKEN_A],
                                   "rate_limit": {"per_second": 1, "burst": 2}}}}

    def test_console_calls_share_the_tenants_rate_limit(self):
        codes = [self.list(TOKEN_A)[0] for _ in range(4)]
        self.assertEqual(codes[:2], [200, 200])
        self.assertIn(429, codes[2:])


class TestIndexOff(AuditCase):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}},
                          tokens=TOKENS)

    def test_404_when_off(self):
        st, _, body = self.list(TOKEN_OPS)
        self.assertEqual((st, body["error"]["code"]), (404, "audit_index_off"))


def count_rows(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT count(*), count(DISTINCT request_id) FROM audit "
                         "WHERE endpoint IS NOT 'console'").fetchone()


def append_generated(path, n, start=0):
    now = int(time.time() * 1000)
    with open(path, "a") as f:
        for i in range(start, start + n):
            f.write(gen_audit_log.line(i, start + n, None, now) + "\n")


class TestIndexLife(AuditCase):
    """Restarts, crashes, rotation, retention, rebuild."""

    def wait_rows(self, n, timeout=20):
        self.gw.wait_for(lambda: count_rows(self.gw_db())[0] == n, timeout, f"{n} rows")

    def gw_db(self):
        return os.path.join(self.gw.dir, "audit.db")

    def test_catches_up_after_a_stop_and_after_a_crash(self):
        first, _ = self.run_job(OK_PY, TOKEN_A)
        self.wait_indexed(TOKEN_A, first)
        self.assertEqual(self.gw.daemon.stop(), 0)
        append_generated(self.gw.audit_path, 500)  # written while the gateway was down
        self.gw.start()
        self.wait_rows(501)
        # a crash in the middle of a large catch-up: nothing lost, nothing twice
        self.gw.daemon.stop(signal.SIGKILL)
        append_generated(self.gw.audit_path, 60000, start=1000)
        self.gw.start()
        time.sleep(0.3)
        self.gw.daemon.stop(signal.SIGKILL)
        mid = count_rows(self.gw_db())
        self.gw.start()
        self.wait_rows(60501, timeout=120)
        self.assertEqual(count_rows(self.gw_db()), (60501, 60501))
        self.assertLess(mid[0], 60501, "the crash came after the catch-up; make the log longer")

    def test_rotation_while_running_and_while_stopped(self):
        one, _ = self.run_job(OK_PY, TOKEN_A)
        self.wait_indexed(TOKEN_A, one)
        os.rename(self.gw.audit_path, self.gw.audit_path + ".1")
        two, _ = self.run_job(OK_PY, TOKEN_A)  # still written to the renamed file
        self.gw.daemon.signal(signal.SIGHUP)  # the writer reopens the path
        self.gw.wait_for(lambda: os.path.exists(self.gw.audit_path), 5, "a new log")
        three, _ = self.run_job(OK_PY, TOKEN_A)
        for rid in (two, three):
            self.wait_indexed(TOKEN_A, rid)
        self.assertEqual(self.gw.daemon.stop(), 0)
        os.rename(self.gw.audit_path, self.gw.audit_path + ".2")
        self.gw.start()
        four, _ = self.run_job(OK_PY, TOKEN_A)
        self.wait_indexed(TOKEN_A, four)
        st, _, body = self.list(TOKEN_A)
        self.assertEqual([i["request_id"] for i in body["items"]], [four, three, two, one])

    def test_rebuild_command_takes_rotated_logs(self):
        one, _ = self.run_job(OK_PY, TOKEN_A)
        self.wait_indexed(TOKEN_A, one)
        self.assertEqual(self.gw.daemon.stop(), 0)
        os.rename(self.gw.audit_path, self.gw.audit_path + ".1")
        append_generated(self.gw.audit_path, 300)
        with open(self.gw.audit_path, "a") as f:
            f.write("not json\n" + "{\"request_id\": \"x\"}\n" + "x" * 70000 + "\n")
        out = subprocess.run([sgtest.binary("sandgate-audit"), "-c", self.gw.config_path,
                              "rebuild", self.gw.audit_path + ".1"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(" 3 skipped)", out.stdout)
        self.assertEqual(count_rows(self.gw_db()), (301, 301))
        self.gw.start()  # continues after what the rebuild read
        two, _ = self.run_job(OK_PY, TOKEN_A)
        self.wait_indexed(TOKEN_A, two)
        self.assertEqual(count_rows(self.gw_db()), (302, 302))

    def test_rebuild_usage(self):
        cmd = sgtest.binary("sandgate-audit")
        self.assertEqual(subprocess.run([cmd, "--help"], capture_output=True).returncode, 0)
        self.assertEqual(subprocess.run([cmd, "frobnicate"], capture_output=True).returncode, 2)
        self.assertEqual(subprocess.run([cmd, "sync"], capture_output=True).returncode, 2)


class TestRetention(AuditCase):
    extra = {"audit_index_max_rows": 1000}

    def test_keeps_the_newest_max_rows(self):
        self.assertEqual(self.gw.daemon.stop(), 0)
        append_generated(self.gw.audit_path, 3000)
        self.gw.start()
        db = os.path.join(self.gw.dir, "audit.db")
        self.gw.wait_for(lambda: count_rows(db)[0] == 1000, 20, "1000 rows")
        with sqlite3.connect(db) as c:
            newest = c.execute("SELECT min(request_id) FROM audit").fetchone()[0]
            rules = c.execute("SELECT count(*) FROM audit_rule WHERE audit_id NOT IN "
                              "(SELECT id FROM audit)").fetchone()[0]
        self.assertEqual(newest, "%016x" % (0x5eed000000000000 + 2000))
        self.assertEqual(rules, 0)


if __name__ == "__main__":
    unittest.main()
