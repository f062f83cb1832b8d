#!/usr/bin/env bash
# run-gateway.sh - gateway overhead and /v1/analyze throughput.
#
# Starts a stub executor (answers at once) and the release sandgate in front of
# it, then measures (1) hello-world latency straight to the executor and
# through the gateway's /run - the difference is the gateway's overhead, p50
# and p99 - and (2) requests/s for /v1/analyze with a ~2 KB job at
# concurrency 1 and 8 (keep-alive), twice: (a) unique submissions (a comment
# line changes in every request, so the verdict cache always misses and
# every request is a cold analysis) and (b) one repeated submission (served
# from the verdict cache after the first request). The cache's hit and miss
# counters from /metrics are printed next to each, so a cached figure is
# never taken for a cold one. Targets: overhead p50 <= 1 ms; /v1/analyze
# >= 5000 requests/s. Fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
SANDGATE=$BUILD/sandgate
BENCH=$BUILD/bench/bench_gateway
N=${GATEWAY_BENCH_N:-3000}
SECS=${GATEWAY_BENCH_SECONDS:-5}
for b in "$SANDGATE" "$BENCH"; do
    [ -x "$b" ] || { echo "run-gateway: $b is not built (make bench-bins)"; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
wait_up() {
    for _ in $(seq 100); do
        curl -fsS "$1/healthz" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "run-gateway: $1 did not come up"; exit 1
}

exec_port=$(free_port)
gw_port=$(free_port)
"$BENCH" stub "$exec_port" & pids+=($!)
stub=http://127.0.0.1:$exec_port
wait_up "$stub"
cat >"$work/sandgate.json" <<JSON
{"port": $gw_port, "policies_dir": "policies", "audit_log": "$work/audit.log",
 "log_level": "warn", "executors": {"python": ["$stub"], "nodejs": ["$stub"]}}
JSON
"$SANDGATE" -c "$work/sandgate.json" 2>"$work/sandgate.log" & pids+=($!)
gw=http://127.0.0.1:$gw_port
wait_up "$gw"

# Python when its analyzer is built in, else JavaScript.
lang=python
if ! curl -fsS -o /dev/null "$gw/v1/analyze" -d '{"language":"python","code":"x = 1\n"}'; then
    lang=nodejs
fi
echo "== gateway overhead ($lang, stub executor)"
"$BENCH" latency "$stub" "$gw" "$N" "$lang" | tee "$work/latency"
bench_summary "gateway overhead, hello-world through the gateway minus straight to a stub executor ($N requests; \`bench/run-gateway.sh\`)" \
    "$(sed -n 's/.*gateway overhead  *\(p50 [0-9.]* ms\)  *\(p99 [0-9.]* ms\).*/\1, \2/p' "$work/latency")" \
    "p50 ≤ 1 ms: $(verdict "$(sed -n 's/.*gateway overhead  *p50 \([0-9.]*\) ms.*/\1/p' "$work/latency")" '<=' 1)"

python3 - "$lang" >"$work/job.json" <<'PY'
import json, sys
lang = sys.argv[1]
if lang == "python":
    unit = ("def summarise_{i}(rows, key='value'):\n"
            "    total = 0\n    count = 0\n"
            "    for row in rows:\n        if key in row and row[key] is not None:\n"
            "            total += float(row[key])\n            count += 1\n"
            "    return {{'mean': total / count if count else None, 'n': count}}\n\n")
    tail = "def main(rows=None):\n    return summarise_0(rows or [])\n"
    head = "# SGUNIQUE00000000\n"
else:
    unit = ("function summarise{i}(rows, key) {{\n  let total = 0, count = 0;\n"
            "  for (const row of rows) {{\n    if (row[key] != null) {{ total += Number(row[key]); "
            "count++; }}\n  }}\n  return {{ mean: count ? total / count : null, n: count }};\n}}\n\n")
    tail = "function main(a) { return summarise0(a.rows || [], 'value'); }\nmodule.exports = { main };\n"
    head = "// SGUNIQUE00000000\n"
code, i = head, 0
while len(code) + len(tail) < 2048 - len(unit) // 2:
    code += unit.format(i=i)
    i += 1
code += tail
print(json.dumps({"language": lang, "code": code}))
PY
bytes=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["code"]))' "$work/job.json")
verdict=$(curl -fsS "$gw/v1/analyze" --data-binary @"$work/job.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
cache() { curl -fsS "$gw/metrics" | awk '/^sandgate_analysis_cache_lookups_total/ {
    sub(/.*result="/, ""); sub(/"}/, ""); printf "%s %s ", $1, $2 }'; }
rps() { # MODE CONCURRENCY: requests/s, then the cache counters it moved
    local before after
    before=$(cache)
    "$BENCH" "$1" "$gw/v1/analyze" "$2" "$SECS" "$work/job.json" | tee "$work/$1-$2" ||
        { echo "run-gateway: cannot measure"; exit 1; }
    after=$(cache)
    awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " ");
        printf "    verdict cache during the run: %d hits, %d misses\n", y[2] - x[2], y[4] - x[4] }'
}
echo "== /v1/analyze throughput ($lang job of $bytes bytes, verdict $verdict; target >= 5000 requests/s)"
echo "  (a) unique submissions: every request is a cold analysis"
rps rps-unique 1
rps rps-unique 8
echo "  (b) one repeated submission: answered from the verdict cache"
rps rps 1
rps rps 8
rate() { sed -n 's/.*: \([0-9]*\) requests\/s.*/\1/p' "$work/$1"; }
bench_summary "\`/v1/analyze\`, $bytes-byte $lang job, every request a cold analysis, c=1 / c=8" \
    "$(rate rps-unique-1) / $(rate rps-unique-8) requests/s" "≥ 5,000/s: $(verdict "$(rate rps-unique-8)" '>=' 5000)"
bench_summary "\`/v1/analyze\`, the same job repeated (verdict cache), c=1 / c=8" \
    "$(rate rps-1) / $(rate rps-8) requests/s" "≥ 5,000/s: $(verdict "$(rate rps-8)" '>=' 5000)"
python3 - "$gw" "$work/job.json" <<'PY'
import json, statistics, sys, urllib.request
body = open(sys.argv[2]).read()
runs = []
for i in range(50):  # unique bodies: cold analyses
    b = body.replace("SGUNIQUE00000000", "%016x" % (0xffff00000000 + i)).encode()
    runs.append(json.load(urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/v1/analyze", b)))["stats"])
assert not any(r["cached"] for r in runs), "unique bodies must not hit the cache"
med = lambda k: statistics.median(r[k] for r in runs)
print("  cold analysis inside the gateway (median of 50 unique jobs): %.3f ms (parse %.3f ms, policy evaluation %.3f ms, %d nodes)"
      % (med("analysis_ms"), med("parse_ms"), med("eval_ms"), runs[0]["nodes"]))
PY
