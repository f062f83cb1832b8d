"""Dify, unchanged but for its key, against the stack `make up` starts.

The stack is brought up as an operator would (images/stack.sh up) with
SANDGATE_DIFY_NETWORK naming a user-defined Docker network this test creates
in place of Dify's (the network of Dify's `sandbox` service), and
SANDGATE_DIFY_API_KEY the key Dify would send. A stand-in for Dify's API
service, a container on that network, posts exactly Dify's request (the JSON
its code executor sends with httpx, its headers) to
http://sandbox:8194/v1/sandbox/run and reads the answer as Dify does; a
wrong key is 401. Everything the test creates is removed.
"""
import json
import os
import tempfile
import unittest

import sgtest
import stack_lib
from stack_lib import docker

PROJECT = f"sgdify{os.getpid()}"
DIFY_NET = f"sgtest-dify-{os.getpid()}"
LABEL = f"org.sandgate.test=dify-{os.getpid()}"
KEY = "dify-stack-key-0123456789abcdef"
state = {}

# Dify's CodeExecutor.execute_code: httpx.post(url, json=data, headers={"X-Api-Key": key}).
# httpx serialises json= compactly and sends these headers.
CLIENT = r'''
import http.client, json, sys
host, port, key, language, code = sys.argv[1:6]
data = {"language": language, "code": code, "preload": "", "enable_network": True}
body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
conn = http.client.HTTPConnection(host, int(port), timeout=60)
conn.putrequest("POST", "/v1/sandbox/run", skip_host=False, skip_accept_encoding=True)
for k, v in (("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"), ("Connection", "keep-alive"),
             ("User-Agent", "python-httpx/0.27.2"), ("X-Api-Key", key),
             ("Content-Length", str(len(body))), ("Content-Type", "application/json")):
    conn.putheader(k, v)
conn.endheaders(body)
resp = conn.getresponse()
print(json.dumps({"status_code": resp.status, "text": resp.read().decode("utf-8", "replace")}))
'''


def env():
    return stack_lib.stack_env(PROJECT, state["port"], state["dir"],
                               SANDGATE_DIFY_NETWORK=DIFY_NET, SANDGATE_DIFY_API_KEY=KEY)


def setUpModule():
    stack_lib.require_images()
    state["dir"] = tempfile.mkdtemp(prefix="sandgate-dify-")
    state["port"] = sgtest.free_port()
    docker("network", "create", "--label", LABEL, DIFY_NET)
    stack_lib.up(env(), tearDownModule)


def tearDownModule():
    stack_lib.down(env(), PROJECT, LABEL, (DIFY_NET,), state.get("dir"))


def dify_client(key, language, code):
    """Dify's request from a container on Dify's network; (status, body)."""
    out = docker("run", "--rm", "--label", LABEL, "--network", DIFY_NET, "--runtime", "runc",
                 "--entrypoint", "python3", sgtest.image("python"), "-I", "-c", CLIENT,
                 "sandbox", "8194", key, language, code)
    res = json.loads(out.splitlines()[-1])
    try:
        return res["status_code"], json.loads(res["text"])
    except ValueError:
        return res["status_code"], res["text"]


class DifyNetwork(unittest.TestCase):
    def test_difys_request_reaches_sandbox_8194(self):
        st, body = dify_client(KEY, "python3", 'print("Hello World")')
        self.assertEqual(st, 200, body)
        self.assertEqual(body, {"code": 0, "message": "success", "data": {
            "stdout": "Hello World\n", "stderr": "", "error": "", "exit_code": 0}})
        st, body = dify_client(KEY, "nodejs", 'console.log("Hello World")')
        self.assertEqual((st, body["data"]["stdout"]), (200, "Hello World\n"), body)

    def test_a_wrong_key_is_401_with_an_empty_body(self):
        self.assertEqual(dify_client("not-the-key-0123456789", "python3", "print(1)"), (401, ""))

    def test_the_tenant_and_policy_are_difys(self):
        with open(os.path.join(state["dir"], "config", "tokens.json")) as f:
            dify = json.load(f)["tenants"]["dify"]
        self.assertEqual((dify["tokens"], dify["policies"]), ([KEY], ["dify"]))
        st, body = dify_client(KEY, "python3", "import jinja2\nprint(jinja2.__name__)\n")
        self.assertEqual((st, body["data"]["stdout"], body["data"]["error"]),
                         (200, "jinja2\n", ""), body)


if __name__ == "__main__":
    unittest.main()
