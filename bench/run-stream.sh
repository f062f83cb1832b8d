#!/usr/bin/env bash
# run-stream.sh - streamed output through the whole path (release gateway in
# front of a Python executor on dockerd + runsc, this checkout's images:
# $SANDGATE_TAG, default latest): for a job that prints at once, then works
# for STREAM_BENCH_WORK_MS, the time from sending POST /v1/run with
# "stream": true to (a) the response's first byte, (b) the first stdout event,
# (c) the result event; and the same job without streaming, whose output the
# client sees only with the answer. Each job is sent when the pool is full
# and quiet. Target: first stdout event in well under the work time (the
# output is not held back until the end). Prints p50/p99; fails only when it
# cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
N=${STREAM_BENCH_N:-20}
WORK_MS=${STREAM_BENCH_WORK_MS:-500}
TAG=${SANDGATE_TAG:-latest}
bench_preflight run-stream "$TAG"
bench_workdir
ex_port=$(free_port)
gw_port=$(free_port)
ex=http://127.0.0.1:$ex_port
"$BUILD/sandgate-executor" --language python --listen "127.0.0.1:$ex_port" \
    --instance "bench-stream-$$" --image "sandgate/sandbox-python:$TAG" --flavour plain \
    --pool-size 2 --log-level warn 2>"$work/executor.log" & pids+=($!)
for _ in $(seq 300); do
    curl -fsS "$ex/healthz" 2>/dev/null | grep -q '"idle":2' && break
    sleep 0.1
done
cat >"$work/sandgate.json" <<JSON
{"port": $gw_port, "policies_dir": "policies", "audit_log": "$work/audit.log",
 "log_level": "warn", "executors": {"python": ["$ex"], "nodejs": ["$ex"]}}
JSON
"$BUILD/sandgate" -c "$work/sandgate.json" 2>"$work/sandgate.log" & pids+=($!)
print_load
python3 - "$gw_port" "$ex" "$N" "$WORK_MS" <<'PY' | tee "$work/out"
import http.client, json, sys, time
port, ex, n, work_ms = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
code = ("import time\ndef main():\n    print('started', flush=True)\n"
        f"    time.sleep({work_ms / 1000})\n    print('done')\n")

def quiet():
    deadline = time.time() + 60
    while time.time() < deadline:
        c = http.client.HTTPConnection(ex.split("//")[1].split(":")[0], int(ex.rsplit(":", 1)[1]))
        c.request("GET", "/healthz")
        h = json.loads(c.getresponse().read())
        c.close()
        p = h["pool"]
        if p["idle"] >= 2 and p["creating"] == 0 and p["tearing_down"] == 0:
            return
        time.sleep(0.05)
    sys.exit("run-stream: the pool never settled")

def wait_gateway():
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("run-stream: the gateway never became ready")

def one(stream):
    body = {"language": "python", "code": code}
    if stream:
        body["stream"] = True
    t0 = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/v1/run", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = c.getresponse()
    head = time.monotonic() - t0
    first, event, status = None, None, None
    if not stream:
        status = json.loads(r.read())["status"]
    for raw in r if stream else ():
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == "stdout" and first is None:
            first = time.monotonic() - t0
        elif line.startswith("data: ") and event == "result":
            status = json.loads(line[6:])["status"]
    end = time.monotonic() - t0
    c.close()
    if status != "success":
        sys.exit(f"run-stream: a job ended as {status}")
    return head * 1000, (first or end) * 1000, end * 1000

def pct(v, q):
    v = sorted(v)
    return round(v[min(len(v) - 1, int(q * len(v)))], 1)

wait_gateway()
rows = {True: [], False: []}
for i in range(n):
    for stream in (True, False):
        quiet()
        rows[stream].append(one(stream))
s, p = rows[True], rows[False]
print(f"streamed (job prints, then works {work_ms} ms; {n} jobs): first byte p50 "
      f"{pct([r[0] for r in s], .5)} ms p99 {pct([r[0] for r in s], .99)} ms; first stdout event "
      f"p50 {pct([r[1] for r in s], .5)} ms p99 {pct([r[1] for r in s], .99)} ms; result p50 "
      f"{pct([r[2] for r in s], .5)} ms")
print(f"not streamed, same job: output seen with the answer, p50 {pct([r[2] for r in p], .5)} ms "
      f"p99 {pct([r[2] for r in p], .99)} ms")
PY
first=$(sed -n 's/.*first stdout event p50 \([0-9.]*\) ms.*/\1/p' "$work/out")
bench_summary "streamed \`POST /v1/run\`: a job that prints, then works $WORK_MS ms ($N jobs; \`bench/run-stream.sh\`)" \
    "first stdout event p50 $first ms; result p50 $(sed -n 's/.*; result p50 \([0-9.]*\) ms/\1/p' "$work/out") ms; unstreamed answer p50 $(sed -n 's/.*with the answer, p50 \([0-9.]*\) ms.*/\1/p' "$work/out") ms" \
    "first output long before the job ends: $(verdict "$first" '<=' "$((WORK_MS / 2))")"
