"""The gateway sends the executor the modules its analysis saw (`imports` in
/v1/exec, top-level names, each once), which choose the executor's warm pool
flavour, and passes the executor's `pool` answer on in /v1/run."""
import unittest

from test_gateway_api import GatewayCase


class GatewayImports(GatewayCase):
    def test_python_imports_forwarded_by_top_level_name(self):
        code = ("import pandas as pd\nimport json\nfrom numpy import linalg\n"
                "import pandas.io.json\n\ndef main():\n    return 1\n")
        st, _, body = self.run_ragflow(code)
        self.assertEqual(st, 200, body)
        self.assertEqual(self.py.jobs[0]["imports"], ["pandas", "json", "numpy"])

    def test_no_imports_no_field(self):
        st, _, body = self.run_ragflow("def main():\n    return 1\n")
        self.assertEqual(st, 200, body)
        self.assertNotIn("imports", self.py.jobs[0])

    def test_javascript_specifiers(self):
        code = ("const path = require('path');\nconst u = require('node:util');\n"
                "function main() { return 1; }\nmodule.exports = { main };\n")
        st, _, body = self.gw.call("POST", "/v1/run", {"language": "nodejs", "code": code,
                                                       "policy": "permissive"})
        self.assertEqual(st, 200, body)
        self.assertEqual(self.js.jobs[0]["imports"], ["path", "util"])

    def test_cached_verdict_keeps_the_imports(self):
        code = "import numpy as np\n\ndef main():\n    return 1\n"
        for _ in range(2):
            st, _, body = self.gw.call("POST", "/v1/run", {"language": "python", "code": code})
            self.assertEqual(st, 200, body)
        self.assertTrue(body["timings"]["cached"], body["timings"])
        self.assertEqual([j["imports"] for j in self.py.jobs], [["numpy"], ["numpy"]])


if __name__ == "__main__":
    unittest.main()
