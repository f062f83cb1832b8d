"""The real sandgate binary routing to fake executors: round robin,
failover on connect errors without running a job twice, pool_busy retries,
outages, failures after the job was sent (never retried), time budgets,
slow-executor isolation, saturation, SIGHUP reload under load (policies and
tokens, a bad file keeps the old set) and SIGTERM drain."""
import base64
import json
import signal
import threading
import time
import unittest

from gateway_fakes import FakeExecutor, Gateway, dead_url

JS_OK = "function main(a) { return a; }\nmodule.exports = { main };\n"
TOKEN_OLD = "old-tenant-token-0123456789"
TOKEN_NEW = "new-tenant-token-0123456789"


def js_job(**extra):
    body = {"language": "nodejs", "code": JS_OK, "arguments": {"n": 1}}
    body.update(extra)
    return body


class RoutingCase(unittest.TestCase):
    def setUp(self):
        self.fakes = []
        self.gw = None

    def tearDown(self):
        try:
            if self.gw:
                self.assertEqual(self.gw.stop(), 0)
        finally:
            for f in self.fakes:
                f.stop()

    def fake(self):
        f = FakeExecutor("nodejs")
        self.fakes.append(f)
        return f

    def start(self, js_urls, **cfg):
        config = {"executors": {"python": [dead_url()], "nodejs": js_urls}}
        config.update(cfg)
        self.gw = Gateway(config)
        return self.gw

    def run_js(self, **extra):
        return self.gw.call("POST", "/v1/run", js_job(**extra))


class TestRouting(RoutingCase):
    def test_round_robin_over_healthy_executors(self):
        a, b = self.fake(), self.fake()
        self.start([a.url, b.url])
        for _ in range(6):
            st, _, body = self.run_js()
            self.assertEqual((st, body["status"]), (200, "success"), body)
        self.assertEqual((a.calls, b.calls), (3, 3))

    def test_failover_on_connect_error_runs_each_job_once(self):
        a, b = self.fake(), self.fake()
        self.start([a.url, b.url], health_interval_ms=600000)  # a stays marked healthy
        a.stop()  # now refuses connections
        self.fakes.remove(a)
        for i in range(4):
            st, _, body = self.run_js(arguments={"i": i})
            self.assertEqual(st, 200, body)
        self.assertEqual(b.calls, 4)
        self.assertEqual(sorted(j["arguments"]["i"] for j in b.jobs), [0, 1, 2, 3],
                         "every job ran exactly once")
        _, _, text = self.gw.call("GET", "/metrics")
        self.assertIn(f'sandgate_executor_up{{language="nodejs",url="{a.url}"}} 0', text)

    def test_busy_executor_is_retried_elsewhere(self):
        a, b = self.fake(), self.fake()
        a.mode = "busy"
        self.start([a.url, b.url])
        st, _, body = self.run_js()
        self.assertEqual(st, 200, body)
        self.assertEqual((a.calls, b.calls), (1, 1))
        b.mode = "busy"
        st, hdrs, body = self.run_js()
        self.assertEqual(st, 503, body)
        self.assertEqual(body["error"]["code"], "executor_busy")
        self.assertEqual(hdrs.get("retry-after"), "1")
        self.assertEqual((a.calls, b.calls), (2, 2), "one attempt each, no more")

    def test_busy_pool_on_ragflow_run_is_ragflows_own_answer(self):
        # RAGFlow's executor manager answers HTTP 200, program_runner_error,
        # exit_code -10 when no container became free; /run keeps that shape.
        a = self.fake()
        a.mode = "busy"
        self.start([a.url])
        code = base64.b64encode(JS_OK.encode()).decode()
        st, hdrs, body = self.gw.call("POST", "/run", {"code_b64": code, "language": "nodejs"})
        self.assertEqual(st, 200, body)
        self.assertEqual((body["status"], body["exit_code"], body["detail"], body["stderr"]),
                         ("program_runner_error", -10, "no_available_container",
                          "Container pool is busy"))
        self.assertEqual(body["result"], {"present": False, "value": None, "type": "json"})
        self.assertEqual(body["artifacts"], [])
        self.gw.wait_for(lambda: any(x.get("outcome") == "executor_busy"
                                     for x in self.gw.audit_lines()), what="audit")

    def test_outage_is_502_with_a_clear_message(self):
        self.start([dead_url(), dead_url()])
        st, _, body = self.gw.call("POST", "/run", {"code_b64": "ZnVuY3Rpb24gbWFpbigpIHt9"
                                                    "Cm1vZHVsZS5leHBvcnRzID0geyBtYWluIH07Cg==",
                                                    "language": "nodejs"})
        self.assertEqual(st, 502, body)
        self.assertEqual(body["error"]["code"], "executor_unreachable")
        self.assertIn("unreachable", body["error"]["message"])
        st, _, body = self.gw.call("GET", "/readyz")
        self.assertEqual(st, 503)

    def test_failure_after_sending_is_never_retried(self):
        for mode, needle in (("error500", "HTTP 500"), ("hangup", "executor"),
                             ("garbage", "invalid JSON")):
            with self.subTest(mode=mode):
                a, b = self.fake(), self.fake()
                a.mode = mode
                self.start([a.url, b.url])
                st, _, body = self.run_js()
                self.assertEqual(st, 502, body)
                self.assertEqual(body["error"]["code"], "executor_failed")
                self.assertIn(needle, body["error"]["message"])
                self.assertEqual((a.calls, b.calls), (1, 0), "the job may have run: no retry")
                self.assertEqual(self.gw.stop(), 0)
                self.gw = None

    def test_time_budget_is_the_job_limit_plus_grace(self):
        a, b = self.fake(), self.fake()
        a.delay = 3
        self.start([a.url, b.url], exec_grace_ms=300)
        t = time.time()
        st, _, body = self.run_js(limits={"timeout_ms": 200})
        self.assertLess(time.time() - t, 2.0)
        self.assertEqual(st, 502, body)
        self.assertIn("time budget", body["error"]["message"])
        self.assertEqual(b.calls, 0)
        self.assertEqual(a.jobs[0]["limits"]["timeout_ms"], 200)

    def test_slow_executor_does_not_block_other_requests(self):
        a = self.fake()
        a.delay = 2
        self.start([a.url])
        results = []
        slow = [threading.Thread(target=lambda: results.append(self.run_js())) for _ in range(2)]
        t0 = time.time()
        for th in slow:
            th.start()
        self.gw.wait_for(lambda: a.calls == 2, what="both slow jobs at the executor")
        for _ in range(20):
            t = time.time()
            st, _, body = self.gw.call("POST", "/v1/analyze", {"language": "nodejs",
                                                               "code": JS_OK})
            self.assertEqual(st, 200, body)
            st, _, _ = self.gw.call("GET", "/healthz")
            self.assertEqual(st, 200)
            self.assertLess(time.time() - t, 0.5, "answered while slow jobs are in flight")
        for th in slow:
            th.join()
        self.assertLess(time.time() - t0, 3.5, "the two slow jobs ran concurrently")
        self.assertEqual([r[0] for r in results], [200, 200])

    def test_saturated_executor_is_503(self):
        a = self.fake()
        a.delay = 1.5
        self.start([a.url], executor_max_inflight=1)
        th = threading.Thread(target=self.run_js)
        th.start()
        self.gw.wait_for(lambda: a.calls == 1, what="first job at the executor")
        st, _, body = self.run_js()
        th.join()
        self.assertEqual(st, 503, body)
        self.assertIn("limit", body["error"]["message"])
        self.assertEqual(a.calls, 1)


class TestUnderLoad(RoutingCase):
    def test_job_lost_mid_run_is_executor_failed_and_never_resent(self):
        a, b = self.fake(), self.fake()
        a.mode = "ok_then_hangup"
        self.start([a.url], busy_retries=1)
        self.gw.call("POST", "/v1/run", js_job())  # a first job: a connection could be reused
        st, _, body = self.run_js()
        self.assertEqual(st, 502, body)
        self.assertEqual(body["error"]["code"], "executor_failed")
        self.assertEqual(a.calls, 2, "the lost job was sent again")

    def test_no_more_jobs_than_the_executor_takes_and_the_rest_503_at_once(self):
        a = self.fake()
        a.max_jobs, a.delay = 2, 1.5
        self.start([a.url], busy_retries=0)
        self.gw.wait_for(lambda: self.gw.call("GET", "/readyz")[2]["executors"]["nodejs"][0]
                         ["limit"] == 2, what="the advertised capacity")
        results = []

        def one():
            t = time.time()
            st, hdrs, body = self.run_js()
            results.append((st, hdrs, body, time.time() - t))
        threads = [threading.Thread(target=one) for _ in range(5)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(a.calls, 2)
        busy = [r for r in results if r[0] == 503]
        self.assertEqual(len(busy), 3, [r[:3:2] for r in results])
        for st, hdrs, body, dt in busy:
            self.assertEqual(body["error"]["code"], "executor_busy")
            self.assertIn("retry-after", hdrs)
            self.assertLess(dt, 1.0)

    def test_no_idle_connection_holds_an_executor_slot_after_a_burst(self):
        a, p = self.fake(), self.fake()
        self.start([a.url], executors={"python": [p.url], "nodejs": [a.url]})
        threads = [threading.Thread(target=self.run_js) for _ in range(16)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.gw.wait_for(lambda: a.open_connections == 0, timeout=2,
                         what="no connection left open at the executor")
        st, _, body = self.gw.call("GET", "/readyz")
        self.assertEqual(st, 200, body)


class TestReloadAndDrain(RoutingCase):
    def policy(self, name, description):
        with open(self.gw.policies_dir + "/default.json") as f:
            doc = json.load(f)
        doc["name"], doc["description"] = name, description
        return doc

    def policies(self):
        _, _, body = self.gw.call("GET", "/v1/policies")
        return {p["name"]: p for p in body["policies"]}

    def test_reload_under_load_loses_no_request(self):
        a = self.fake()
        self.start([a.url])
        stop = threading.Event()
        failures, counts = [], [0]

        def load(path, body):
            while not stop.is_set():
                st, _, resp = self.gw.call("POST", path, body)
                counts[0] += 1
                if st != 200:
                    failures.append((st, resp))

        analyze = {"language": "nodejs", "code": JS_OK}
        workers = [threading.Thread(target=load, args=("/v1/analyze", analyze)),
                   threading.Thread(target=load, args=("/v1/analyze", analyze)),
                   threading.Thread(target=load, args=("/v1/run", js_job()))]
        for w in workers:
            w.start()
        try:
            for i in range(8):
                self.gw.write_policy("extra", self.policy("extra", f"generation {i}"))
                self.gw.daemon.signal(signal.SIGHUP)
                time.sleep(0.15)
            self.gw.wait_for(lambda: self.policies().get("extra", {}).get("description") ==
                             "generation 7", what="last good reload")
            sha = self.policies()["extra"]["sha256"]
            self.gw.write_policy("broken", '{"name": "broken", "python": {"enabled": 3}}')
            self.gw.daemon.signal(signal.SIGHUP)
            time.sleep(0.3)
        finally:
            stop.set()
            for w in workers:
                w.join()
        self.assertEqual(failures, [], "no request failed during reloads")
        self.assertGreater(counts[0], 50)
        pols = self.policies()
        self.assertNotIn("broken", pols, "a bad file is refused")
        self.assertEqual(pols["extra"]["sha256"], sha, "the old set stays")
        _, _, text = self.gw.call("GET", "/metrics")
        self.assertIn('sandgate_reloads_total{result="failed"} 1', text)
        self.assertIn("reload_failed", self.gw.daemon.tail(10 ** 8))

    def test_tokens_reload(self):
        a = self.fake()
        tokens = {"tenants": {"t": {"tokens": [TOKEN_OLD]}}}
        self.gw = Gateway({"executors": {"python": [dead_url()], "nodejs": [a.url]}},
                          tokens=tokens)
        body = {"language": "nodejs", "code": JS_OK}

        def status(tok):
            return self.gw.call("POST", "/v1/analyze", body, {"X-Sandbox-Token": tok})[0]

        self.assertEqual((status(TOKEN_OLD), status(TOKEN_NEW)), (200, 401))
        self.gw.write_tokens({"tenants": {"t": {"tokens": [TOKEN_NEW]}}})
        self.gw.daemon.signal(signal.SIGHUP)
        self.gw.wait_for(lambda: status(TOKEN_NEW) == 200, what="new token accepted")
        self.assertEqual(status(TOKEN_OLD), 401, "the removed token is refused")
        self.gw.write_tokens('{"tenants": {"t": {"tokens": ["short"]}}}')
        self.gw.daemon.signal(signal.SIGHUP)
        time.sleep(0.5)
        self.assertEqual(status(TOKEN_NEW), 200, "a bad tokens file keeps the old set")

    def test_sigterm_drains_in_flight_requests(self):
        a = self.fake()
        a.delay = 1.5
        self.start([a.url])
        result = []
        th = threading.Thread(target=lambda: result.append(self.run_js()))
        th.start()
        self.gw.wait_for(lambda: a.calls == 1, what="job at the executor")
        self.gw.daemon.signal(signal.SIGTERM)
        th.join()
        self.assertEqual(result[0][0], 200, result)
        self.assertEqual(self.gw.daemon.proc.wait(10), 0)
        self.assertIn("unfinished=0", self.gw.daemon.tail(10 ** 8))
        with self.assertRaises(OSError):
            self.gw.call("GET", "/healthz", timeout=2)


if __name__ == "__main__":
    unittest.main()
