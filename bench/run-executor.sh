#!/usr/bin/env bash
# run-executor.sh - sandgate-executor latency and throughput against the real
# dockerd + runsc, for Python and Node hello-world jobs through POST /v1/exec:
#   latency p50/p99 at concurrency 1 with a warm pool (each job sent when the
#   pool is full and quiet), sustained jobs/s at concurrency 4, and the pool's
#   container-create rate beside the bare `docker run --rm --runtime=runsc`
#   rate measured in the same run (the ceiling: every job uses up a sandbox).
# Plain pools only (hello-world imports nothing; run-pools.sh measures the
# flavours). EXEC_BENCH_LANGS picks the languages ("python nodejs");
# SANDGATE_TAG the sandbox images' tag (latest), or the executor's own
# environment (SANDBOX_BASE_PYTHON_IMAGE, SANDBOX_BASE_NODEJS_IMAGE) others.
# Targets: Python p50 <= 15 ms, Node p50 close to Python's; sustained jobs/s
# >= 80% of the bare rate. Prints the figures and the load average before and
# after (compare runs only on a quiet machine); fails only when it cannot
# measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
EXECUTOR=$BUILD/sandgate-executor
N=${EXEC_BENCH_N:-40}             # latency samples per language
SECS=${EXEC_BENCH_SECONDS:-25}    # sustained phase per language
BARE=${EXEC_BENCH_BARE_RUNS:-24}  # bare docker runs (4 at a time)
LANGS=${EXEC_BENCH_LANGS:-python nodejs}
[ -x "$EXECUTOR" ] || { echo "run-executor: $EXECUTOR is not built (make bench-bins)"; exit 1; }
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
export SANDBOX_BASE_PYTHON_IMAGE=${SANDBOX_BASE_PYTHON_IMAGE:-sandgate/sandbox-python:${SANDGATE_TAG:-latest}}
export SANDBOX_BASE_NODEJS_IMAGE=${SANDBOX_BASE_NODEJS_IMAGE:-sandgate/sandbox-nodejs:${SANDGATE_TAG:-latest}}
declare -A image=([python]=$SANDBOX_BASE_PYTHON_IMAGE [nodejs]=$SANDBOX_BASE_NODEJS_IMAGE)
for lang in $LANGS; do
    docker image inspect "${image[$lang]}" >/dev/null 2>&1 ||
        { echo "run-executor: ${image[$lang]} missing (make images)"; exit 1; }
done
work=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT
json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }


echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bare docker run --rm --runtime=runsc, $BARE runs, 4 in parallel ..."
bare=$(bare_rate "$BARE" "${image[python]}" /bin/true)
echo "  bare rate (/bin/true): $bare containers/s"
# The same with the interpreter started once, plainly. For reference only: a
# pooled Python sandbox starts python3 once and forks its child; a pooled Node
# sandbox starts the small C runner and one node from a start-up snapshot,
# which is cheaper than a plain `node -e 0` (images/nodejs/README.md).
declare -A bare_interp
bare_interp[python]=$(bare_rate "$BARE" "${image[python]}" python3 -c pass)
bare_interp[nodejs]=$(bare_rate "$BARE" "${image[nodejs]}" node -e 0)
echo "  bare rate with the interpreter: python ${bare_interp[python]}/s, nodejs ${bare_interp[nodejs]}/s"
for lang in $LANGS; do
    p=$(free_port)
    url=http://127.0.0.1:$p
    "$EXECUTOR" --language "$lang" --listen "127.0.0.1:$p" --instance "bench-$lang-$$" \
        --pool-size 4 --flavour plain --create-parallel 4 --pool-wait-ms 30000 --log-level warn \
        2>"$work/$lang.log" & pid=$!
    for _ in $(seq 300); do
        curl -fsS "$url/healthz" 2>/dev/null | grep -q '"idle":4' && break
        sleep 0.1
    done
    curl -fsS "$url/healthz" | grep -q '"idle":4' ||
        { echo "run-executor: $lang pool never filled"; cat "$work/$lang.log"; exit 1; }
    lat=$(bench/exec_load.py latency "$url" "$lang" "$N")
    thr=$(bench/exec_load.py throughput "$url" "$lang" 4 "$SECS")
    kill "$pid"; wait "$pid" || true; pid=
    echo "$lang: latency c=1 (warm pool, $N jobs): p50 $(json_field p50_ms <<<"$lat") ms," \
         "p99 $(json_field p99_ms <<<"$lat") ms (executor run_ms p50 $(json_field run_ms_p50 <<<"$lat"))"
    echo "$lang: sustained c=4 for ${SECS}s: $(json_field jobs_per_s <<<"$thr") jobs/s," \
         "p50 $(json_field p50_ms <<<"$thr") ms, statuses $(json_field by_status <<<"$thr")"
    jps=$(json_field jobs_per_s <<<"$thr")
    echo "$lang: pool create rate $(json_field creates_per_s <<<"$thr")/s vs bare $bare/s" \
         "(${bare_interp[$lang]}/s with the interpreter): throughput =" \
         "$(python3 -c "print(round(100 * $jps / $bare))")% of the bare ceiling," \
         "$(python3 -c "print(round(100 * $jps / ${bare_interp[$lang]}))")% of the interpreter one"
    p50=$(json_field p50_ms <<<"$lat")
    if [ "$lang" = python ]; then target="p50 ≤ 15 ms: $(verdict "$p50" '<=' 15)"; else target=-; fi
    bench_summary "$lang hello-world via the executor's \`POST /v1/exec\`, c=1, warm pool (\`bench/run-executor.sh\`)" \
        "p50 $p50 ms, p99 $(json_field p99_ms <<<"$lat") ms" "$target"
    pct=$(python3 -c "print(round(100 * $jps / $bare))")
    bench_summary "$lang hello-world sustained at c=4 for ${SECS} s, every job a new sandbox" \
        "$jps jobs/s = $pct % of bare \`docker run --rm\` ($bare/s)" "≥ 80 %: $(verdict "$pct" '>=' 80)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
