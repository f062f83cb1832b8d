"""sandgate-executor end to end (real dockerd + runsc + the sandbox images):
outcomes are classified by evidence. A program that SIGKILLs PID 1 (in
Python its own, in Node the runner's) is not an out-of-memory limit unless
the engine says OOM; a runner's traceback or paths never reach the client; integers beyond 64 bits pass through as
result.value_json; a Node promise that never settles is a program_error."""
import http.client
import json
import unittest

import test_gateway_e2e as tge
from test_executor import ExecutorCase


class PythonOutcomes(ExecutorCase):
    language = "python"
    pool_size = 1

    def test_sigkill_to_pid_1_is_not_out_of_memory(self):
        # The job runs in its own PID namespace (images/python/isolation.py):
        # its PID 1 is itself, the runner is out of its reach. The kill ends
        # the job alone, and the runner reports the signal it saw.
        r = self.ex.ok("import os, signal\ndef main():\n    os.kill(1, signal.SIGKILL)\n"
                       "    import time\n    time.sleep(30)\n", limits={"timeout_ms": 20000})
        self.assertEqual(r["status"], "program_error", r)
        self.assertIsNone(r["resource_limit_type"], r)
        self.assertEqual((r["exit_code"], r["runtime_error_type"]), (-9, "signalled"), r)
        self.assertIn("killed by signal 9", r["detail"])

    def test_allocating_past_the_limit_is_memory_every_time(self):
        # The whole sandbox dies by SIGKILL; dockerd flags OOMKilled only
        # when it sees the OOM before the exit (about 1 in 8 it does not), so
        # the executor also looks for the engine's "oom" event.
        code = ("def main():\n    x = []\n    while True:\n"
                "        x.append(bytearray(16 << 20))\n")
        for i in range(8):
            r = self.ex.ok(code, limits={"timeout_ms": 20000})
            self.assertEqual((r["status"], r["resource_limit_type"]),
                             ("resource_limit_exceeded", "memory"), (i, r))

    def test_runner_internals_never_reach_the_client(self):
        # SIGINT to PID 1 reaches the job itself (its own PID namespace), not
        # the runner: the traceback the client sees is the program's only.
        r = self.ex.ok("import os, signal, time\ndef main():\n"
                       "    os.kill(1, signal.SIGINT)\n    time.sleep(30)\n",
                       limits={"timeout_ms": 20000})
        text = json.dumps(r)
        self.assertNotIn("/opt/sandgate", text)
        self.assertNotIn("runner.py", text)
        self.assertEqual(r["status"], "program_error", r)
        self.assertIn("KeyboardInterrupt", r["detail"])

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

    def test_sigkill_to_pid_1_is_not_out_of_memory(self):
        # The job is PID 1 of its own PID namespace (images/nodejs/README.md):
        # the runner is out of its reach, the kill ends the job alone, and the
        # runner reports the signal it saw.
        r = self.ex.ok("function main() { process.kill(1, 'SIGKILL'); return new Promise(() => "
                       "setTimeout(() => {}, 30000)); }\n", limits={"timeout_ms": 20000})
        self.assertEqual(r["status"], "program_error", r)
        self.assertIsNone(r["resource_limit_type"], r)
        self.assertEqual((r["exit_code"], r["runtime_error_type"]), (-9, "signalled"), r)
        self.assertIn("killed by signal SIGKILL", r["detail"])

    def test_big_numbers_and_a_promise_that_never_settles(self):
        r = self.ex.ok("function main() { return [1e20, 2 ** 63]; }\n")
        self.assertEqual(r["result"]["value_json"], "[100000000000000000000,9223372036854776000]", r)
        r = self.ex.ok("async function main() { await new Promise(() => {}); }\n")
        self.assertEqual(r["status"], "program_error", r)
        self.assertIn("never settled", r["detail"])


if __name__ == "__main__":
    unittest.main()


class GatewayExactNumbers(unittest.TestCase):
    """The whole path: runner -> executor -> gateway -> client bytes."""
    setUpClass = classmethod(tge.GatewayE2E.setUpClass.__func__)
    tearDownClass = classmethod(tge.GatewayE2E.tearDownClass.__func__)

    def raw_run(self, code, language):
        conn = http.client.HTTPConnection("127.0.0.1", self.gw.port, timeout=120)
        conn.request("POST", "/run", body=json.dumps({"code_b64": tge.b64(code),
                                                      "language": language}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        self.assertEqual(resp.status, 200, text)
        return text, json.loads(text)

    def test_python_factorial_and_node_1e20_reach_the_client_exactly(self):
        text, body = self.raw_run("import math\ndef main():\n"
                                  "    return {'f': math.factorial(25), 'p': 2 ** 64}\n", "python")
        self.assertEqual(body["status"], "success", body)
        self.assertEqual(body["result"], {"present": True, "type": "json",
                                          "value": {"f": 15511210043330985984000000,
                                                    "p": 18446744073709551616}})
        self.assertIn("15511210043330985984000000", text)
        self.assertNotIn("value_json", text)
        text, body = self.raw_run("function main() { return 1e20; }\n", "nodejs")
        self.assertEqual(body["result"]["value"], 10 ** 20, body)
        self.assertIn('"value":100000000000000000000', text)
