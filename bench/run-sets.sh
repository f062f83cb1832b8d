#!/usr/bin/env bash
# run-sets.sh - a declared package set through the whole path: a set with a
# Debian package (python3-tabulate, pre-imported by its warm sandboxes) is
# built with images/build-sets.py on top of the Python sandbox image (a cache
# hit after the first run), and the release sandgate runs in front of a
# Python sandgate-executor with a plain pool and that set's pool, on the real
# dockerd + runsc. Measured in the same run, at concurrency 1 via POST
# /v1/run (each job sent when every pool is full and quiet): hello-world p50/p99
# and a job importing the set's package p50/p99, the ratio of the two p50s,
# and the planned warm-pool memory against --pool-memory-mb.
# Targets: set job p50 <= 2x hello p50 (as for pandas); planned memory within
# the budget. Prints the figures and the load average before and after; fails
# only when it cannot measure. SANDGATE_TAG picks the image tag (latest).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
N=${SETS_BENCH_N:-30}               # latency samples per kind
BUDGET=${SETS_BENCH_MEMORY_MB:-300} # warm pools' memory budget
TAG=${SANDGATE_TAG:-latest}
IMAGE=sandgate/sandbox-python:$TAG
SET_IMAGE=sandgate/set-python-benchset:$TAG
bench_preflight run-sets "$TAG"
bench_workdir

mkdir -p "$work/sets" "$work/policies"
cat >"$work/sets/python-benchset.json" <<JSON
{"name": "benchset", "language": "python", "debian": ["python3-tabulate"],
 "preimport": ["tabulate"], "pool": {"size": 2, "memory_mb": 60}}
JSON
t0=$(date +%s.%N)
python3 images/build-sets.py --dir "$work/sets" --tag "$TAG" --work "$work/build" |
    sed 's/^/  /'
echo "set image built in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
cp policies/*.json "$work/policies/"
cat >"$work/policies/bench-sets.json" <<JSON
{"name": "bench-sets", "extends": "default", "python": {"imports": {"modules": ["tabulate"]}}}
JSON

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
ep=$(free_port)
ex=http://127.0.0.1:$ep
"$BUILD/sandgate-executor" --language python --image "$IMAGE" --listen "127.0.0.1:$ep" \
    --instance "bench-sets-$$" --flavour "plain:2" --set "$SET_IMAGE" \
    --pool-memory-mb "$BUDGET" --pool-wait-ms 30000 --log-level warn \
    2>"$work/executor.log" & pids+=($!)
gateway_for "$ex" "$work/policies"

hello=$(bench/pools_load.py latency "$gw" "$ex" hello "$N")
set_job=$(bench/pools_load.py latency "$gw" "$ex" tabulate "$N")
health=$(curl -fsS "$ex/healthz")
h50=$(jq_ hello.p50_ms <<<"$hello")
s50=$(jq_ tabulate.p50_ms <<<"$set_job")
echo "hello-world via /v1/run, c=1, warm ($N jobs): p50 $h50 ms, p99 $(jq_ hello.p99_ms <<<"$hello") ms," \
     "flavours $(jq_ by_flavour <<<"$hello")"
echo "set job (imports tabulate, set benchset) via /v1/run, c=1, warm ($N jobs): p50 $s50 ms," \
     "p99 $(jq_ tabulate.p99_ms <<<"$set_job") ms, flavours $(jq_ by_flavour <<<"$set_job")" \
     "= $(python3 -c "print(round($s50 / $h50, 2))")x hello p50 (target <= 2x)"
echo "warm-pool memory: planned $(python3 -c 'import json,sys; print(json.load(sys.stdin)["pool"]["memory_planned_mb"])' <<<"$health")" \
     "MB of a $BUDGET MB budget; per sandbox $(python3 -c 'import json,sys
for f in json.load(sys.stdin)["flavours"]:
    est = "" if f["memory_measured"] else " (estimated)"
    print("%s %s MB%s x %s;" % (f["name"], f["memory_mb"], est, f["target"]), end=" ")
' <<<"$health")"
bench_summary "a declared package set's job (imports tabulate) via \`POST /v1/run\`, c=1, warm ($N jobs; \`bench/run-sets.sh\`)" \
    "p50 $s50 ms = $(ratio "$s50" "$h50")× hello-world p50 ($h50 ms)" \
    "≤ 2× hello p50: $(verdict "$(python3 -c "print($s50 / $h50)")" '<=' 2)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# the daemons first: the image is in use while the executor's sandboxes are
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
pids=()
docker rmi --no-prune "$SET_IMAGE" >/dev/null 2>&1 || echo "run-sets: $SET_IMAGE is still in use"
