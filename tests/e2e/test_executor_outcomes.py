"""sandgate-executor end to end (real dockerd + runsc + the sandbox images):
outcomes are classified by evidence. A program that SIGKILLs the runner
(PID 1, same uid) is not an out-of-memory limit unless the engine says OOM;
a runner that dies shows a fixed message, never its own traceback or paths
(those go to the executor log); integers beyond 64 bits pass through as
result.value_json; a Node promise that never settles is a program_error."""
import json
import unittest

from test_executor import ExecutorCase


class PythonOutcomes(ExecutorCase):
    language = "python"
    pool_size = 1

    def test_sigkill_to_the_runner_is_not_out_of_memory(self):
        r = self.ex.ok("import os, signal\ndef main():\n    os.kill(1, signal.SIGKILL)\n"
                       "    import time\n    time.sleep(30)\n", limits={"timeout_ms": 20000})
        self.assertEqual(r["status"], "program_error", r)
        self.assertIsNone(r["resource_limit_type"], r)
        self.assertEqual((r["exit_code"], r["runtime_error_type"]), (-9, "signalled"), r)
        self.assertIn("SIGKILL", r["detail"])
        self.assertIn("no out-of-memory", r["detail"])

    def test_runner_internals_never_reach_the_client(self):
        # SIGTERM makes the Python runner (PID 1) die with its own traceback
        # on the container's stderr: the client sees a fixed message.
        r = self.ex.ok("import os, signal, time\ndef main():\n"
                       "    os.kill(1, signal.SIGINT)\n    time.sleep(30)\n",
                       limits={"timeout_ms": 20000})
        text = json.dumps(r)
        self.assertNotIn("Traceback", text)
        self.assertNotIn("/opt/sandgate", text)
        self.assertEqual(r["status"], "program_runner_error", r)
        self.assertIn("the runner ended without a result", r["detail"])
        self.assertIn("Traceback", self.ex.daemon.tail(), "the full detail is in the log")

    def test_integers_beyond_64_bits(self):
        r = self.ex.ok("import math\ndef main():\n    return [2 ** 64, math.factorial(25), 1]\n")
        self.assertEqual(r["status"], "success", r)
        self.assertEqual(json.loads(r["result"]["value_json"]),
                         [2 ** 64, 15511210043330985984000000, 1])
        self.assertIsNone(r["result"]["value"])

    def test_nan_on_the_report_pipe_is_the_programs_error(self):
        r = self.ex.ok("import os\ndef main():\n    for fd in range(3, 64):\n        try:\n"
                       "            os.write(fd, b'{\"outcome\":\"ok\",\"present\":true,\"value\":NaN}')\n"
                       "        except OSError:\n            pass\n    os._exit(0)\n")
        self.assertEqual(r["status"], "program_error", r)
        self.assertIn("unreadable report", r["detail"])
        self.assertNotIn("Traceback", json.dumps(r))


class NodeOutcomes(ExecutorCase):
    language = "nodejs"
    pool_size = 1

    def test_sigkill_to_the_runner_is_not_out_of_memory(self):
        r = self.ex.ok("function main() { process.kill(1, 'SIGKILL'); return new Promise(() => "
                       "setTimeout(() => {}, 30000)); }\n", limits={"timeout_ms": 20000})
        self.assertEqual(r["status"], "program_error", r)
        self.assertIsNone(r["resource_limit_type"], r)
        self.assertIn("no out-of-memory", r["detail"])

    def test_big_numbers_and_a_promise_that_never_settles(self):
        r = self.ex.ok("function main() { return [1e20, 2 ** 63]; }\n")
        self.assertEqual(r["result"]["value_json"], "[100000000000000000000,9223372036854776000]", r)
        r = self.ex.ok("async function main() { await new Promise(() => {}); }\n")
        self.assertEqual(r["status"], "program_error", r)
        self.assertIn("never settled", r["detail"])


if __name__ == "__main__":
    unittest.main()
