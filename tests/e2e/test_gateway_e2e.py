"""sandgate end to end: the real gateway (sanitizer build) in front of real
sandgate-executors (python and nodejs) on dockerd + runsc, driven with
RAGFlow's own request shapes: {"code_b64", "language": "python"|"nodejs",
"arguments"} on POST /run, checking what RAGFlow's code component reads
(status, stdout, stderr, result.present/value), plus a policy rejection that
never reaches a container, a program error and a time limit."""
import base64
import os
import sys
import unittest

import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)


def b64(s):
    return base64.b64encode(s.encode()).decode()


class GatewayE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.py = tex.Executor("python", pool_size=2, extra=("--max-timeout-ms", "20000"))
        try:
            cls.js = tex.Executor("nodejs", pool_size=1)
        except BaseException:
            cls.py.daemon.stop(timeout=60)
            raise
        cls.gw = gateway_fakes.Gateway({"executors": {"python": [cls.py.url],
                                                      "nodejs": [cls.js.url]},
                                        "exec_grace_ms": 10000})

    @classmethod
    def tearDownClass(cls):
        rc, left = tex.stop_gateway_and_executors(cls.gw, (cls.py, cls.js))
        assert rc == 0
        assert left == [], f"containers left behind: {left}"

    def ragflow(self, code, language="python", arguments=None):
        st, _, body = self.gw.call("POST", "/run", {"code_b64": b64(code), "language": language,
                                                    "arguments": arguments or {}}, timeout=120)
        self.assertEqual(st, 200, body)
        return body

    def executor_jobs(self):
        _, _, text = sgtest.http("GET", self.py.url + "/metrics")
        return [line for line in text.splitlines()
                if line.startswith("sandgate_executor_jobs_total")]

    def test_python_result_stdout_and_arguments(self):
        body = self.ragflow("def main(a, b):\n    print('sum is', a + b)\n"
                            "    return {'sum': a + b}\n", arguments={"a": 2, "b": 3})
        self.assertEqual(body["status"], "success", body)
        self.assertEqual(body["stdout"], "sum is 5\n")
        self.assertEqual(body["result"], {"present": True, "value": {"sum": 5}, "type": "json"})
        self.assertEqual(body["exit_code"], 0)

    def test_nodejs_result_via_the_javascript_alias(self):
        body = self.ragflow("function main(args) {\n  console.log('twice', args.n * 2);\n"
                            "  return args.n * 2;\n}\nmodule.exports = { main };\n",
                            language="javascript", arguments={"n": 21})
        self.assertEqual(body["status"], "success", body)
        self.assertEqual(body["stdout"], "twice 42\n")
        self.assertEqual(body["result"]["value"], 42)
        self.assertTrue(body["result"]["present"])

    def test_unsafe_code_is_rejected_before_any_container(self):
        before = self.executor_jobs()
        body = self.ragflow("import subprocess\n\ndef main():\n"
                            "    return subprocess.check_output(['id'])\n")
        self.assertEqual((body["status"], body["exit_code"], body["detail"]),
                         ("program_runner_error", -999, "Code is unsafe"))
        self.assertTrue(body["stderr"].startswith("Line 1: "), body["stderr"])
        self.assertIn("import.not-allowed", [v["rule"] for v in body["violations"]])
        self.assertEqual(self.executor_jobs(), before, "the executor saw no job")

    def test_program_error_and_time_limit(self):
        body = self.ragflow("def main():\n    raise ValueError('bad input')\n")
        self.assertEqual(body["status"], "program_error", body)
        self.assertIn("bad input", body["stderr"])
        self.assertFalse(body["result"]["present"])
        st, _, body = self.gw.call("POST", "/v1/run", {
            "language": "python", "code": "def main():\n    while True:\n        pass\n",
            "limits": {"timeout_ms": 1500}}, timeout=120)
        self.assertEqual(st, 200, body)
        self.assertEqual((body["status"], body["exit_code"], body["resource_limit_type"]),
                         ("resource_limit_exceeded", -124, "time"), body)
        self.assertEqual(body["limits"]["timeout_ms"], 1500)


if __name__ == "__main__":
    unittest.main()
