"""The real sandgate binary with fake executors: how executor outcomes reach
clients. RAGFlow's value sets on /run (a pids limit is shown as memory, the
native API keeps pids), unknown memory is null, file names the runners
reserve are the gateway's 400, and result values with integers beyond 64 bits
come back with their exact digits."""
import json
import unittest

from gateway_fakes import FakeExecutor, Gateway
from test_gateway_api import OK_PY, b64


class OutcomeCase(unittest.TestCase):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}})

    def tearDown(self):
        try:
            self.assertEqual(self.gw.stop(), 0)
        finally:
            self.py.stop()
            self.js.stop()

    def answer_with(self, **fields):
        base = self.py.answer

        def answer(job):
            a = base(job)
            a.update(fields)
            return a
        self.py.answer = answer

    def both(self):
        """The /run and the /v1/run answer to the same accepted job."""
        st, _, rag = self.gw.call("POST", "/run", {"code_b64": b64(OK_PY), "language": "python"})
        self.assertEqual(st, 200, rag)
        st, _, native = self.gw.call("POST", "/v1/run", {"code": OK_PY, "language": "python"})
        self.assertEqual(st, 200, native)
        return rag, native


class TestRagflowShape(OutcomeCase):
    def test_pids_limit_is_memory_on_run_and_pids_natively(self):
        self.answer_with(status="resource_limit_exceeded", exit_code=-126,
                         resource_limit_type="pids", result={"present": False},
                         detail="the sandbox was killed without a result (exit 2): process "
                                "limit reached")
        rag, native = self.both()
        self.assertEqual(rag["resource_limit_type"], "memory")
        self.assertEqual(rag["exit_code"], -126)
        self.assertIn("process limit", rag["detail"])
        self.assertEqual(native["resource_limit_type"], "pids")

    def test_ragflow_values_pass_unchanged(self):
        for t in ("time", "memory", "output", None):
            with self.subTest(t=t):
                self.answer_with(resource_limit_type=t)
                rag, native = self.both()
                self.assertEqual(rag["resource_limit_type"], t)
                self.assertEqual(native["resource_limit_type"], t)

    def test_unknown_memory_is_null_not_zero(self):
        self.answer_with(status="resource_limit_exceeded", resource_limit_type="time",
                         exit_code=-124, memory_used_kb=None)
        rag, native = self.both()
        self.assertIn("memory_used_kb", rag)
        self.assertIsNone(rag["memory_used_kb"])
        self.assertIsNone(native["memory_used_kb"])
        self.answer_with(memory_used_kb="lots")  # a wrong type is unknown too
        rag, _ = self.both()
        self.assertIsNone(rag["memory_used_kb"])
        self.answer_with(memory_used_kb=2048)
        rag, _ = self.both()
        self.assertEqual(rag["memory_used_kb"], 2048)

    def test_names_the_runners_reserve_are_bad_file_names(self):
        for name in ("main.py", "main.js", "artifacts"):
            with self.subTest(name=name):
                st, _, body = self.gw.call("POST", "/v1/run", {
                    "language": "python", "code": OK_PY, "files": {name: b64("x")}})
                self.assertEqual(st, 400, body)
                self.assertEqual(body["error"]["code"], "bad_file_name")
                self.assertIn(name, body["error"]["message"])
                self.assertIn("reserved", body["error"]["message"])
        self.assertEqual(self.py.calls, 0)
        st, _, body = self.gw.call("POST", "/v1/run", {
            "language": "python", "code": OK_PY, "files": {"main.py.csv": b64("x")}})
        self.assertEqual(st, 200, body)


if __name__ == "__main__":
    unittest.main()
