"""Honest outcomes from the runners (issue 16): integers beyond 64 bits come
back exactly (result.value_json), what the program scribbles on the runner's
report pipe (NaN, deep nesting, huge numbers) is the program's own failure and
never crashes the runner, a Node promise that never settles is not a
success, and unknown memory is null. Driven with the docker CLI as in
test_runners.py (same images, same container settings)."""
import json
import unittest

from test_runners import JS_IMAGE, PY_IMAGE, run_job, setUpModule, tearDownModule  # noqa: F401

# Writes `payload` to every descriptor the program holds that accepts it: one
# of them is the runner's report pipe. Then leaves without a report of its own.
PY_SCRIBBLE = ("import os\n"
               "def main():\n"
               "    for fd in range(3, 64):\n"
               "        try:\n"
               "            os.write(fd, {payload!r})\n"
               "        except OSError:\n"
               "            pass\n"
               "    os._exit(0)\n")
RESULT_MAX_DEPTH = 512


def py(code, **kw):
    return run_job(PY_IMAGE, dict(code=code, **kw))[0]


def js(code, **kw):
    return run_job(JS_IMAGE, dict(code=code, **kw))[0]


class PythonBigIntegers(unittest.TestCase):
    def test_integers_beyond_64_bits_come_back_exactly(self):
        r = py("import math\ndef main():\n"
               "    return {'a': 2 ** 64, 'f': math.factorial(25), 'n': -2 ** 70, 's': 'x'}\n")
        self.assertEqual(r["outcome"], "ok", r)
        self.assertNotIn("value", r["result"])
        value = json.loads(r["result"]["value_json"])
        self.assertEqual(value, {"a": 2 ** 64, "f": 15511210043330985984000000,
                                 "n": -2 ** 70, "s": "x"})
        self.assertIn("15511210043330985984000000", r["result"]["value_json"])

    def test_top_level_big_integer(self):
        r = py("def main():\n    return 2 ** 64\n")
        self.assertEqual(r["result"], {"present": True, "value_json": "18446744073709551616"})

    def test_64_bit_integers_stay_plain_values(self):
        r = py("def main():\n    return [2 ** 63 - 1, -2 ** 63]\n")
        self.assertEqual(r["result"], {"present": True, "value": [2 ** 63 - 1, -2 ** 63]})

    def test_integer_beyond_any_json_number_is_a_clear_error(self):
        r = py("def main():\n    return 10 ** 400\n")
        self.assertEqual(r["outcome"], "exception", r)
        self.assertIn("too large for a JSON number", r["message"])

    def test_result_nested_too_deep_is_a_clear_error(self):
        r = py(f"def main():\n    v = 1\n    for _ in range({RESULT_MAX_DEPTH + 1}):\n"
               "        v = [v]\n    return v\n")
        self.assertEqual(r["outcome"], "exception", r)
        self.assertIn(f"deeper than {RESULT_MAX_DEPTH}", r["message"])
        r = py(f"def main():\n    v = 1\n    for _ in range({RESULT_MAX_DEPTH}):\n"
               "        v = [v]\n    return v\n")
        self.assertEqual(r["outcome"], "ok", r)


class PythonReportPipe(unittest.TestCase):
    def assert_programs_failure(self, payload):
        r = py(PY_SCRIBBLE.format(payload=payload))
        self.assertEqual((r["outcome"], r["exit_code"]), ("exception", 1), r)
        self.assertIn("unreadable report", r["message"])
        self.assertNotIn("Traceback", r["stderr"])
        self.assertNotIn("runner.py", json.dumps(r))
        return r

    def test_nan_is_not_json(self):
        self.assert_programs_failure(b'{"outcome":"ok","present":true,"value":NaN}')
        self.assert_programs_failure(b'{"outcome":"ok","present":true,"value":-Infinity}')

    def test_deep_nesting(self):
        self.assert_programs_failure(b'{"outcome":"ok","present":true,"value":'
                                     + b"[" * 1500 + b"]" * 1500 + b"}")

    def test_number_beyond_double(self):
        self.assert_programs_failure(b'{"outcome":"ok","present":true,"value":1e400}')

    def test_lone_surrogate_and_odd_message(self):
        self.assert_programs_failure(b'{"outcome":"ok","present":true,"value":"\\ud800"}')
        r = py(PY_SCRIBBLE.format(payload=b'{"outcome":"exception","message":{"a":1}}'))
        self.assertEqual(r["outcome"], "exception", r)

    def test_unknown_memory_is_null(self):
        r = run_job(PY_IMAGE, {"code": 5})[0]
        self.assertEqual(r["outcome"], "bad_job")
        self.assertIsNone(r["memory_used_kb"])


class NodeBigNumbers(unittest.TestCase):
    def test_numbers_beyond_64_bits_are_json_numbers(self):
        r = js("function main() { return {a: 1e20, b: 2 ** 63, c: [-(2 ** 64)], d: 5}; }\n")
        self.assertEqual(r["outcome"], "ok", r)
        self.assertNotIn("value", r["result"])
        text = r["result"]["value_json"]
        # exactly what JSON.stringify writes: the shortest text of each double
        self.assertEqual(json.loads(text), {"a": 10 ** 20, "b": 9223372036854776000,
                                            "c": [-18446744073709552000], "d": 5})
        self.assertEqual(text, '{"a":100000000000000000000,"b":9223372036854776000,'
                               '"c":[-18446744073709552000],"d":5}')

    def test_plain_numbers_stay_values(self):
        r = js("function main() { return [1, 1.5, 1e300, -(2 ** 53)]; }\n")
        self.assertEqual(r["result"], {"present": True, "value": [1, 1.5, 1e300, -(2 ** 53)]})

    def test_result_nested_too_deep_is_a_clear_error(self):
        r = js(f"function main() {{ let v = 1; for (let i = 0; i < {RESULT_MAX_DEPTH + 1}; i++)"
               " v = [v]; return v; }\n")
        self.assertEqual(r["outcome"], "exception", r)
        self.assertIn(f"deeper than {RESULT_MAX_DEPTH}", r["message"])

    def test_scribbled_report_is_not_the_report(self):
        """Reports the runner could not read were the program's exception; a
        line without the job's report token is now no report at all (the
        runner's own validation of a report: tests/unit/test_node_runner.c)."""
        for payload in ('{"outcome":"ok","present":true,"value_json":"NaN"}',
                        '{"outcome":"ok","present":true,"value_json":"' + "[" * 1500 + "]" * 1500
                        + '"}',
                        '{"outcome":"ok","present":true,"value_json":"1e400"}'):
            with self.subTest(payload=payload[:60]):
                r = js("const fs = require('fs');\n"
                       f"function main() {{ fs.writeSync(4, {json.dumps(payload + chr(10))});"
                       " return 1; }\n")
                self.assertEqual((r["outcome"], r["result"]),
                                 ("ok", {"present": True, "value": 1}), r)


class NodePromises(unittest.TestCase):
    def test_promise_that_never_settles_with_nothing_left_to_run(self):
        r = js("async function main() { await new Promise(() => {}); return 1; }\n")
        self.assertEqual(r["outcome"], "exception", r)
        self.assertIn("never settled", r["message"])
        r = js("function main() { return new Promise(() => {}); }\n")
        self.assertEqual(r["outcome"], "exception", r)
        self.assertIn("never settled", r["message"])

    def test_pending_promise_waits_for_the_time_limit(self):
        r = js("function main() { return new Promise((ok) => setTimeout(ok, 1e9)); }\n",
               limits={"timeout_ms": 1500})
        self.assertEqual(r["outcome"], "timeout", r)
        self.assertGreaterEqual(r["time_used_ms"], 1500)

    def test_work_started_by_the_programs_own_before_exit_is_waited_for(self):
        r = js("let settle;\n"
               "process.on('beforeExit', () => setTimeout(() => settle && settle(5), 50));\n"
               "function main() { return new Promise((ok) => { settle = ok; }); }\n")
        self.assertEqual(r["result"], {"present": True, "value": 5}, r)

    def test_promise_settled_by_a_later_timer_is_waited_for(self):
        r = js("function main() { return new Promise((ok) => setTimeout(() => ok(7), 300)); }\n")
        self.assertEqual(r["result"], {"present": True, "value": 7}, r)


if __name__ == "__main__":
    unittest.main()
