"""RAGFlow, unchanged, against the stack `make up` starts.

The stack is brought up as an operator would (images/stack.sh up, the tokens
file make up creates itself) with SANDGATE_RAGFLOW_NETWORK naming a
user-defined Docker network this test creates in place of RAGFlow's compose
network. Then:
  - a stand-in for RAGFlow's client, a container on that network, posts
    exactly RAGFlow's request to http://sandbox-executor-manager:9385/run:
    the JSON body of requests.post(url, json={"code_b64", "language",
    "arguments"}) with the headers requests sends and nothing else (no token),
    and reads stdout, stderr, result.present/value and artifacts as RAGFlow's
    code tool does;
  - the host posts the same to the published 127.0.0.1:<port>, no token;
  - a container on a third network the test creates (the gateway joined to
    it, as it would be to any other network): a source that is neither the
    host nor RAGFlow's network, refused with 401.
Everything the test creates (networks, containers, the stack) is removed.
"""
import base64
import json
import os
import tempfile
import time
import unittest

import sgtest
import stack_lib
from stack_lib import docker

PROJECT = f"sgrag{os.getpid()}"
RAGFLOW_NET = f"sgtest-ragflow-{os.getpid()}"
OTHER_NET = f"sgtest-other-{os.getpid()}"
LABEL = f"org.sandgate.test=ragflow-{os.getpid()}"
state = {}

# RAGFlow's client, replayed: agent/sandbox/providers/self_managed.py and the
# code tool's legacy path send requests.post(url, json=payload, timeout=...).
# requests serialises json= with json.dumps and sends exactly these headers.
CLIENT = r'''
import base64, http.client, json, sys
host, port, path, code, language, arguments = sys.argv[1:7]
payload = {"code_b64": base64.b64encode(code.encode("utf-8")).decode("utf-8"),
           "language": language, "arguments": json.loads(arguments)}
body = json.dumps(payload).encode("utf-8")
conn = http.client.HTTPConnection(host, int(port), timeout=60)
conn.putrequest("POST", path, skip_host=False, skip_accept_encoding=True)
for k, v in (("User-Agent", "python-requests/2.32.3"), ("Accept-Encoding", "gzip, deflate"),
             ("Accept", "*/*"), ("Connection", "keep-alive"),
             ("Content-Length", str(len(body))), ("Content-Type", "application/json")):
    conn.putheader(k, v)
conn.endheaders(body)
resp = conn.getresponse()
raw = resp.read()
print(json.dumps({"status_code": resp.status, "text": raw.decode("utf-8", "replace")}))
'''


def stack_env():
    return stack_lib.stack_env(PROJECT, state["port"], state["dir"],
                               SANDGATE_RAGFLOW_NETWORK=RAGFLOW_NET)


def setUpModule():
    stack_lib.require_images()
    state["dir"] = tempfile.mkdtemp(prefix="sandgate-ragflow-")
    state["port"] = sgtest.free_port()
    docker("network", "create", "--label", LABEL, RAGFLOW_NET)
    state["up_out"] = stack_lib.up(stack_env(), tearDownModule)
    state["url"] = f"http://127.0.0.1:{state['port']}"


def tearDownModule():
    stack_lib.down(stack_env(), PROJECT, LABEL, (RAGFLOW_NET, OTHER_NET), state.get("dir"))


def client_in_container(network, host, code, language="python", arguments=None):
    """RAGFlow's request from a container on `network`; returns (status, body)."""
    out = docker("run", "--rm", "--label", LABEL, "--network", network, "--runtime", "runc",
                 "--entrypoint", "python3", sgtest.image("python"), "-I", "-c", CLIENT,
                 host, "9385", "/run", code, language, json.dumps(arguments or {}))
    res = json.loads(out.splitlines()[-1])
    try:
        return res["status_code"], json.loads(res["text"])
    except ValueError:
        return res["status_code"], res["text"]


def ragflow_reads(test, body):
    """What RAGFlow's code tool takes from an answer (self_managed.py)."""
    structured = body.get("result") or {}
    for key in ("stdout", "stderr", "artifacts"):
        test.assertIn(key, body)
    return (body.get("stdout", ""), body.get("stderr"), structured.get("present", False),
            structured.get("value"), body.get("artifacts", []))


JOB = ("import csv\nimport os\n\n"
       "def main(rows):\n"
       "    print('rows', len(rows))\n"
       "    os.makedirs('artifacts', exist_ok=True)\n"
       "    with open('artifacts/out.csv', 'w', newline='') as f:\n"
       "        csv.writer(f).writerows(rows)\n"
       "    return {'n': len(rows)}\n")
JOB_SAFE = JOB.replace("import os\n", "").replace(
    "    os.makedirs('artifacts', exist_ok=True)\n", "")


class RagflowNetwork(unittest.TestCase):
    def test_ragflows_own_request_over_its_network_needs_no_token(self):
        st, body = client_in_container(RAGFLOW_NET, "sandbox-executor-manager", JOB_SAFE,
                                       arguments={"rows": [[1, 2], [3, 4]]})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["status"], "success", body)
        stdout, stderr, present, value, artifacts = ragflow_reads(self, body)
        self.assertEqual((stdout, stderr, present, value), ("rows 2\n", "", True, {"n": 2}))
        self.assertEqual([a["name"] for a in artifacts], ["out.csv"])
        self.assertEqual(base64.b64decode(artifacts[0]["content_b64"]), b"1,2\r\n3,4\r\n")

    def test_ragflows_own_chart_example_and_pathlib_run(self):
        # the example RAGFlow's code tool puts into its prompt, verbatim
        chart = ("def main() -> dict:\n    import matplotlib\n    matplotlib.use(\"Agg\")\n"
                 "    import matplotlib.pyplot as plt\n    import pandas as pd\n\n"
                 "    df = pd.DataFrame({\"x\": [1, 2, 3, 4], \"y\": [10, 20, 25, 30]})\n"
                 "    fig, ax = plt.subplots()\n    ax.plot(df[\"x\"], df[\"y\"])\n"
                 "    ax.set_title(\"Sample Chart\")\n"
                 "    fig.savefig(\"artifacts/chart.png\", dpi=150, bbox_inches=\"tight\")\n"
                 "    plt.close(fig)\n"
                 "    return {\"summary\": \"Chart saved to artifacts/chart.png\"}\n")
        st, body = client_in_container(RAGFLOW_NET, "sandbox-executor-manager", chart)
        self.assertEqual((st, body["status"]), (200, "success"), body)
        _, _, present, value, artifacts = ragflow_reads(self, body)
        self.assertEqual(value, {"summary": "Chart saved to artifacts/chart.png"})
        self.assertEqual([(a["name"], a["mime_type"]) for a in artifacts],
                         [("chart.png", "image/png")])
        self.assertTrue(base64.b64decode(artifacts[0]["content_b64"]).startswith(b"\x89PNG"))
        files = ("from pathlib import Path\n\ndef main():\n"
                 "    (Path('artifacts') / 'note.txt').write_text('hi')\n"
                 "    return sorted(p.name for p in Path('.').iterdir())\n")
        st, body = client_in_container(RAGFLOW_NET, "sandbox-executor-manager", files)
        self.assertEqual((st, body["status"]), (200, "success"), body)
        self.assertIn("artifacts", body["result"]["value"])
        self.assertEqual([a["name"] for a in body["artifacts"]], ["note.txt"])

    def test_unsafe_code_keeps_ragflows_shape(self):
        st, body = client_in_container(RAGFLOW_NET, "sandbox-executor-manager", JOB)
        self.assertEqual(st, 200, body)
        self.assertEqual((body["status"], body["exit_code"], body["detail"]),
                         ("program_runner_error", -999, "Code is unsafe"))
        self.assertTrue(body["stderr"].startswith("Line 2: "), body["stderr"])

    def test_nodejs(self):
        st, body = client_in_container(RAGFLOW_NET, "sandbox-executor-manager",
                                       "function main(a) { return {s: a.x + 1}; }\n",
                                       language="nodejs", arguments={"x": 41})
        self.assertEqual((st, body["status"], body["result"]["value"]), (200, "success",
                                                                        {"s": 42}), body)

    def test_whoami_from_ragflows_network(self):
        subnet = docker("network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}}{{end}}",
                        RAGFLOW_NET)
        script = ("import json, urllib.request\n"
                  "for p in ('/healthz', '/v1/whoami', '/v1/runtimes'):\n"
                  "    with urllib.request.urlopen('http://sandbox-executor-manager:9385' + p,"
                  " timeout=30) as r:\n"
                  "        print(json.dumps(json.load(r)))\n")
        out = docker("run", "--rm", "--label", LABEL, "--network", RAGFLOW_NET, "--runtime",
                     "runc", "--entrypoint", "python3", sgtest.image("python"), "-I", "-c",
                     script)
        healthz, whoami, runtimes = [json.loads(line) for line in out.splitlines()[-3:]]
        self.assertEqual(healthz, {"status": "ok"})
        self.assertEqual(whoami["tenant"], {"name": "ragflow", "identified_by": "network",
                                            "network": subnet})
        # /v1/runtimes against the real images: read from the image, not written by hand
        py = runtimes["runtimes"]["python"]
        self.assertTrue(py["available"], py)
        self.assertTrue(py["interpreter"]["version"].startswith("3."))
        names = {p["name"].lower(): p["version"] for p in py["packages"]}
        self.assertIn("numpy", names)
        self.assertIn("pandas", names)
        importable = py["policies"]["default"]["importable"]
        self.assertIn("pandas", importable)
        self.assertNotIn("subprocess", importable)
        js = runtimes["runtimes"]["nodejs"]
        self.assertTrue(js["interpreter"]["version"].startswith("18."), js["interpreter"])
        self.assertIn("crypto", js["policies"]["default"]["importable"])
        self.assertNotIn("child_process", js["policies"]["default"]["importable"])


class HostAndOthers(unittest.TestCase):
    def test_the_host_needs_no_token_on_the_loopback_port(self):
        code = "def main(a, b):\n    print(a + b)\n    return {'sum': a + b}\n"
        st, _, body = sgtest.http("POST", state["url"] + "/run", {
            "code_b64": base64.b64encode(code.encode()).decode(), "language": "python",
            "arguments": {"a": 2, "b": 3}})
        self.assertEqual(st, 200, body)
        self.assertEqual((body["stdout"], body["result"]["value"]), ("5\n", {"sum": 5}))
        st, _, who = sgtest.http("GET", state["url"] + "/v1/whoami")
        self.assertEqual(who["tenant"]["name"], "default")
        self.assertEqual(who["tenant"]["identified_by"], "network")
        # the address the gateway saw is the public network's bridge gateway
        public = docker("network", "ls", "-q", "--filter",
                        f"label=com.docker.compose.project={PROJECT}", "--filter",
                        "label=com.docker.compose.network=public")
        gw = docker("network", "inspect", "-f", "{{range .IPAM.Config}}{{.Gateway}}{{end}}",
                    public)
        self.assertEqual(who["peer"], gw)
        self.assertEqual(who["tenant"]["network"], gw + "/32")
        self.assertIn(f"arrive from {gw}", state["up_out"])

    def test_the_token_still_works_and_wins(self):
        with open(os.path.join(state["dir"], "config", "client.token")) as f:
            token = f.read().strip()
        st, _, who = sgtest.http("GET", state["url"] + "/v1/whoami",
                                 headers={"Authorization": f"Bearer {token}"})
        self.assertEqual((st, who["tenant"]), (200, {"name": "default",
                                                     "identified_by": "token"}))

    def test_a_third_network_is_refused(self):
        docker("network", "create", "--label", LABEL, OTHER_NET)
        # a container on a third network: it reaches the gateway only when
        # the gateway is attached to it; attach it, then call from there
        gateway = docker("ps", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}",
                         "--filter", "label=com.docker.compose.service=gateway")
        docker("network", "connect", "--alias", "sandgate-other", OTHER_NET, gateway)
        try:
            st, body = client_in_container(OTHER_NET, "sandgate-other", JOB_SAFE,
                                           arguments={"rows": []})
            self.assertEqual(st, 401, body)
            self.assertEqual(body["error"]["code"], "unauthorized")
        finally:
            docker("network", "disconnect", OTHER_NET, gateway, check=False)
            docker("network", "rm", OTHER_NET, check=False)

    def test_tokens_file_keeps_the_operators_tenants(self):
        with open(os.path.join(state["dir"], "config", "tokens.json")) as f:
            tenants = json.load(f)["tenants"]
        self.assertEqual(sorted(tenants), ["default", "ragflow"])
        self.assertEqual(len(tenants["default"]["tokens"]), 1, "make up's token is kept")
        subnet = docker("network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}}{{end}}",
                        RAGFLOW_NET)
        self.assertEqual(tenants["ragflow"], {"networks": [subnet]})


if __name__ == "__main__":
    unittest.main()
