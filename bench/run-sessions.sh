#!/usr/bin/env bash
# run-sessions.sh - stateful sessions (README "Sessions"): the time to open a
# session (POST /v1/sessions, a warm sandbox taken from the pool and the
# runner's session started), and a cell `x + 1` in a warm session, p50/p99,
# through the gateway (analysis of the session's cells + two executor calls)
# and straight to the executor. Target: cell p50 <= 5 ms through the gateway
# (no container is created on that path). Real dockerd + runsc, this
# checkout's images ($SANDGATE_TAG, default latest). Prints the figures;
# fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
N=${SESSION_BENCH_N:-300}     # cells
OPENS=${SESSION_BENCH_OPENS:-12}
TAG=${SANDGATE_TAG:-latest}
bench_preflight run-sessions "$TAG"
bench_workdir
ep=$(free_port)
gp=$(free_port)
"$BUILD/sandgate-executor" --language python --listen "127.0.0.1:$ep" \
    --instance "bench-sess-$$" --image "sandgate/sandbox-python:$TAG" --flavour plain \
    --pool-size 4 --create-parallel 4 --max-sessions 32 --log-level warn \
    2>"$work/executor.log" & pids+=($!)
# nodejs has no executor here: the gateway needs one URL per language, and
# this one is never asked (a closed port).
cat >"$work/gw.json" <<EOF
{"port": $gp, "policies_dir": "policies", "audit_log": "$work/audit.log",
 "executors": {"python": ["http://127.0.0.1:$ep"], "nodejs": ["http://127.0.0.1:$(free_port)"]},
 "max_sessions": 64, "log_level": "warn", "health_interval_ms": 200}
EOF
"$BUILD/sandgate" -c "$work/gw.json" 2>"$work/gateway.log" & pids+=($!)
for _ in $(seq 300); do
    curl -fsS "http://127.0.0.1:$ep/healthz" 2>/dev/null | grep -q '"idle":4' && break
    sleep 0.1
done
curl -fsS "http://127.0.0.1:$ep/healthz" | grep -q '"idle":4' ||
    { echo "run-sessions: pool never filled"; cat "$work/executor.log"; exit 1; }
sleep 0.5 # one gateway health round: it learns the executor's boot id
print_load
python3 - "$gp" "$ep" "$N" "$OPENS" <<'PY' | tee "$work/out"
import http.client, json, statistics, sys, time

gp, ep, n, opens = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
T = {"X-Sandgate-Tenant": "anonymous", "Content-Type": "application/json"}

def call(conn, method, path, body=None, headers=None):
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers=headers or {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    return r.status, (json.loads(data) if data else None)

def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * p))], 2)

gw = http.client.HTTPConnection("127.0.0.1", gp)
create = []
for _ in range(opens):
    t0 = time.perf_counter()
    st, b = call(gw, "POST", "/v1/sessions", {"language": "python"})
    create.append((time.perf_counter() - t0) * 1000)
    assert st == 201, (st, b)
    call(gw, "DELETE", f"/v1/sessions/{b['session_id']}")
    time.sleep(0.6)  # let the pool refill: a creation takes a warm sandbox
st, b = call(gw, "POST", "/v1/sessions", {"language": "python"})
sid = b["session_id"]
assert call(gw, "POST", f"/v1/sessions/{sid}/exec", {"code": "x = 41"})[0] == 200
lat = []
for _ in range(n):
    t0 = time.perf_counter()
    st, b = call(gw, "POST", f"/v1/sessions/{sid}/exec", {"code": "x + 1"})
    lat.append((time.perf_counter() - t0) * 1000)
    assert st == 200 and b["result"]["value"] == 42, b
ex = http.client.HTTPConnection("127.0.0.1", ep)
direct = []
eid = sid[3:]
for _ in range(n):
    t0 = time.perf_counter()
    st, b = call(ex, "POST", f"/v1/sessions/{eid}/exec", {"code": "x + 1"}, T)
    direct.append((time.perf_counter() - t0) * 1000)
    assert st == 200 and b["result"]["value"] == 42, b
call(gw, "DELETE", f"/v1/sessions/{sid}")
print(f"session creation ({opens}, through the gateway): p50 {pct(create, 0.5)} ms, "
      f"max {round(max(create), 2)} ms")
print(f"cell 'x + 1' in a warm session through the gateway ({n}): p50 {pct(lat, 0.5)} ms, "
      f"p99 {pct(lat, 0.99)} ms (target p50 <= 5 ms); first third p50 "
      f"{pct(lat[:n // 3], 0.5)} ms, last third {pct(lat[-(n // 3):], 0.5)} ms (each cell is "
      f"analysed with every cell before it)")
print(f"cell 'x + 1' straight to the executor ({n}): p50 {pct(direct, 0.5)} ms, "
      f"p99 {pct(direct, 0.99)} ms")
PY
cell=$(sed -n "s/^cell 'x + 1' in a warm session through the gateway.*: p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1 \2/p" "$work/out")
bench_summary "a cell \`x + 1\` in a warm Python session through the gateway ($N cells; \`bench/run-sessions.sh\`)" \
    "p50 ${cell% *} ms, p99 ${cell#* } ms; session creation $(sed -n 's/^session creation.*: \(p50 .*\)/\1/p' "$work/out")" \
    "p50 ≤ 5 ms: $(verdict "${cell% *}" '<=' 5)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
