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
    mode, url, lang = argv[1], argv[2], argv[3]
    hostport = url.split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    if mode == "latency":
        res = latency(host, int(port), lang, int(argv[4]))
    elif mode == "latency-ab":
        res = latency_ab(host, int(port), lang, int(argv[4]), argv[5],
                         argv[6] if len(argv) > 6 else "hello")
    elif mode == "throughput":
        res = throughput(host, int(port), lang, int(argv[4]), float(argv[5]))
    else:
        raise SystemExit(__doc__)
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv)
