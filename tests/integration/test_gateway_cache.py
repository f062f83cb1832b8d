"""The gateway's verdict cache over HTTP with fake executors: a resubmitted
job is answered from the cache (and says so in the response, the audit line
and /metrics), an accepted cached job still runs, the key covers policy and
language, a policy reload misses, and analysis_cache_entries 0 disables it."""
import signal
import unittest

from gateway_fakes import policy_with
from test_gateway_api import GatewayCase

OK_PY = "import json\n\ndef main(x=1):\n    return json.dumps({'x': x})\n"
BAD_PY = "import os\n\ndef main():\n    return os.system('id')\n"


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics")


class CacheCase(GatewayCase):
    def analyze(self, code, language="python", policy=None):
        body = {"language": language, "code": code}
        if policy:
            body["policy"] = policy
        st, _, out = self.gw.call("POST", "/v1/analyze", body)
        self.assertEqual(st, 200, out)
        return out

    def metrics(self):
        st, _, text = self.gw.call("GET", "/metrics")
        self.assertEqual(st, 200)
        return text


class TestVerdictCache(CacheCase):
    def test_resubmitted_job_is_answered_from_the_cache(self):
        first = self.analyze(BAD_PY)
        second = self.analyze(BAD_PY)
        self.assertFalse(first["stats"]["cached"])
        self.assertTrue(second["stats"]["cached"])
        self.assertEqual(second["verdict"], "reject")
        self.assertEqual(second["violations"], first["violations"])
        self.assertEqual(second["stats"]["nodes"], first["stats"]["nodes"])
        self.assertEqual(second["stats"]["parse_ms"], 0, "nothing was parsed for a hit")
        text = self.metrics()
        self.assertEqual(metric(text, 'sandgate_analysis_cache_lookups_total{result="hit"}'), 1)
        self.assertEqual(metric(text, 'sandgate_analysis_cache_lookups_total{result="miss"}'), 1)
        self.assertEqual(metric(text, "sandgate_analysis_cache_entries"), 1)
        self.assertGreater(metric(text, "sandgate_analysis_cache_bytes"), 0)
        # verdict metrics count every answer, cached or not
        self.assertEqual(metric(text, 'sandgate_verdicts_total{verdict="reject"}'), 2)
        self.gw.wait_for(lambda: len(self.gw.audit_lines()) >= 2, what="2 audit lines")
        a, b = self.gw.audit_lines()[:2]
        self.assertEqual((a["analysis_cached"], b["analysis_cached"]), (False, True))
        self.assertEqual(b["verdict"], "reject")
        self.assertEqual(b["rules"], a["rules"])

    def test_cached_accept_still_runs_and_cached_reject_never_does(self):
        for _ in range(2):
            st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": OK_PY,
                                                           "arguments": {"x": 3}})
            self.assertEqual(st, 200, body)
            self.assertEqual(body["status"], "success")
        self.assertTrue(body["timings"]["cached"])
        self.assertEqual(self.py.calls, 2, "the cache replaces the analysis, not the run")
        self.assertEqual(self.py.jobs[1]["code"], OK_PY)
        for _ in range(2):
            st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": BAD_PY})
            self.assertEqual(body["status"], "program_runner_error")
        self.assertTrue(body["timings"]["cached"])
        self.assertEqual(body["violations"][0]["rule"], "import.not-allowed")
        self.assertEqual(self.py.calls, 2)

    def test_policy_and_language_are_part_of_the_key(self):
        self.analyze(OK_PY)
        self.assertFalse(self.analyze(OK_PY, policy="strict")["stats"]["cached"])
        self.assertTrue(self.analyze(OK_PY, policy="strict")["stats"]["cached"])
        js = self.analyze(OK_PY, language="nodejs")
        self.assertFalse(js["stats"]["cached"])
        self.assertEqual(js["verdict"], "reject", "not JavaScript: the Python verdict is not reused")
        self.assertFalse(self.analyze(OK_PY + "\n")["stats"]["cached"])

    def test_policy_reload_misses_and_applies_the_new_policy(self):
        # "closed" starts with Python disabled; the reload enables it
        self.assertEqual(self.analyze(OK_PY, policy="closed")["violations"][0]["rule"],
                         "language.disabled")
        self.assertTrue(self.analyze(OK_PY, policy="closed")["stats"]["cached"])
        self.gw.write_policy("closed", policy_with("closed", imports={"mode": "deny",
                                                                      "modules": ["json"]}))
        self.gw.daemon.signal(signal.SIGHUP)
        self.gw.wait_for(lambda: 'sandgate_reloads_total{result="ok"} 1' in self.metrics(),
                         what="reload")
        after = self.analyze(OK_PY, policy="closed")
        self.assertFalse(after["stats"]["cached"], "a new policy sha256 is a new key")
        self.assertEqual(after["verdict"], "reject")
        self.assertEqual(after["violations"][0]["rule"], "import.denied")


class TestCacheDisabled(CacheCase):
    gw_config = {"analysis_cache_entries": 0}

    def test_zero_entries_disables_the_cache(self):
        for _ in range(3):
            self.assertFalse(self.analyze(BAD_PY)["stats"]["cached"])
        text = self.metrics()
        self.assertEqual(metric(text, 'sandgate_analysis_cache_lookups_total{result="hit"}'), 0)
        self.assertEqual(metric(text, "sandgate_analysis_cache_entries"), 0)


if __name__ == "__main__":
    unittest.main()
