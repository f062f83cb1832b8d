"""The real sandgate binary with fake executors: how executor outcomes reach
clients. RAGFlow's value sets on /run (a pids limit is shown as memory, the
native API keeps pids), unknown memory is null, file names the runners
reserve are the gateway's 400, and result values with integers beyond 64 bits
come back with their exact digits."""
import http.client
import json
import unittest

from gateway_fakes import GatewayWithFakes, FakeExecutor, Gateway
from test_gateway_api import OK_PY, b64


class OutcomeCase(GatewayWithFakes):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}})


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

    def test_nothing_ran_means_memory_null_on_every_door(self):
        unsafe = "import os\ndef main():\n    return os.getcwd()\n"
        st, _, rag = self.gw.call("POST", "/run", {"code_b64": b64(unsafe), "language": "python"})
        self.assertEqual((st, rag["detail"]), (200, "Code is unsafe"), rag)
        self.assertIn("memory_used_kb", rag)
        self.assertIsNone(rag["memory_used_kb"])
        st, _, native = self.gw.call("POST", "/v1/run", {"code": unsafe, "language": "python"})
        self.assertEqual((st, native["detail"]), (200, "Code is unsafe"), native)
        self.assertIn("memory_used_kb", native)
        self.assertIsNone(native["memory_used_kb"])
        self.py.mode = "busy"  # RAGFlow's own pool-busy answer on /run
        st, _, rag = self.gw.call("POST", "/run", {"code_b64": b64(OK_PY), "language": "python"})
        self.assertEqual((st, rag["detail"]), (200, "no_available_container"), rag)
        self.assertIn("memory_used_kb", rag)
        self.assertIsNone(rag["memory_used_kb"])

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


class TestBigIntegers(OutcomeCase):
    def raw_both(self):
        """Both answers as raw text and parsed with Python's exact integers."""
        out = []
        for path, body in (("/run", {"code_b64": b64(OK_PY), "language": "python"}),
                           ("/v1/run", {"code": OK_PY, "language": "python"})):
            conn = http.client.HTTPConnection("127.0.0.1", self.gw.port, timeout=30)
            conn.request("POST", path, body=json.dumps(body),
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            text = resp.read().decode()
            conn.close()
            self.assertEqual(resp.status, 200, text)
            out.append((text, json.loads(text)))
        return out

    def test_value_json_is_written_as_the_exact_value(self):
        text = '{"big": [18446744073709551616, -1180591620717411303424, 1e20, "\\u0000x"]}'
        self.answer_with(result={"present": True, "value": None, "value_json": text,
                                 "type": "json"})
        for raw, body in self.raw_both():
            self.assertEqual(body["result"], {
                "present": True, "type": "json",
                "value": {"big": [2 ** 64, -2 ** 70, 1e20, "\x00x"]}}, raw)
            self.assertIn("18446744073709551616", raw)
            self.assertNotIn("value_json", raw)
            self.assertEqual(body["status"], "success")
            self.assertEqual(body["stdout"], "hello\n")

    def test_invalid_value_json_is_no_result(self):
        for bad in ("NaN", "[1,", "1e400", 5, "[" * 600 + "]" * 600):
            with self.subTest(bad=str(bad)[:20]):
                self.answer_with(result={"present": True, "value": None, "value_json": bad})
                for raw, body in self.raw_both():
                    self.assertEqual(body["result"]["present"], False, raw)
                    self.assertNotIn("value_json", raw)


if __name__ == "__main__":
    unittest.main()
