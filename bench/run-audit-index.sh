#!/usr/bin/env bash
# run-audit-index.sh - the audit index (gateway/console/gw_audit_index.h).
#
# (1) Rebuild: `sandgate-audit rebuild` over a generated log of
#     AUDIT_BENCH_LINES lines (default 1,000,000; bench/gen_audit_log.py),
#     wall time and lines/s. Target: under 60 s on 2 cores.
# (2) A query by rule: GET /v1/audit?rule=... (newest 50 of one rule that one
#     line in 200 carries), and the same for a common rule, against that index
#     through the release gateway: p50/p99 of AUDIT_BENCH_QUERIES queries.
#     Target: p50 under 10 ms.
# (3) Hello-world /run p50 with the index on and off, side by side: two
#     gateways in front of one stub executor, measured in turns (off, on,
#     off, on), each turn N requests (bench_gateway latency). The index's
#     thread tails the growing log while the requests run. Target: the
#     medians within 0.5 ms of each other.
# Fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
LINES=${AUDIT_BENCH_LINES:-1000000}
QUERIES=${AUDIT_BENCH_QUERIES:-200}
N=${GATEWAY_BENCH_N:-2000}
for b in "$BUILD/sandgate" "$BUILD/sandgate-audit" "$BUILD/bench/bench_gateway"; do
    [ -x "$b" ] || { echo "run-audit-index: $b is not built (make bench-bins)"; exit 1; }
done
bench_workdir
wait_up() {
    for _ in $(seq 100); do
        curl -fsS "$1/healthz" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "run-audit-index: $1 did not come up"; exit 1
}
print_load

echo "== rebuild from a log of $LINES lines (target < 60 s)"
python3 bench/gen_audit_log.py "$LINES" "$work/big.log"
echo "  log: $(du -m "$work/big.log" | cut -f1) MB"
t0=$(date +%s.%N)
"$BUILD/sandgate-audit" --db "$work/big.db" --log "$work/big.log" rebuild | sed 's/^/  /'
rebuild_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "  index: $(du -m "$work/big.db" | cut -f1) MB"

exec_port=$(free_port)
"$BUILD/bench/bench_gateway" stub "$exec_port" & pids+=($!)
stub=http://127.0.0.1:$exec_port
wait_up "$stub"
gateway() { # NAME PORT LOG INDEX: a release gateway in front of the stub
    cat >"$work/$1.json" <<JSON
{"port": $2, "policies_dir": "policies", "audit_log": "$3", "audit_index": "$4",
 "log_level": "warn", "executors": {"python": ["$stub"], "nodejs": ["$stub"]}}
JSON
    "$BUILD/sandgate" -c "$work/$1.json" 2>"$work/$1.err" & pids+=($!)
    wait_up "http://127.0.0.1:$2"
}

q_port=$(free_port)
gateway query "$q_port" "$work/big.log" "$work/big.db"
echo "== a query by rule over $LINES lines ($QUERIES queries each; target p50 < 10 ms)"
python3 - "http://127.0.0.1:$q_port" "$QUERIES" <<'PY' | tee "$work/query"
import http.client, statistics, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1]); n = int(sys.argv[2])
conn = http.client.HTTPConnection(url.hostname, url.port)
for rule, what in (("py.forbidden_call.eval", "a rare rule (1 line in 200)"),
                   ("py.import.forbidden", "a common rule (about 1 line in 40)")):
    times = []
    for i in range(n):
        t = time.perf_counter()
        conn.request("GET", "/v1/audit?limit=50&rule=" + rule)
        r = conn.getresponse(); body = r.read()
        times.append((time.perf_counter() - t) * 1000)
        assert r.status == 200, body
    times.sort()
    print("  %-36s p50 %.2f ms  p99 %.2f ms" % (what, statistics.median(times), times[int(n * .99) - 1]))
PY

off_port=$(free_port)
on_port=$(free_port)
gateway off "$off_port" "$work/off.log" ""
gateway on "$on_port" "$work/on.log" "$work/on.db"
echo "== hello-world /run p50, audit index off vs on ($N requests a turn; target within 0.5 ms)"
off=() on=()
p50() { "$BUILD/bench/bench_gateway" latency "$stub" "$1" "$N" python |
    sed -n 's/.*through gateway *p50 \([0-9.]*\) ms.*/\1/p'; }
for turn in 1 2; do
    off+=("$(p50 "http://127.0.0.1:$off_port")")
    on+=("$(p50 "http://127.0.0.1:$on_port")")
    echo "  turn $turn: index off p50 ${off[-1]} ms, index on p50 ${on[-1]} ms"
done
indexed=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from audit").fetchone()[0])' "$work/on.db")
awk -v a="$(med "${off[@]}")" -v b="$(med "${on[@]}")" -v n="$indexed" 'BEGIN {
    printf "  median: index off %.3f ms, index on %.3f ms, difference %+.3f ms (%d lines indexed meanwhile)\n",
        a, b, b - a, n }'
q50=$(sed -n 's/.*a rare rule.* p50 \([0-9.]*\) ms.*/\1/p' "$work/query")
bench_summary "audit index: rebuild from a $LINES-line log ($(du -m "$work/big.log" | cut -f1) MB; \`bench/run-audit-index.sh\`)" \
    "$rebuild_s s, index $(du -m "$work/big.db" | cut -f1) MB" "< 60 s: $(verdict "$rebuild_s" '<=' 60)"
bench_summary "audit index: a query by rule over it, newest 50 (a rare / a common rule)" \
    "$(sed -n 's/.* \(p50 [0-9.]* ms\)  *\(p99 [0-9.]* ms\)$/\1, \2/p' "$work/query" | paste -sd/ | sed 's|/| / |')" \
    "p50 < 10 ms: $(verdict "$q50" '<=' 10)"
d=$(awk -v a="$(med "${off[@]}")" -v b="$(med "${on[@]}")" 'BEGIN { printf "%+.3f", b - a }')
bench_summary "audit index off vs on, hello-world \`/run\` p50 through the gateway (stub executor)" \
    "$(med "${off[@]}") vs $(med "${on[@]}") ms ($d ms)" "within 0.5 ms: $(verdict "${d#+}" '<=' 0.5)"
