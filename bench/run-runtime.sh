#!/usr/bin/env bash
# run-runtime.sh - what the run-time policy costs: hello-world (and, for
# Python, a pandas job) p50 through POST /v1/exec with the default policy's
# run-time section on vs off, interleaved in the same run on the same warm
# pool (dockerd + runsc, this checkout's images: $SANDGATE_TAG, default
# latest). Target: <= 1 ms added to hello-world p50. Prints the figures;
# fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
EXECUTOR=$BUILD/sandgate-executor
N=${RT_BENCH_N:-30}   # jobs per side
TAG=${SANDGATE_TAG:-latest}
LANGS=${RT_BENCH_LANGS:-python nodejs}
[ -x "$EXECUTOR" ] || { echo "run-runtime: $EXECUTOR is not built (make bench-bins)"; exit 1; }
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
work=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
    rm -rf "$work"
}
trap cleanup EXIT
# The run-time section as the gateway sends it (sg_policy_runtime_json).
runtime_json() { # LANG FILE
    python3 - "$1" "$2" <<'PY'
import json, sys
lang, out = sys.argv[1], sys.argv[2]
doc = json.load(open("policies/default.json"))[("python" if lang == "python" else "javascript")]
rt = dict(doc["runtime"])
rt["imports"] = None if rt.get("imports") == "off" else {
    "mode": doc["imports"]["mode"], "modules": doc["imports"]["modules"]}
json.dump(rt, open(out, "w"))
PY
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for lang in $LANGS; do
    docker image inspect "sandgate/sandbox-$lang:$TAG" >/dev/null 2>&1 ||
        { echo "run-runtime: sandgate/sandbox-$lang:$TAG missing (make images)"; exit 1; }
    runtime_json "$lang" "$work/$lang.json"
    p=$(free_port)
    url=http://127.0.0.1:$p
    "$EXECUTOR" --language "$lang" --listen "127.0.0.1:$p" --instance "bench-rt-$lang-$$" \
        --image "sandgate/sandbox-$lang:$TAG" --pool-size 4 --create-parallel 4 \
        --pool-wait-ms 30000 --max-timeout-ms 60000 --log-level warn 2>"$work/$lang.log" & pid=$!
    for _ in $(seq 300); do
        curl -fsS "$url/healthz" 2>/dev/null | grep -q '"idle":4' && break
        sleep 0.1
    done
    curl -fsS "$url/healthz" | grep -q '"idle":4' ||
        { echo "run-runtime: $lang pool never filled"; cat "$work/$lang.log"; exit 1; }
    show_ab "run-time policy off vs on, $lang hello-world via \`POST /v1/exec\` ($N + $N jobs; \`bench/run-runtime.sh\`)" \
        "$(bench/exec_load.py latency-ab "$url" "$lang" "$N" "$work/$lang.json")" off off on on 1
    if [ "$lang" = python ]; then
        show_ab "python pandas job ($((N / 3)) + $((N / 3)) jobs)" \
            "$(bench/exec_load.py latency-ab "$url" "$lang" "$((N / 3))" "$work/$lang.json" pandas)" off off on on
    fi
    kill "$pid"; wait "$pid" || true; pid=
done
# Inside a sandbox, without the pool and HTTP around it: what installing the
# Python guard (seccomp + hook) and running hello-world under it cost, the
# part of the figures above that a loaded machine's noise hides. One fresh
# sandbox per sample.
if [[ " $LANGS " == *" python "* ]]; then
    runtime_json python "$work/python.json"
    measure='
import importlib.util, json, os, sys, time
spec = importlib.util.spec_from_file_location("g", "/opt/sandgate/runtime_guard.py")
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
priv, sec = g.load_private_copy(), g.load_seccomp("/opt/sandgate/libsandgate_rt.so")
r, w = os.pipe()
with open("/workspace/main.py", "w") as f:
    f.write("def main():\n    return {\"hello\": \"world\"}\n")
t0 = time.perf_counter()
g.install(json.loads(sys.argv[1]), w, "/workspace", sec, priv)
t1 = time.perf_counter()
# the job as the runner loads it: its own file, compiled by importlib
job = importlib.util.spec_from_file_location("main", "/workspace/main.py")
m = importlib.util.module_from_spec(job); job.loader.exec_module(m)
m.main()
print((t1 - t0) * 1000, (time.perf_counter() - t1) * 1000)'
    for _ in 1 2 3 4 5 6 7; do
        docker run --rm --runtime=runsc --network none --entrypoint python3 \
            "sandgate/sandbox-python:$TAG" -c "$measure" "$(cat "$work/python.json")"
    done | python3 -c '
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
inst, job = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print(f"python in-sandbox ({len(rows)} sandboxes): installing the run-time policy {inst:.2f} ms, "
      f"hello-world under the hook {job:.2f} ms (median): {inst + job:.2f} ms added")'
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
