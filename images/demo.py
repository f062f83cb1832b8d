"""make demo: a handful of real jobs against the running stack (`make up`).

Sends each job to POST /run (RAGFlow's request shape) on the gateway and
prints the outcome readably. Standard library only.

Environment: SANDGATE_URL (default http://127.0.0.1:9385), SANDGATE_TOKEN
(default: the client token `make up` wrote under build/stack/config).
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
URL = os.environ.get("SANDGATE_URL", "http://127.0.0.1:9385").rstrip("/")

JOBS = [
    ("a dict result", "python", {"n": 5},
     "def main(n):\n"
     "    squares = {str(i): i * i for i in range(n)}\n"
     "    print('computed', len(squares), 'squares')\n"
     "    return squares\n"),
    ("a pandas job", "python", {"rows": [[1, "a"], [2, "b"], [3, "a"]]},
     "import pandas as pd\n\n"
     "def main(rows):\n"
     "    df = pd.DataFrame(rows, columns=['value', 'group'])\n"
     "    return df.groupby('group')['value'].sum().to_dict()\n"),
    ("JavaScript main(args)", "nodejs", {"words": ["gate", "sand"]},
     "function main(args) {\n"
     "  return args.words.slice().reverse().join('');\n"
     "}\n"
     "module.exports = { main };\n"),
    ("a rejected import os", "python", {},
     "import os\n\n"
     "def main():\n"
     "    return os.listdir('/')\n"),
    ("a timeout (native /v1/run with a 2 s limit)", "python", {},
     "def main():\n"
     "    while True:\n"
     "        pass\n", {"timeout_ms": 2000}),
]


def token():
    tok = os.environ.get("SANDGATE_TOKEN")
    if tok:
        return tok
    stack_dir = os.environ.get("SANDGATE_STACK_DIR", os.path.join(ROOT, "build", "stack"))
    path = os.path.join(stack_dir, "config", "client.token")
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        sys.exit(f"demo: no token: set SANDGATE_TOKEN or run 'make up' first ({path})")


def post(path, body, tok):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {tok}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def show(title, language, code, status, res, elapsed):
    print(f"== {title} ({language})")
    for line in code.rstrip().splitlines():
        print(f"   | {line}")
    if status != 200:
        print(f"   HTTP {status}: {json.dumps(res)}")
        return
    print(f"   status={res['status']} exit_code={res['exit_code']} "
          f"time={res['time_used_ms']:.0f}ms memory={res['memory_used_kb']}KB "
          f"(round trip {elapsed * 1000:.0f}ms)")
    if res.get("result", {}).get("present"):
        print(f"   result: {json.dumps(res['result']['value'])}")
    if res.get("stdout"):
        print(f"   stdout: {res['stdout'].rstrip()}")
    if res.get("resource_limit_type"):
        print(f"   limit:  {res['resource_limit_type']}")
    if res.get("detail"):
        print(f"   detail: {res['detail']}")
    for v in res.get("violations") or []:
        print(f"   violation: {v['rule']} at line {v['line']}, column {v['column']}: {v['message']}")
    if res.get("stderr") and not res.get("violations"):
        print(f"   stderr: {res['stderr'].rstrip()[-300:]}")


def main():
    tok = token()
    failures = 0
    for title, language, args, code, *limits in JOBS:
        body = {"language": language, "arguments": args,
                "code_b64": base64.b64encode(code.encode()).decode()}
        path = "/run"
        if limits:  # RAGFlow's /run takes no limits; the native API does
            body["limits"], path = limits[0], "/v1/run"
        started = time.monotonic()
        try:
            status, res = post(path, body, tok)
        except OSError as e:
            sys.exit(f"demo: cannot reach {URL}: {e} (is the stack up? 'make up')")
        show(title, language, code, status, res, time.monotonic() - started)
        failures += status != 200
        print()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
