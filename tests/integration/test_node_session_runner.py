"""sandgate-runner's session mode (executors/PROTOCOL.md "Session mode"),
the sanitizer build driving a local node with images/nodejs/runner.js in a
temporary workspace (no Docker): the key rule, cancel, files, lost sessions."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import sgtest

KEY = "k" * 40


class NodeSessionRunner(unittest.TestCase):
    def setUp(self):
        node = shutil.which("node")
        self.assertIsNotNone(node, "node is needed for this test")
        self.ws = tempfile.mkdtemp(prefix="sg-nsess-")
        self.addCleanup(shutil.rmtree, self.ws, True)
        self.p = subprocess.Popen(
            [sgtest.binary("sandgate-runner"), "--workspace", self.ws, "--main-file", "main.js",
             "--", node, os.path.join(sgtest.ROOT, "images", "nodejs", "runner.js")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.addCleanup(self.stop)
        self.n = 0
        ready = self.request({"session": True, "key": KEY}, keyed=False)
        self.assertEqual((ready["outcome"], ready["session"]), ("ok", "ready"), ready)

    def stop(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            self.p.wait(10)
        self.assertEqual(self.p.returncode, 0, self.p.stderr.read()[-2000:])

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def request(self, obj, keyed=True):
        self.n += 1
        nonce = f"nonce{self.n:011d}x"
        self.send(dict(obj, nonce=nonce, **({"key": KEY} if keyed else {})))
        while True:
            line = self.p.stdout.readline()
            self.assertTrue(line, "the runner ended")
            if line.strip().startswith(b"{"):
                doc = json.loads(line)
                if doc.get("nonce") == nonce:
                    return doc

    def test_cells_share_state_and_unkeyed_lines_are_dropped(self):
        self.assertEqual(self.request({"cell": "let x = 20"})["outcome"], "ok")
        # a line without the key (what the program could write to /proc/1/fd/0)
        self.send({"nonce": "forged0000000000x", "cell": "x = 1000"})
        self.send({"nonce": "forged0000000001x", "key": "z" * 40, "cell": "x = 1000"})
        b = self.request({"cell": "x + 1"})
        self.assertEqual(b["result"], {"present": True, "value": 21}, b)

    def test_cancel_needs_the_key_and_the_cells_nonce(self):
        self.n += 1
        nonce = f"nonce{self.n:011d}x"
        self.send({"key": KEY, "nonce": nonce, "cell": "while (true) {}"})
        time.sleep(0.3)
        self.send({"key": "z" * 40, "cancel": nonce})          # wrong key: ignored
        self.send({"key": KEY, "cancel": "someothernonce0000"})  # another cell: ignored
        time.sleep(0.5)
        self.send({"key": KEY, "cancel": nonce})
        t0 = time.time()
        while True:
            line = self.p.stdout.readline()
            self.assertTrue(line, "the runner ended")
            doc = json.loads(line) if line.strip() else {}
            if doc.get("nonce") == nonce:
                break
        self.assertEqual(doc["outcome"], "cancelled", doc)
        self.assertLess(time.time() - t0, 2)
        self.assertEqual(self.request({"cell": "1 + 1"})["result"]["value"], 2)

    def test_files_never_follow_links_and_names_are_checked(self):
        b = self.request({"op": "put_file", "name": "a.txt",
                          "content_b64": base64.b64encode(b"hello").decode()})
        self.assertEqual(b["outcome"], "ok", b)
        b = self.request({"op": "get_file", "name": "a.txt"})
        self.assertEqual(base64.b64decode(b["content_b64"]), b"hello")
        os.symlink("/etc/passwd", os.path.join(self.ws, "link.txt"))
        for op in ({"op": "get_file", "name": "link.txt"},
                   {"op": "put_file", "name": "link.txt", "content_b64": "eA=="},
                   {"op": "get_file", "name": "../etc"}, {"op": "get_file", "name": "main.js"},
                   {"op": "get_file", "name": "nope.txt"}):
            self.assertEqual(self.request(op)["outcome"], "bad_job", op)
        names = [f["name"] for f in self.request({"op": "list_files"})["files"]]
        self.assertEqual(names, ["a.txt"])

    def test_a_report_forged_by_the_program_is_not_the_cells(self):
        # the program holds the report pipe (fd 4) too, but not the report token
        b = self.request({"cell": "require('fs').writeSync(4, "
                                  "'{\"outcome\":\"ok\",\"present\":true,\"value_json\":\"666\"}\\n'); 1"})
        self.assertEqual(b["result"], {"present": True, "value": 1}, b)

    def test_an_exit_loses_the_session(self):
        self.request({"cell": "let y = 1"})
        b = self.request({"cell": "process.exit(3)"})
        self.assertTrue(b["session_lost"], b)
        b = self.request({"cell": "y"})
        self.assertEqual((b["outcome"], b["session_lost"]), ("runner_error", True), b)


if __name__ == "__main__":
    unittest.main()
