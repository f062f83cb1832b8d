#!/usr/bin/env python3
"""pools_load.py - load through the gateway's POST /v1/run for the pool
flavours benchmark (stdlib only; loopback only).

  pools_load.py latency GW EXEC KIND N     N sequential KIND jobs (hello|pandas|tabulate:
                                           tabulate under the policy bench-sets),
                                           each sent when every pool is full and quiet
  pools_load.py mix GW EXEC C S PCT        C concurrent clients for S seconds, PCT % of
                                           the jobs pandas, the rest hello-world

Prints one JSON object: client latency p50/p99 (ms) per kind, counts by status
and by flavour (with fall-backs), jobs/s, and the executor's create rate and
planned pool memory over the run.
"""
import json
import sys
import threading
import time

from exec_load import call, pct

JOBS = {
    "hello": "def main():\n    print('hello')\n    return {'hello': 'world'}\n",
    "pandas": "import pandas as pd\n\ndef main():\n"
              "    df = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})\n"
              "    return {'sum': int(df['a'].sum()), 'mean_b': float(df['b'].mean())}\n",
    # a package set's package (bench/run-sets.sh): the policy that allows it
    "tabulate": "from tabulate import tabulate\n\ndef main():\n"
                "    return tabulate([['a', 1], ['b', 2]], tablefmt='plain')\n",
}
POLICY = {"tabulate": "bench-sets"}
MAX_SECONDS = 600


def hostport(url):
    h, p = url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    return h, int(p)


def health(ex):
    _, raw = call(*ex, "GET", "/healthz")
    return json.loads(raw)


def creates(ex):
    _, raw = call(*ex, "GET", "/metrics")
    for line in raw.decode().splitlines():
        if line.startswith('sandgate_executor_container_creates_total{result="ok"}'):
            return int(line.split()[-1])
    raise SystemExit("no create counter in /metrics")


def wait_warm(ex, deadline):
    while time.time() < deadline:
        h = health(ex)
        if all(f["idle"] >= f["target"] and f["creating"] == 0 for f in h["flavours"]) and \
                h["pool"]["tearing_down"] == 0:
            return
        time.sleep(0.02)


def one(gw, kind, out):
    t0 = time.perf_counter()
    body = {"language": "python", "code": JOBS[kind]}
    if kind in POLICY:
        body["policy"] = POLICY[kind]
    status, raw = call(*gw, "POST", "/v1/run", body, timeout=120)
    ms = (time.perf_counter() - t0) * 1000
    body = json.loads(raw)
    key = body.get("status", "?") if status == 200 else f"http_{status}"
    pool = body.get("pool") or {}
    flav = pool.get("flavour", "-") + ("(fallback)" if pool.get("fallback") else "")
    out.append((kind, ms, key, flav))


def summarize(results, elapsed=None):
    out = {"jobs": len(results), "by_status": {}, "by_flavour": {}}
    for kind, _, key, flav in results:
        out["by_status"][key] = out["by_status"].get(key, 0) + 1
        k = f"{kind}->{flav}"
        out["by_flavour"][k] = out["by_flavour"].get(k, 0) + 1
    for kind in JOBS:
        ok = [ms for k, ms, key, _ in results if k == kind and key == "success"]
        if ok:
            out[kind] = {"n": len(ok), "p50_ms": pct(ok, 50), "p99_ms": pct(ok, 99)}
    if elapsed:
        n_ok = sum(1 for _, _, key, _ in results if key == "success")
        out.update(seconds=round(elapsed, 2), jobs_per_s=round(n_ok / elapsed, 2))
    return out


def latency(gw, ex, kind, n):
    results = []
    deadline = time.time() + MAX_SECONDS
    for _ in range(n):
        wait_warm(ex, deadline)
        one(gw, kind, results)
    return summarize(results)


def mix(gw, ex, clients, seconds, pandas_pct):
    seconds = min(seconds, MAX_SECONDS)
    results, lock = [], threading.Lock()
    stop = time.time() + seconds
    planned = []

    def worker(w):
        mine, i = [], 0
        while time.time() < stop:
            # a fixed interleaving: pandas_pct of every 100 jobs, spread out
            kind = "pandas" if (i * clients + w) * pandas_pct % 100 < pandas_pct else "hello"
            one(gw, kind, mine)
            i += 1
        with lock:
            results.extend(mine)

    c0, t0 = creates(ex), time.time()
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        planned.append(health(ex)["pool"]["memory_planned_mb"])
        time.sleep(0.5)
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    out = summarize(results, elapsed)
    out.update(creates_per_s=round((creates(ex) - c0) / elapsed, 2),
               planned_mb_max=max(planned) if planned else None)
    return out


def main(argv):
    mode, gw, ex = argv[1], hostport(argv[2]), hostport(argv[3])
    for h, _ in (gw, ex):
        assert h.startswith("127."), "load goes to loopback only"
    if mode == "latency":
        res = latency(gw, ex, argv[4], int(argv[5]))
    elif mode == "mix":
        res = mix(gw, ex, int(argv[4]), float(argv[5]), int(argv[6]))
    else:
        raise SystemExit(__doc__)
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv)
