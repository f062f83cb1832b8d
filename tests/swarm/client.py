"""Load client for the swarm suite. It runs inside a container on the stack's
`public` overlay (the test creates it). Usage: client.py URL TOKEN MODE
ARGS_JSON; prints one JSON line. Every request has its own connection and a
bounded timeout; an answer is a status and a body, a transport error is
recorded as status 0.

Each request resolves tasks.<URL's host> afresh (Swarm's DNS: one address per
running gateway task) and takes the next address round robin: DNS round
robin, because Swarm's virtual-IP balancing does not work on the machine the
suite was written on (see test_swarm.py).
"""
import base64
import itertools
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

URL, TOKEN, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
ARGS = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}

CODE = {
    "python": "import time\n\ndef main(n, pause):\n    time.sleep(pause)\n    return n * 2\n",
    "nodejs": "function main(args) {\n  return args.n * 2;\n}\nmodule.exports = { main };\n",
}


HOST, PORT = URL.split("//", 1)[1].split(":")
ROUND = itertools.count()


def target():
    try:
        ips = sorted(socket.gethostbyname_ex("tasks." + HOST)[2])
    except OSError:
        return URL  # no task listed right now: the request fails cleanly
    return f"http://{ips[next(ROUND) % len(ips)]}:{PORT}" if ips else URL


def job(language, n, pause=0.0):
    body = json.dumps({"language": language, "arguments": {"n": n, "pause": pause},
                       "code_b64": base64.b64encode(CODE[language].encode()).decode()})
    req = urllib.request.Request(target() + "/run", data=body.encode(), method="POST", headers={
        "Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"raw": raw[:200].decode("utf-8", "replace")}
    except Exception as e:  # transport: refused, reset, timeout
        return 0, {"transport": repr(e)[:200]}


def ok(status, res, n):
    return status == 200 and res.get("status") == "success" and \
        res.get("result", {}).get("value") == n * 2


def once():
    out = []
    for i, language in enumerate(ARGS.get("languages", ["python"])):
        status, res = job(language, 10 + i)
        out.append({"language": language, "status": status, "ok": ok(status, res, 10 + i),
                    "res": res if not ok(status, res, 10 + i) else None})
    return out


def load():
    """workers threads, each sending jobs back to back until `seconds` pass or
    until the stop file appears; bounded by max_jobs in total."""
    deadline = time.monotonic() + ARGS.get("seconds", 20)
    results, lock = [], threading.Lock()
    counter = [0]

    def worker(w):
        while time.monotonic() < deadline:
            with lock:
                if counter[0] >= ARGS.get("max_jobs", 400):
                    return
                counter[0] += 1
                n = counter[0]
            started = time.monotonic()
            status, res = job(ARGS.get("language", "python"), n, ARGS.get("pause", 0.2))
            rec = {"n": n, "t": round(started, 3), "ms": int((time.monotonic() - started) * 1000),
                   "status": status, "ok": ok(status, res, n)}
            if not rec["ok"]:
                rec["res"] = res
            with lock:
                results.append(rec)
            if not rec["ok"]:
                time.sleep(0.2)  # a failed answer comes fast: do not spin

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(ARGS.get("workers", 3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


print(json.dumps(once() if MODE == "once" else load()))
