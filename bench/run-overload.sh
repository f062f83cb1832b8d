#!/usr/bin/env bash
# run-overload.sh - the whole path under load and overload: the release
# sandgate in front of a Python executor (plain and pandas flavours) and a
# Node executor, on the real dockerd + runsc, driven through POST /v1/run by
# closed-loop clients at concurrency 8 and 32 (OVERLOAD_BENCH_CONCURRENCY) with
# a fixed mix: OVERLOAD_BENCH_PANDAS_PCT % (10) one-line pandas jobs, the rest
# Python and Node hello-world alike. For each level: sustained jobs/s (answers
# "success"), p50/p99 of the successful jobs, and the share of answers that
# were 503 (executor_busy, server_busy, pool_busy: the fast refusal) and of
# anything else that was not a success, beside the sandbox creation ceiling:
# the bare `docker run --rm --runtime=runsc` rate measured in the same run,
# before and after the load (every job uses up a sandbox, so no level can
# sustain more; the pools start full, which adds at most their size over the
# run). Pools are refilled between the levels.
# Loopback only; about 2 minutes with the defaults. SANDGATE_TAG picks the
# sandbox image tag (latest). Prints the figures and the load average before
# and after; fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
EXECUTOR=$BUILD/sandgate-executor
SANDGATE=$BUILD/sandgate
SECS=${OVERLOAD_BENCH_SECONDS:-30}            # per concurrency level
LEVELS=${OVERLOAD_BENCH_CONCURRENCY:-8 32}
PANDAS_PCT=${OVERLOAD_BENCH_PANDAS_PCT:-10}
BARE=${OVERLOAD_BENCH_BARE_RUNS:-12}          # bare docker runs before and after (4 at a time)
PLAIN=${OVERLOAD_BENCH_PLAIN:-4}              # warm plain sandboxes per language
PANDAS=${OVERLOAD_BENCH_PANDAS:-1}            # warm pandas sandboxes (0: none)
WAIT_MS=${OVERLOAD_BENCH_POOL_WAIT_MS:-3000}  # the executors' --pool-wait-ms (default)
TAG=${SANDGATE_TAG:-latest}
for b in "$EXECUTOR" "$SANDGATE"; do
    [ -x "$b" ] || { echo "run-overload: $b is not built (make bench-bins)"; exit 1; }
done
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
for lang in python nodejs; do
    docker image inspect "sandgate/sandbox-$lang:$TAG" >/dev/null 2>&1 ||
        { echo "run-overload: sandgate/sandbox-$lang:$TAG missing (make images)"; exit 1; }
done
bench_workdir
# warm URL...: wait (at most 120 s) until every flavour of every executor is full.
warm() {
    local url
    for _ in $(seq 600); do
        for url in "$@"; do
            curl -fsS "$url/healthz" 2>/dev/null | python3 2>/dev/null -c 'import json,sys
h = json.load(sys.stdin)
sys.exit(0 if all(f["idle"] >= f["target"] for f in h["flavours"]) else 1)' || continue 2
        done
        return 0
    done
    echo "run-overload: pools never filled"; cat "$work"/*.log; exit 1
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
bare1=$(bare_rate "$BARE" "sandgate/sandbox-python:$TAG" /bin/true)
echo "bare docker run --rm --runtime=runsc (/bin/true), $BARE runs, 4 in parallel: $bare1 containers/s"

pyflav=(--flavour "plain:$PLAIN")
[ "$PANDAS" -gt 0 ] && pyflav+=(--flavour "pandas=numpy,pandas:$PANDAS")
py=http://127.0.0.1:$(free_port)
"$EXECUTOR" --language python --image "sandgate/sandbox-python:$TAG" --listen "${py#http://}" \
    --instance "bench-overload-py-$$" "${pyflav[@]}" --create-parallel 2 \
    --pool-wait-ms "$WAIT_MS" --log-level warn 2>"$work/python.log" & pids+=($!)
node=http://127.0.0.1:$(free_port)
"$EXECUTOR" --language nodejs --image "sandgate/sandbox-nodejs:$TAG" --listen "${node#http://}" \
    --instance "bench-overload-node-$$" --flavour "plain:$PLAIN" --create-parallel 2 \
    --pool-wait-ms "$WAIT_MS" --log-level warn 2>"$work/nodejs.log" & pids+=($!)
gp=$(free_port)
gw=http://127.0.0.1:$gp
cat >"$work/sandgate.json" <<JSON
{"port": $gp, "policies_dir": "policies", "audit_log": "$work/audit.log",
 "log_level": "warn", "executors": {"python": ["$py"], "nodejs": ["$node"]}}
JSON
"$SANDGATE" -c "$work/sandgate.json" 2>"$work/sandgate.log" & pids+=($!)
warm "$py" "$node"
for _ in $(seq 100); do curl -fsS "$gw/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS "$gw/readyz" >/dev/null || { echo "run-overload: gateway not ready"; cat "$work/sandgate.log"; exit 1; }

# creates: sandboxes both executors have created so far.
creates() {
    local n=0 url
    for url in "$py" "$node"; do
        n=$((n + $(curl -fsS "$url/metrics" |
            awk '/^sandgate_executor_container_creates_total\{result="ok"\}/ { print $2 }')))
    done
    echo "$n"
}
declare -A res made
for c in $LEVELS; do
    warm "$py" "$node"
    c0=$(creates)
    res[$c]=$(bench/exec_load.py overload "$gw" "$c" "$SECS" "$PANDAS_PCT")
    made[$c]=$(($(creates) - c0))
done
bare2=$(bare_rate "$BARE" "sandgate/sandbox-python:$TAG" /bin/true)
bare=$(python3 -c "print(round(($bare1 + $bare2) / 2, 2))")
echo "bare rate again after the load: $bare2 containers/s; ceiling used below: the mean, $bare/s"
max_jobs=$(curl -fsS "$py/healthz" | jq_ max_jobs)
echo "mix: $PANDAS_PCT % pandas, the rest Python / Node hello-world alike; warm pools: plain:$PLAIN per" \
     "language, pandas:$PANDAS; --pool-wait-ms $WAIT_MS, executor max_jobs $max_jobs"
for c in $LEVELS; do
    r=${res[$c]}
    jps=$(jq_ jobs_per_s <<<"$r")
    echo "c=$c for ${SECS}s: $jps jobs/s = $(python3 -c "print(round(100 * $jps / $bare))")% of the" \
         "ceiling; success p50 $(jq_ p50_ms <<<"$r") ms, p99 $(jq_ p99_ms <<<"$r") ms;" \
         "$(jq_ jobs <<<"$r") answers, 503 $(jq_ busy_pct <<<"$r") % (p50 $(jq_ busy_p50_ms <<<"$r") ms)," \
         "other non-success $(jq_ other_pct <<<"$r") %; pools created" \
         "$(python3 -c "print(round(${made[$c]} / $(jq_ seconds <<<"$r"), 2))")/s"
    echo "    statuses $(jq_ by_status <<<"$r")"
    bench_summary "overload through the whole path, c=$c for ${SECS} s (45 % Python, 45 % Node hello, 10 % pandas; \`bench/run-overload.sh\`)" \
        "$jps jobs/s = $(python3 -c "print(round(100 * $jps / $bare))") % of bare ($bare/s); success p50 $(jq_ p50_ms <<<"$r") ms, p99 $(jq_ p99_ms <<<"$r") ms; 503 $(jq_ busy_pct <<<"$r") %, other $(jq_ other_pct <<<"$r") %" \
        "every answer a success or a documented 503: $(verdict "$(jq_ other_pct <<<"$r")" '<=' 0)"
    for k in python nodejs pandas; do
        echo "    $k: $(jq_ $k.ok <<<"$r")/$(jq_ $k.of <<<"$r") succeeded, p50 $(jq_ $k.p50_ms <<<"$r") ms," \
             "p99 $(jq_ $k.p99_ms <<<"$r") ms"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
