"""The MCP endpoint end to end: the real gateway in front of a real python
executor on dockerd + runsc, spoken to over MCP (initialize, tools/call). A
matplotlib chart the code saves under artifacts/ comes back as MCP image
content (PNG bytes, base64, mimeType image/png); a rejected import is a tool
error naming the rule, line and column, and never reaches a container."""
import base64
import os
import re
import sys
import unittest

import sgtest

sys.path.insert(0, os.path.join(sgtest.ROOT, "tests", "integration"))
import gateway_fakes  # noqa: E402
import test_executor as tex  # noqa: E402  (module import: its tests are not re-collected)

TOKEN = "mcp-e2e-token-0123456789"
AUTH = {"Authorization": "Bearer " + TOKEN, "Accept": "application/json, text/event-stream"}
CHART = ("import matplotlib.pyplot as plt\n\ndef main(points):\n"
         "    plt.plot(range(len(points)), points)\n    plt.title('squares')\n"
         "    plt.savefig('artifacts/chart.png')\n    print('plotted', len(points))\n"
         "    return {'n': len(points)}\n")


class McpE2E(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tex.require_engine_and_images()
        cls.py = tex.Executor("python", pool_size=1)
        try:
            cls.gw = gateway_fakes.Gateway(
                {"executors": {"python": [cls.py.url], "nodejs": [gateway_fakes.dead_url()]},
                 "exec_grace_ms": 10000},
                tokens={"tenants": {"e2e": {"tokens": [TOKEN]}}})
        except BaseException:
            cls.py.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        rc = cls.gw.stop()
        assert cls.py.stop() == 0, cls.py.daemon.tail()
        left = cls.py.containers()
        assert rc == 0
        assert left == [], f"containers left behind: {left}"

    def rpc(self, body, sid=None):
        h = dict(AUTH)
        if sid:
            h["Mcp-Session-Id"] = sid
        return self.gw.call("POST", "/mcp", body, h, timeout=120)

    def session(self):
        st, hdrs, body = self.rpc({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"}}})
        self.assertEqual(st, 200, body)
        return hdrs["mcp-session-id"]

    def call(self, name, arguments):
        st, _, body = self.rpc({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": name, "arguments": arguments}},
                               self.session())
        self.assertEqual(st, 200, body)
        return body["result"]

    def test_a_matplotlib_chart_comes_back_as_image_content(self):
        res = self.call("run_code", {"language": "python", "code": CHART,
                                     "arguments": {"points": [1, 4, 9, 16]}})
        texts = "\n".join(c["text"] for c in res["content"] if c["type"] == "text")
        self.assertFalse(res["isError"], texts)
        self.assertIn("status: success", texts)
        self.assertIn("stdout:\nplotted 4", texts)
        self.assertIn('result (JSON):\n{"n":4}', texts)
        images = [c for c in res["content"] if c["type"] == "image"]
        self.assertEqual(len(images), 1, res["content"])
        self.assertEqual(images[0]["mimeType"], "image/png")
        png = base64.b64decode(images[0]["data"])
        self.assertTrue(png.startswith(b"\x89PNG\r\n\x1a\n"))
        self.assertGreater(len(png), 1000)

    def executor_jobs(self):
        _, _, text = sgtest.http("GET", self.py.url + "/metrics")
        return [line for line in text.splitlines()
                if line.startswith("sandgate_executor_jobs_total")]

    def test_a_rejected_import_is_a_tool_error_naming_the_rule(self):
        before = self.executor_jobs()
        res = self.call("run_code", {"language": "python",
                                     "code": "import subprocess\n\ndef main():\n"
                                             "    return subprocess.check_output(['id'])\n"})
        self.assertTrue(res["isError"])
        text = res["content"][0]["text"]
        self.assertIn("rejected by policy 'default'", text)
        self.assertRegex(text, r"line 1, column 8: .*subprocess.*\[rule import\.not-allowed\]")
        self.assertEqual(self.executor_jobs(), before, "the executor saw no job")
        job = re.search(r"\[job ([0-9a-f]+)\]", text)
        self.assertIsNotNone(job, text)


if __name__ == "__main__":
    unittest.main()
