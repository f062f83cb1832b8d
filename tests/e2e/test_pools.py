"""Pool flavours end to end (real dockerd + runsc + the sandbox image): a job
is handed to the warm pool whose runner already imported what the job
imports; a plain job never takes a heavy sandbox; an empty heavy pool falls
back to a lighter one and the job still succeeds; the memory budget holds
under a burst of heavy jobs; per-flavour figures in /healthz and /metrics.

Pools are kept tiny (one sandbox per flavour): a heavy sandbox costs ~90 MB
and ~2 s of CPU to create on this small machine.
"""
import os
import sys
import threading
import time
import unittest

import sgtest
from test_executor import Executor, require_engine_and_images

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402

# The job reports whether pandas was imported before its own code ran: the
# runner imports main.py after its pre-import, so True means a warm pandas.
PANDAS_JOB = ("import sys\nPRE = 'pandas' in sys.modules\nimport pandas as pd\n"
              "def main():\n    df = pd.DataFrame({'a': [1, 2, 3]})\n"
              "    return {'pre': PRE, 'sum': int(df['a'].sum())}\n")
# The same for the gateway, whose default policy does not allow sys: an
# import served from the pre-imported module takes microseconds, a cold
# import of pandas under gVisor the best part of a second.
GW_PANDAS_JOB = ("import time\nT0 = time.perf_counter()\nimport pandas as pd\n"
                 "WARM = time.perf_counter() - T0 < 0.25\n"
                 "def main():\n    return {'warm': WARM, 'sum': int(pd.Series([1, 2, 3]).sum())}\n")
GW_PLAIN_JOB = "import json\ndef main():\n    return json.dumps([1])\n"
PLAIN_JOB = ("import sys\nimport json\n"
             "def main():\n    return {'pre': 'pandas' in sys.modules or 'numpy' in sys.modules}\n")


def flavour(health, name):
    return [f for f in health["flavours"] if f["name"] == name][0]


def wait_flavours(ex, want, timeout=90, key="idle"):
    """Until every flavour in want (name -> n) has at least n of key."""
    deadline = time.time() + timeout
    body = None
    while time.time() < deadline:
        _, _, body = ex.health()
        if isinstance(body, dict) and all(flavour(body, n)[key] >= k for n, k in want.items()):
            return body
        time.sleep(0.2)
    raise AssertionError(f"flavours never reached {want} ({key}): {body}\n{ex.daemon.tail()}")


def metric(text, name, flav):
    line = f'sandgate_executor_flavour_{name}{{flavour="{flav}"}} '
    for l in text.splitlines():
        if l.startswith(line):
            return float(l[len(line):])
    raise AssertionError(f"no {line!r} in metrics")


class PoolsCase(unittest.TestCase):
    extra = ()

    @classmethod
    def setUpClass(cls):
        require_engine_and_images()
        cls.ex = Executor("python", 1, ("--pool-wait-ms", "30000", "--max-timeout-ms", "30000")
                          + cls.extra, wait_idle=False)

    @classmethod
    def tearDownClass(cls):
        rc = cls.ex.stop()
        left = cls.ex.containers()
        assert rc == 0, f"executor exited with {rc}: {cls.ex.daemon.tail()}"
        assert left == [], f"containers left behind: {left}"

    def metrics(self):
        status, _, text = sgtest.http("GET", self.ex.url + "/metrics")
        self.assertEqual(status, 200)
        return text


class FlavourRouting(PoolsCase):
    """The gateway in front: its analysis names the job's imports."""
    extra = ("--flavour", "plain:1", "--flavour", "pandas=numpy,pandas:1")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.ex.url]},
                                            "exec_grace_ms": 10000})
        except BaseException:
            cls.ex.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        rc = cls.gw.stop()
        super().tearDownClass()
        assert rc == 0

    def setUp(self):
        wait_flavours(self.ex, {"plain": 1, "pandas": 1})

    def v1_run(self, code):
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": code},
                                   timeout=120)
        self.assertEqual(st, 200, body)
        return body

    def test_gateway_routes_pandas_job_by_its_analysis(self):
        body = self.v1_run(GW_PANDAS_JOB)
        self.assertEqual(body["status"], "success", body)
        self.assertEqual(body["pool"], {"flavour": "pandas", "fallback": False})
        self.assertEqual(body["timings"]["executor"]["pool"], "pandas")
        self.assertEqual(body["result"]["value"], {"warm": True, "sum": 6})

    def test_gateway_routes_plain_job_to_plain(self):
        body = self.v1_run(GW_PLAIN_JOB)
        self.assertEqual(body["pool"], {"flavour": "plain", "fallback": False}, body)
        self.assertEqual(body["result"]["value"], "[1]")
        # the cached verdict keeps the imports: the second run routes the same way
        wait_flavours(self.ex, {"plain": 1, "pandas": 1})
        body = self.v1_run(GW_PANDAS_JOB)
        if not body["timings"]["cached"]:
            wait_flavours(self.ex, {"plain": 1, "pandas": 1})
            body = self.v1_run(GW_PANDAS_JOB)
        self.assertTrue(body["timings"]["cached"], body["timings"])
        self.assertEqual(body["pool"]["flavour"], "pandas")

    def test_pandas_job_served_by_pandas_flavour(self):
        r = self.ex.ok(PANDAS_JOB, imports=["sys", "pandas"], limits={"timeout_ms": 20000})
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(r["pool"], {"flavour": "pandas", "fallback": False})
        self.assertEqual(r["timings"]["pool"], "pandas")
        self.assertEqual(r["result"]["value"], {"pre": True, "sum": 6},
                         "pandas was imported before the job: the warm flavour did it")
        # an idle pandas sandbox has finished importing (its runner said so)
        # before the pool offered it: the job does not wait for the import
        self.assertLess(r["timings"]["run_ms"], 800, r["timings"])

    def test_plain_job_served_by_plain_flavour(self):
        r = self.ex.ok(PLAIN_JOB, imports=["sys", "json"])
        self.assertEqual(r["pool"], {"flavour": "plain", "fallback": False})
        self.assertEqual(r["result"]["value"], {"pre": False}, "a plain sandbox imported nothing")
        r = self.ex.ok(PLAIN_JOB)  # no imports at all: plain as well
        self.assertEqual(r["pool"]["flavour"], "plain")

    def test_dotted_import_counts_by_top_level(self):
        r = self.ex.ok(PANDAS_JOB, imports=["pandas.io.json"])
        self.assertEqual(r["pool"]["flavour"], "pandas")

    def test_bad_imports_refused(self):
        for bad in ("pandas", [1], ["a b"], ["x" * 129], ["m%d" % i for i in range(65)]):
            status, _, body = self.ex.run(PLAIN_JOB, imports=bad)
            self.assertIn(status, (400, 413), (bad, body))
            self.assertIn("imports", body["error"]["message"])
        self.ex.ok(PLAIN_JOB)  # and the executor keeps serving

    def test_health_and_metrics_per_flavour(self):
        self.ex.ok(PANDAS_JOB, imports=["pandas"])
        self.ex.ok(PLAIN_JOB)
        # memory is read from a warm sandbox that settled (POOL_SETTLE_MS)
        body = wait_flavours(self.ex, {"plain": 1, "pandas": 1}, key="memory_measured")
        pandas, plain = flavour(body, "pandas"), flavour(body, "plain")
        self.assertEqual(pandas["preimport"], "numpy,pandas")
        self.assertGreater(pandas["memory_mb"], plain["memory_mb"],
                           "pre-imported pandas costs memory")
        self.assertGreater(pandas["create_ms"], plain["create_ms"],
                           "a pandas sandbox's refill time includes its pre-import")
        self.assertGreaterEqual(pandas["hits"], 1)
        text = self.metrics()
        self.assertGreaterEqual(metric(text, "hits_total", "pandas"), 1)
        self.assertGreaterEqual(metric(text, "hits_total", "plain"), 1)
        self.assertEqual(metric(text, "size", "pandas"), 1)
        self.assertEqual(metric(text, "memory_measured", "pandas"), 1)
        self.assertGreater(metric(text, "memory_bytes", "pandas"), 20 * 2**20)


class EmptyHeavyPoolFallsBack(PoolsCase):
    """A budget that leaves no room for a pandas sandbox: pandas jobs take a
    plain one (and import pandas themselves) instead of waiting forever; the
    planned warm memory never exceeds the budget, even under a burst."""
    extra = ("--flavour", "plain:2", "--flavour", "pandas=numpy,pandas:1",
             "--pool-memory-mb", "60")

    def test_burst_of_heavy_jobs_within_budget(self):
        wait_flavours(self.ex, {"plain": 1})
        results, errors = [], []

        def one():
            try:
                results.append(self.ex.ok(PANDAS_JOB, imports=["pandas"],
                                          limits={"timeout_ms": 20000}))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=one) for _ in range(3)]
        for t in threads:
            t.start()
        planned = []
        while any(t.is_alive() for t in threads):
            _, _, h = self.ex.health()
            planned.append(h["pool"]["memory_planned_mb"])
            self.assertEqual(flavour(h, "pandas")["target"], 0, "no room for pandas")
            self.assertEqual(len(sgtest.containers_with_label(
                f"org.sandgate.pool={self.ex.instance}.pandas")), 0)
            time.sleep(0.2)
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 3)
        for r in results:
            self.assertEqual(r["status"], "success", r)
            self.assertEqual(r["pool"], {"flavour": "plain", "fallback": True})
            self.assertEqual(r["result"]["value"], {"pre": False, "sum": 6})
        self.assertTrue(planned and max(planned) <= 60, planned)
        _, _, h = self.ex.health()
        self.assertEqual(h["pool"]["memory_budget_mb"], 60)
        self.assertLessEqual(h["pool"]["memory_planned_mb"], 60)
        text = self.metrics()
        self.assertGreaterEqual(metric(text, "fallbacks_total", "plain"), 3)
        self.assertGreaterEqual(metric(text, "arrivals_total", "pandas"), 3)
        self.assertEqual(metric(text, "target", "pandas"), 0)

    def test_plain_job_never_takes_heavy(self):
        r = self.ex.ok(PLAIN_JOB)
        self.assertEqual(r["pool"], {"flavour": "plain", "fallback": False})


class AdaptiveSizing(PoolsCase):
    """With --pool-adaptive a flavour keeps what its recent arrival rate needs
    for one refill (at least one), not its whole size."""
    extra = ("--flavour", "plain:3", "--pool-adaptive", "true")

    def test_quiet_flavour_keeps_one(self):
        body = wait_flavours(self.ex, {"plain": 1})
        plain = flavour(body, "plain")
        self.assertEqual(plain["size"], 3)
        self.assertEqual(plain["target"], 1, body)
        r = self.ex.ok(PLAIN_JOB)
        self.assertEqual(r["pool"]["flavour"], "plain")
        self.assertEqual(metric(self.metrics(), "target", "plain"), 1)


if __name__ == "__main__":
    unittest.main()
