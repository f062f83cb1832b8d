#!/usr/bin/env bash
# run-isolation.sh - what the job's own identity and view cost (README,
# "Security model"): hello-world and a pandas job p50 through POST /v1/exec
# with the default policy's run-time section, on the Python image as built
# (org.sandgate.identity=split: the runner drops the job to its own uid, PID
# and mount namespace and view before the job arrives) against the same
# image relabelled to run as before (uid 65534 for runner and job, no
# namespaces), two executors alternating in the same run (dockerd + runsc,
# this checkout's images: $SANDGATE_TAG, default latest). Target: <= 2 ms
# added at p50. Prints the figures; fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
EXECUTOR=$BUILD/sandgate-executor
N=${ISO_BENCH_N:-20}   # hello-world jobs per side; pandas: N / 3
TAG=${SANDGATE_TAG:-latest}
IMAGE=sandgate/sandbox-python:$TAG
SAME=sandgate/sandbox-python:$TAG-bench-same-identity
# ISO_BENCH_PREVIOUS=IMAGE compares with that image as it is instead (e.g.
# the previous release's runner).
PREVIOUS=${ISO_BENCH_PREVIOUS:-}
[ -x "$EXECUTOR" ] || { echo "run-isolation: $EXECUTOR is not built (make bench-bins)"; exit 1; }
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "run-isolation: $IMAGE missing (make images)"; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    [ -n "$PREVIOUS" ] || docker rmi "$SAME" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
# The previous identity: runner and job as 65534, the runner's files readable.
if [ -n "$PREVIOUS" ]; then
    SAME=$PREVIOUS
else
    printf 'FROM %s\nRUN chmod -R a+rX /opt/sandgate\nLABEL org.sandgate.identity=same\nUSER 65534:65534\n' \
        "$IMAGE" | docker build -q -t "$SAME" - >/dev/null
fi
python3 - "$work/rt.json" <<'PY'
import json, sys
doc = json.load(open("policies/default.json"))["python"]
rt = dict(doc["runtime"])
rt["imports"] = {"mode": doc["imports"]["mode"], "modules": doc["imports"]["modules"]}
json.dump(rt, open(sys.argv[1], "w"))
PY
start() { # IMAGE NAME -> sets $url
    local p
    p=$(free_port)
    url=http://127.0.0.1:$p
    "$EXECUTOR" --language python --listen "127.0.0.1:$p" --instance "bench-iso-$2-$$" \
        --image "$1" --flavour plain:2 --flavour pandas=numpy,pandas:1 --create-parallel 2 \
        --pool-wait-ms 30000 --max-timeout-ms 60000 --log-level warn >"$work/$2.log" 2>&1 &
    pids+=($!)
}
start "$IMAGE" split
new=$url
start "$SAME" same
old=$url
for url in "$new" "$old"; do
    for _ in $(seq 600); do
        curl -fsS "$url/healthz" 2>/dev/null | grep -q '"idle":3' && break
        sleep 0.1
    done
    curl -fsS "$url/healthz" | grep -q '"idle":3' ||
        { echo "run-isolation: a pool never filled"; cat "$work"/*.log; exit 1; }
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# Settled: before each job no sandbox is being made or torn down on either
# side: the job's own path, what the 2 ms target is about. Then with only the
# pools full (the last job's teardown may still run): what a job pays when
# jobs follow each other closely on a small machine.
show_ab "the job's own identity and view vs the previous identity, python hello-world via \`POST /v1/exec\`, settled ($N + $N jobs; \`bench/run-isolation.sh\`)" \
    "$(bench/exec_load.py latency-ab2 "$new" "$old" python "$N" "$work/rt.json" hello --settled)" b "previous identity" a "own identity and view" 2
show_ab "python hello-world, last teardown running ($N + $N jobs)" \
    "$(bench/exec_load.py latency-ab2 "$new" "$old" python "$N" "$work/rt.json")" b "previous identity" a "own identity and view"
show_ab "python pandas job, settled ($((N / 3)) + $((N / 3)) jobs)" \
    "$(bench/exec_load.py latency-ab2 "$new" "$old" python "$((N / 3))" "$work/rt.json" pandas --settled)" b "previous identity" a "own identity and view"
