"""The console's assets served by the real sandgate binary (no browser, fake
executors): content types, cache headers, the Content-Security-Policy with a
fresh style nonce per page, nosniff, redirects, unknown and hidden names, and
a console_dir that cannot serve."""
import os
import re
import socket
import shutil
import subprocess
import tempfile
import unittest

import sgtest
from gateway_fakes import FakeExecutor, Gateway, GatewayWithFakes

PAGE = ('<!doctype html><meta name="csp-nonce" content="__SANDGATE_CONSOLE_STYLE_NONCE__">'
        '<script type="module" src="app-ABC123.js"></script>')


class ConsoleAssets(GatewayWithFakes):
    def setUp(self):
        self.assets = tempfile.mkdtemp(prefix="sg-console-")
        self.addCleanup(shutil.rmtree, self.assets, True)
        files = {"index.html": PAGE, "app-ABC123.js": "export const x = '<b>';\n",
                 "style-DEF456.css": "body{}\n", ".hidden.js": "secret", "notes.md": "x",
                 "logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>"}
        for name, text in files.items():
            with open(os.path.join(self.assets, name), "w") as f:
                f.write(text)
        os.mkdir(os.path.join(self.assets, "sub"))
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]},
                           "console_dir": self.assets})

    def get(self, path, method="GET"):
        return self.gw.call(method, path)

    def test_the_page_and_its_assets(self):
        st, hdr, body = self.get("/console/")
        self.assertEqual(st, 200)
        self.assertEqual(hdr["content-type"], "text/html; charset=utf-8")
        self.assertEqual(hdr["cache-control"], "no-cache")
        self.assertEqual(hdr["x-content-type-options"], "nosniff")
        self.assertEqual(hdr["referrer-policy"], "no-referrer")
        csp = hdr["content-security-policy"]
        nonce = re.search(r"content=\"([0-9a-f]{32})\"", body).group(1)
        self.assertIn(f"style-src 'self' 'nonce-{nonce}'", csp)
        for part in ("default-src 'none'", "script-src 'self';", "connect-src 'self'",
                     "frame-ancestors 'none'", "base-uri 'none'"):
            self.assertIn(part, csp)
        self.assertNotIn("unsafe", csp)
        self.assertNotIn("http", csp)  # no third-party origin
        _, hdr2, body2 = self.get("/console/index.html")
        self.assertNotIn(nonce, body2)  # a fresh nonce per answer
        self.assertNotIn(nonce, hdr2["content-security-policy"])
        for path, ctype in (("/console/app-ABC123.js", "text/javascript; charset=utf-8"),
                            ("/console/style-DEF456.css", "text/css; charset=utf-8"),
                            ("/console/logo.svg", "image/svg+xml")):
            st, hdr, body = self.get(path)
            self.assertEqual((st, hdr["content-type"]), (200, ctype), path)
            self.assertEqual(hdr["cache-control"], "public, max-age=31536000, immutable")
            self.assertEqual(hdr["x-content-type-options"], "nosniff")
            self.assertEqual(hdr["content-security-policy"].split("style-src")[1], " 'self'")
        self.assertEqual(self.get("/console/app-ABC123.js")[2], "export const x = '<b>';\n")

    def test_redirect_unknown_hidden_and_methods(self):
        st, hdr, _ = self.get("/console")
        self.assertEqual((st, hdr["location"]), (308, "/console/"))
        for path in ("/console/nope.js", "/console/.hidden.js", "/console/notes.md",
                     "/console/sub", "/console/../sandgate.json", "/console/sub/x.js",
                     "/console/app-ABC123.js/"):
            st, hdr, _ = self.get(path)
            self.assertEqual(st, 404, path)
            self.assertEqual(hdr["x-content-type-options"], "nosniff")
        st, hdr, _ = self.get("/console/", "POST")
        self.assertEqual((st, hdr["allow"]), (405, "GET, HEAD"))
        self.assertEqual(self.get("/consolex")[0], 404)


    def test_other_methods_are_refused_before_any_body_byte(self):
        for path in ("/console/", "/v1/audit", "/v1/policies/default"):
            with socket.create_connection(("127.0.0.1", self.gw.port), timeout=5) as c:
                c.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: 100000\r\n\r\n".encode())
                head = c.recv(4096).decode("latin-1")  # the body is never sent
            self.assertTrue(head.startswith("HTTP/1.1 405"), f"{path}: {head[:200]}")


class ConsoleOff(GatewayWithFakes):
    def setUp(self):
        self.py = FakeExecutor("python")
        self.js = FakeExecutor("nodejs")
        self.gw = Gateway({"executors": {"python": [self.py.url], "nodejs": [self.js.url]}})

    def test_404_without_console_dir(self):
        st, _, body = self.gw.call("GET", "/console/")
        self.assertEqual((st, body["error"]["code"]), (404, "not_found"))
        self.assertIn("console_dir", body["error"]["message"])


class ConsoleDirChecked(unittest.TestCase):
    def test_a_dir_without_index_html_is_refused_at_start(self):
        d = tempfile.mkdtemp(prefix="sg-console-")
        self.addCleanup(shutil.rmtree, d, True)
        gw = Gateway({"console_dir": d}, start=False)
        try:
            r = subprocess.run([sgtest.binary("sandgate"), "-c", gw.config_path, "-t"],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 1)
            self.assertIn("index.html", r.stderr)
            r = subprocess.run([sgtest.binary("sandgate"), "-c", gw.config_path],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 1)
            self.assertIn("index.html", r.stdout + r.stderr)
        finally:
            gw.stop()


if __name__ == "__main__":
    unittest.main()
