"""Dify's sandbox API end to end: the real gateway's Dify listener in front of
real Python and Node executors on dockerd + runsc, sent exactly what Dify's
code executor sends (its runner templates with the code and the base64
inputs filled in, the Jinja2 preload, "enable_network": true, X-Api-Key)
and read as Dify reads it (stdout, the <<RESULT>> tag). Dify's own
code-executor integration tests, then dify-sandbox's feature tests. Dify's
httpx and requests tests fetch an origin this suite starts on internal
Docker networks of its own, through sandgate's egress proxy and the host
packet filter (tests/lib/sgegress.py, which tests/e2e/test_egress.py uses
too): a tenant whose network list allows the origin gets its body and an
audit line recording the connection; a tenant without network gets
network.disabled."""
import base64
import json
import os
import re
import sys
import unittest

import sgegress
import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)

KEY = "dify-e2e-key-0123456789abcdef"
RESULT_TAG = "<<RESULT>>"

# What Dify's template transformers produce (api/core/helper/code_executor):
# the code, then a driver that decodes the base64 JSON inputs, calls main and
# prints the result between two <<RESULT>> tags.
PY_RUNNER = """{code}

import json
from base64 import b64decode

# decode and prepare input dict
inputs_obj = json.loads(b64decode('{inputs}').decode('utf-8'))

# execute main function
output_obj = main(**inputs_obj)

# convert output to json and print
output_json = json.dumps(output_obj, indent=4)
result = f'''<<RESULT>>{{output_json}}<<RESULT>>'''
print(result)
"""
JS_RUNNER = """
// declare main function
{code}

// decode and prepare input object
var inputs_obj = JSON.parse(Buffer.from('{inputs}', 'base64').toString('utf-8'))

// execute main function
var output_obj = main(inputs_obj)

// convert output to json and print
var output_json = JSON.stringify(output_obj)
var result = `<<RESULT>>${{output_json}}<<RESULT>>`
console.log(result)
"""
JINJA2_RUNNER = """
# declare main function
def main(**inputs):
    import jinja2
    template = jinja2.Template('''{code}''')
    return template.render(**inputs)

import json
from base64 import b64decode

# decode and prepare input dict
inputs_obj = json.loads(b64decode('{inputs}').decode('utf-8'))

# execute main function
output = main(**inputs_obj)

# convert output and print
result = f'''<<RESULT>>{{output}}<<RESULT>>'''
print(result)

"""
JINJA2_PRELOAD = """
import jinja2
from base64 import b64decode

def _jinja2_preload_():
    # prepare jinja2 environment, load template and render before to avoid sandbox issue
    template = jinja2.Template('{{s}}')
    template.render(s='a')

if __name__ == '__main__':
    _jinja2_preload_()

"""
# The code nodes' default code (Python3CodeProvider, JavascriptCodeProvider).
PY_DEFAULT = """
def main(arg1: str, arg2: str):
    return {
        "result": arg1 + arg2,
    }
"""
JS_DEFAULT = """
function main({arg1, arg2}) {
    return {
        result: arg1 + arg2
    }
}
"""


def inputs_b64(inputs):
    return base64.b64encode(json.dumps(inputs, ensure_ascii=False).encode()).decode()


def result_of(stdout):
    m = re.search(rf"{RESULT_TAG}(.*){RESULT_TAG}", stdout, re.DOTALL)
    assert m, f"no result in {stdout!r}"
    return m.group(1)


class DifyE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.py = tex.Executor("python", pool_size=1)
        cls.js = None
        try:
            cls.js = tex.Executor("nodejs", pool_size=1)
            cls.port = sgtest.free_port()
            cls.gw = gateway_fakes.Gateway(
                {"executors": {"python": [cls.py.url], "nodejs": [cls.js.url]},
                 "exec_grace_ms": 10000, "dify_port": cls.port},
                tokens={"tenants": {"dify": {"tokens": [KEY], "policies": ["dify"]}}})
        except BaseException:
            cls.py.stop()
            if cls.js:
                cls.js.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        rc = cls.gw.stop()
        ok_py, ok_js = cls.py.stop() == 0, cls.js.stop() == 0
        left = cls.py.containers() + cls.js.containers()
        assert ok_py and ok_js and rc == 0
        assert left == [], f"containers left behind: {left}"

    def execute(self, language, code, preload=""):
        """Dify's CodeExecutor.execute_code: the stdout, or the error raised."""
        st, _, b = sgtest.http("POST", f"http://127.0.0.1:{self.port}/v1/sandbox/run",
                               {"language": language, "code": code, "preload": preload,
                                "enable_network": True}, {"X-Api-Key": KEY}, timeout=120)
        self.assertEqual((st, b["code"], b["message"]), (200, 0, "success"), b)
        return b["data"]

    def ok(self, language, code, preload=""):
        data = self.execute(language, code, preload)
        self.assertEqual(data["error"], "", data)
        return data["stdout"]

    # --- Dify's code-executor integration tests -----------------------------
    def test_python3_plain(self):
        self.assertEqual(self.ok("python3", 'print("Hello World")'), "Hello World\n")

    def test_python3_json(self):
        code = "\nimport json\nprint(json.dumps({'Hello': 'World'}))\n"
        self.assertEqual(self.ok("python3", code), '{"Hello": "World"}\n')

    def test_python3_with_code_template(self):
        code = PY_RUNNER.format(code=PY_DEFAULT, inputs=inputs_b64({"arg1": "Hello",
                                                                    "arg2": "World"}))
        self.assertEqual(json.loads(result_of(self.ok("python3", code))),
                         {"result": "HelloWorld"})

    def test_javascript_plain(self):
        self.assertEqual(self.ok("nodejs", 'console.log("Hello World")'), "Hello World\n")

    def test_javascript_json(self):
        code = "\nobj = {'Hello': 'World'}\nconsole.log(JSON.stringify(obj))\n"
        self.assertEqual(self.ok("nodejs", code), '{"Hello":"World"}\n')

    def test_javascript_with_code_template(self):
        code = JS_RUNNER.format(code=JS_DEFAULT, inputs=inputs_b64({"arg1": "Hello",
                                                                    "arg2": "World"}))
        self.assertEqual(json.loads(result_of(self.ok("nodejs", code))),
                         {"result": "HelloWorld"})

    def test_jinja2(self):
        code = JINJA2_RUNNER.format(code="Hello {{template}}",
                                    inputs=inputs_b64({"template": "World"}))
        self.assertEqual(self.ok("python3", code, JINJA2_PRELOAD),
                         "<<RESULT>>Hello World<<RESULT>>\n")

    def test_jinja2_with_code_template(self):
        code = JINJA2_RUNNER.format(code="Hello {{template}}",
                                    inputs=inputs_b64({"template": "World"}))
        out = self.ok("python3", code, JINJA2_PRELOAD)
        self.assertEqual({"result": result_of(out)}, {"result": "Hello World"})

    def test_httpx_and_requests_without_network_say_network_disabled(self):
        for mod in ("httpx", "requests"):
            data = self.execute("python3", f"\nimport {mod}\nresponse = {mod}.get("
                                "'http://origin.invalid/get')\nprint(response.text)\n")
            self.assertIn("[network.disabled]", data["error"], mod)
            self.assertEqual(data["stdout"], "")

    # --- dify-sandbox's feature tests ---------------------------------------
    def test_base64_and_json(self):
        code = ("import base64, json\n"
                "print(base64.b64encode(json.dumps({'a': 1}).encode()).decode())\n")
        self.assertEqual(self.ok("python3", code), base64.b64encode(b'{"a": 1}').decode() + "\n")

    def test_zoneinfo(self):
        code = ("from datetime import datetime\nfrom zoneinfo import ZoneInfo\n"
                "print(datetime(2024, 1, 1, tzinfo=ZoneInfo('Asia/Shanghai')).utcoffset())\n")
        self.assertEqual(self.ok("python3", code), "8:00:00\n")

    def test_logging_to_stderr_is_no_error(self):
        data = self.execute("python3", "import logging\nlogging.warning('careful')\nprint('done')\n")
        self.assertEqual((data["error"], data["exit_code"], data["stdout"]), ("", 0, "done\n"))
        self.assertIn("careful", data["stderr"])

    def test_an_exception_sets_error_with_its_traceback(self):
        data = self.execute("python3", "print('before')\nraise ValueError('boom')\n")
        self.assertEqual((data["exit_code"], data["stdout"]), (1, "before\n"), data)
        self.assertTrue(data["error"].startswith("process exited with code 1\n"), data)
        self.assertIn("ValueError: boom", data["error"])

    def test_300kb_of_stdout_intact(self):
        out = self.ok("python3", "print('x' * 300000)\nprint('end')\n")
        self.assertEqual(out, "x" * 300000 + "\nend\n")

    def test_processes_are_refused(self):
        for language, code in (("python3", "import os\nos.execl('/bin/sh', 'sh')\n"),
                               ("python3", "import subprocess\nsubprocess.run(['id'])\n"),
                               ("nodejs", "const cp = require('child_process');\n"
                                          "console.log(cp.execSync('id').toString())\n")):
            data = self.execute(language, code)
            self.assertIn("rejected by policy 'dify'", data["error"], code)
            self.assertEqual(data["stdout"], "")


class DifyNetworkE2E(unittest.TestCase):
    """Dify's httpx and requests tests with Dify's code template, the origin
    in place of the public host they fetch: the tenant's default network
    list allows it, so Dify's "enable_network": true gets it."""

    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.names = sgegress.Names("difynet")
        cls.stack = sgegress.Stack(cls.names)
        cls.py = cls.gw = None
        try:
            cls.py = tex.Executor("python", pool_size=1, extra=cls.stack.executor_args())
            cls.port = sgtest.free_port()
            origin = f"{cls.names.origin}:8080"
            cls.gw = gateway_fakes.Gateway(
                {"executors": {"python": [cls.py.url]}, "exec_grace_ms": 10000,
                 "dify_port": cls.port},
                tokens={"tenants": {"dify": {"tokens": [KEY], "policies": ["dify"],
                                             "network": {"allow": [origin],
                                                         "default": [origin]}}}})
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        sgegress.stop_all(cls.stack, cls.gw, (cls.py,))

    def fetch(self, mod, path):
        """Dify's test code (a GET and its text) under Dify's code template."""
        url = f"http://{self.names.origin}:8080{path}"
        code = PY_RUNNER.format(code=f"""
import {mod}

def main() -> dict:
    response = {mod}.get("{url}")
    return {{"status": response.status_code, "body": response.text}}
""", inputs=inputs_b64({}))
        sgegress.wait_net_idle(self.py)
        st, hdrs, b = sgtest.http("POST", f"http://127.0.0.1:{self.port}/v1/sandbox/run",
                                  {"language": "python3", "code": code, "preload": "",
                                   "enable_network": True}, {"X-Api-Key": KEY}, timeout=120)
        self.assertEqual((st, b["code"], b["message"]), (200, 0, "success"), b)
        self.assertEqual(b["data"]["error"], "", b)
        self.assertEqual(json.loads(result_of(b["data"]["stdout"])),
                         {"status": 200, "body": f"origin says hi {path}"})
        line = self.gw.audit_line(hdrs["x-request-id"])
        self.assertEqual((line["endpoint"], line["policy"], line["outcome"]),
                         ("dify", "dify", "success"), line)
        self.assertEqual(line["network"]["allow"], [f"{self.names.origin}:8080"], line)
        decisions = line["network"]["decisions"]
        self.assertEqual(decisions["allowed"], [f"{self.names.origin}:8080"], line)
        self.assertEqual([(c["host"], c["port"], c["status"]) for c in decisions["connections"]],
                         [(self.names.origin, 8080, 200)], line)

    def test_httpx(self):
        self.fetch("httpx", "/httpx")

    def test_requests(self):
        self.fetch("requests", "/requests")


if __name__ == "__main__":
    unittest.main()
