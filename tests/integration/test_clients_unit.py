"""The client libraries' own unit tests (no sandgate, no Docker): each SSE
parser (frames split anywhere, multi-line data, heartbeats) and each client
against a scripted loopback server (error classes, retries only where a
request provably did not start, streams closed early, sessions). The
TypeScript package is built from its lock file first (sgclients). Their live
tests against the real stack are in tests/e2e/test_clients.py."""
import sys
import unittest

import sgclients


class ClientUnitTests(unittest.TestCase):
    def check(self, passed, failed, out, at_least):
        sys.stderr.write(f"[{passed} passed] ")
        self.assertEqual(failed, 0, out[-6000:])
        self.assertGreaterEqual(passed, at_least, out[-6000:])

    def test_python_client(self):
        self.check(*sgclients.python_tests("tests", timeout=120), at_least=31)

    def test_typescript_client(self):
        sgclients.build_typescript()
        self.check(*sgclients.node_tests("test", timeout=120), at_least=32)


if __name__ == "__main__":
    unittest.main()
