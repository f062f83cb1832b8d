#!/usr/bin/env python3
"""exec_load.py - load for sandgate-executor's POST /v1/exec (stdlib only).

  exec_load.py latency URL LANG N       N sequential hello-world jobs, each sent
                                        when the pool is full and quiet (warm)
  exec_load.py throughput URL LANG C S  C concurrent clients for S seconds
  exec_load.py latency-ab URL LANG N RUNTIME_JSON [JOB]
                                        N warm jobs alternating without and with
                                        the run-time policy in RUNTIME_JSON (a
                                        file); JOB is hello (default) or pandas;
                                        prints {"off": {...}, "on": {...}}
  exec_load.py latency-ab2 URL_A URL_B LANG N RUNTIME_JSON [JOB] [--settled]
                                        N warm jobs on each of two executors,
                                        alternating, both with the run-time
                                        policy; prints {"a": {...}, "b": {...}}
  exec_load.py overload GW C S PANDAS_PCT
                                        C concurrent clients for S seconds through
                                        the gateway's POST /v1/run (GW), a fixed
                                        mix: PANDAS_PCT % pandas jobs, the rest
                                        Python and Node hello-world alike; counts
                                        every answer by HTTP status and error code

Prints one JSON object: client latencies (p50/p99 ms), the executor's own
run_ms p50, counts by status, jobs/s and the pool's container-create rate
(from /metrics) over the same window. Talks to loopback only.
"""
import http.client
import json
import sys
import threading
import time

HELLO = {
    "python": "def main():\n    print('hello')\n    return {'hello': 'world'}\n",
    "nodejs": "function main() {\n  console.log('hello');\n  return {hello: 'world'};\n}\n",
}
# A data job: with the run-time policy on, pandas' import runs under the audit
# hook (unless the image pre-imports it).
PANDAS = "import pandas as pd\n\ndef main():\n    return int(pd.DataFrame({'a': [1, 2]}).a.sum())\n"
# The overload mix through the gateway: (language, code) per kind.
MIX = {
    "python": ("python", HELLO["python"]),
    "nodejs": ("nodejs", HELLO["nodejs"] + "module.exports = { main };\n"),
    "pandas": ("python", PANDAS),
}
MAX_SECONDS = 600  # a run never goes on longer than this, whatever it was asked


def call(host, port, method, path, body=None, timeout=60):
    assert host.startswith("127."), "load goes to loopback only"
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, raw


def pool(host, port):
    _, raw = call(host, port, "GET", "/healthz")
    return json.loads(raw)["pool"]


def creates(host, port):
    _, raw = call(host, port, "GET", "/metrics")
    for line in raw.decode().splitlines():
        if line.startswith('sandgate_executor_container_creates_total{result="ok"}'):
            return int(line.split()[-1])
    raise SystemExit("no create counter in /metrics")


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))], 2)


def one_job(host, port, lang, out, extra=None, code=None):
    body = {"language": lang, "code": code or HELLO[lang]}
    body.update(extra or {})
    t0 = time.perf_counter()
    status, raw = call(host, port, "POST", "/v1/exec", body)
    ms = (time.perf_counter() - t0) * 1000
    body = json.loads(raw)
    key = body.get("status", "?") if status == 200 else f"http_{status}"
    out.append((ms, key, body.get("timings", {}).get("run_ms")))


def wait_warm(host, port, deadline):
    while time.time() < deadline:  # warm: every sandbox ready, none being made
        p = pool(host, port)
        if p["idle"] >= p["target"] and p["creating"] == 0 and p["tearing_down"] == 0:
            return
        time.sleep(0.02)


def latency(host, port, lang, n):
    results = []
    deadline = time.time() + MAX_SECONDS
    for _ in range(n):
        wait_warm(host, port, deadline)
        one_job(host, port, lang, results)
    return summarize(results, None)


def latency_ab(host, port, lang, n, runtime_file, job="hello"):
    """Off and on interleaved, so drift on a shared machine hits both alike."""
    with open(runtime_file) as f:
        runtime = json.load(f)
    code = PANDAS if job == "pandas" else HELLO[lang]
    off, on = [], []
    deadline = time.time() + MAX_SECONDS
    for i in range(2 * n):
        wait_warm(host, port, deadline)
        if i % 2:
            one_job(host, port, lang, on, {"runtime": runtime}, code)
        else:
            one_job(host, port, lang, off, None, code)
    return {"off": summarize(off, None), "on": summarize(on, None)}


def wait_full(host, port, deadline):
    """Every flavour has its sandboxes ready (the one the job takes is warm);
    teardown of the last job's may still run, on both sides alike."""
    while time.time() < deadline:
        p = pool(host, port)
        if p["idle"] >= p["target"]:
            return
        time.sleep(0.02)


def latency_ab2(url_a, url_b, lang, n, runtime_file, job="hello", settled=False):
    """Two executors (e.g. two images) alternating, so drift hits both alike.
    Before each job both pools are full again, so no sandbox creation (the
    other side's refill included) competes with the job being timed: what
    differs between the sides is the job's own path. settled: also no
    teardown of an earlier job's sandbox still running on either side (on
    2 cores it competes with the job timed, and a larger sandbox takes
    longer to tear down: that is a cost per sandbox, not on the job's
    path)."""
    with open(runtime_file) as f:
        runtime = json.load(f)
    code = PANDAS if job == "pandas" else HELLO[lang]
    sides = [(hostport(url_a), []), (hostport(url_b), [])]
    deadline = time.time() + MAX_SECONDS
    for i in range(2 * n):
        (host, port), out = sides[i % 2]
        for (h, p), _ in sides:
            (wait_warm if settled else wait_full)(h, p, deadline)
        one_job(host, port, lang, out, {"runtime": runtime}, code)
    return {"a": summarize(sides[0][1], None), "b": summarize(sides[1][1], None)}


def hostport(url):
    host, port = url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    return host, int(port)


def throughput(host, port, lang, clients, seconds):
    seconds = min(seconds, MAX_SECONDS)
    results, lock = [], threading.Lock()
    stop = time.time() + seconds

    def worker():
        mine = []
        while time.time() < stop:
            one_job(host, port, lang, mine)
        with lock:
            results.extend(mine)
    c0, t0 = creates(host, port), time.time()
    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    made = creates(host, port) - c0
    return summarize(results, elapsed, made)


def mix_kind(i, pandas_pct):
    """The i-th job of the mix: pandas_pct % pandas, spread out; the rest alternate."""
    if i * pandas_pct % 100 < pandas_pct:
        return "pandas"
    return "python" if (i - i * pandas_pct // 100) % 2 else "nodejs"


def gateway_job(host, port, kind, out):
    lang, code = MIX[kind]
    t0 = time.perf_counter()
    try:
        status, raw = call(host, port, "POST", "/v1/run", {"language": lang, "code": code},
                           timeout=120)
    except OSError as e:  # a lost connection is an outcome too, never dropped
        out.append((kind, (time.perf_counter() - t0) * 1000, f"conn_{type(e).__name__}"))
        return
    ms = (time.perf_counter() - t0) * 1000
    try:
        body = json.loads(raw)
    except ValueError:
        body = {}
    if status == 200:
        key = body.get("status", "?")
    else:
        err = body.get("error") if isinstance(body.get("error"), dict) else {}
        key = f"http_{status}/{err.get('code', '?')}"
    out.append((kind, ms, key))


def overload(host, port, clients, seconds, pandas_pct):
    seconds = min(seconds, MAX_SECONDS)
    results, lock = [], threading.Lock()
    stop = time.time() + seconds

    def worker(w):
        mine, i = [], w
        while time.time() < stop:
            gateway_job(host, port, mix_kind(i, pandas_pct), mine)
            i += clients
        with lock:
            results.extend(mine)
    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    ok = [ms for _, ms, key in results if key == "success"]
    busy = [ms for _, ms, key in results if key.startswith("http_503/")]
    counts = {}
    for _, _, key in results:
        counts[key] = counts.get(key, 0) + 1
    n = len(results) or 1
    out = {"jobs": len(results), "seconds": round(elapsed, 2), "by_status": counts,
           "jobs_per_s": round(len(ok) / elapsed, 2), "answers_per_s": round(len(results) / elapsed, 2),
           "p50_ms": pct(ok, 50), "p99_ms": pct(ok, 99),
           "busy_pct": round(100 * len(busy) / n, 1), "busy_p50_ms": pct(busy, 50),
           "other_pct": round(100 * (len(results) - len(ok) - len(busy)) / n, 1)}
    for kind in MIX:
        mine = [ms for k, ms, key in results if k == kind and key == "success"]
        out[kind] = {"ok": len(mine), "of": sum(1 for k, _, _ in results if k == kind),
                     "p50_ms": pct(mine, 50), "p99_ms": pct(mine, 99)}
    return out


def summarize(results, elapsed, made=None):
    ok = [ms for ms, key, _ in results if key == "success"]
    counts = {}
    for _, key, _ in results:
        counts[key] = counts.get(key, 0) + 1
    out = {"jobs": len(results), "by_status": counts, "p50_ms": pct(ok, 50), "p99_ms": pct(ok, 99),
           "run_ms_p50": pct([r for _, k, r in results if k == "success" and r], 50)}
    if elapsed:
        out.update(seconds=round(elapsed, 2), jobs_per_s=round(len(ok) / elapsed, 2),
                   creates_per_s=round(made / elapsed, 2))
    return out


def main(argv):
    if argv[1:2] == ["latency-ab2"]:
        settled = "--settled" in argv
        args = [a for a in argv if a != "--settled"]
        print(json.dumps(latency_ab2(args[2], args[3], args[4], int(args[5]), args[6],
                                     args[7] if len(args) > 7 else "hello", settled)))
        return
    mode, url, lang = argv[1], argv[2], argv[3]
    hostport = url.split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    if mode == "latency":
        res = latency(host, int(port), lang, int(argv[4]))
    elif mode == "latency-ab":
        res = latency_ab(host, int(port), lang, int(argv[4]), argv[5],
                         argv[6] if len(argv) > 6 else "hello")
    elif mode == "overload":
        res = overload(host, int(port), int(argv[3]), float(argv[4]), int(argv[5]))
    elif mode == "throughput":
        res = throughput(host, int(port), lang, int(argv[4]), float(argv[5]))
    else:
        raise SystemExit(__doc__)
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv)
