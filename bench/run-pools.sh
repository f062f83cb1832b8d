#!/usr/bin/env bash
# run-pools.sh - pool flavours through the whole path: the release sandgate in
# front of a Python sandgate-executor with a plain and a pandas flavour, on
# the real dockerd + runsc, once per gVisor runtime, side by side in one run:
# the current runsc (runtime "runsc", the platform host-setup.sh chose) by
# default; POOLS_BENCH_RUNTIMES picks others, e.g. "runsc-20221219 runsc"
# (bookworm's old 0.0~20221219 on ptrace, registered by bench/old-runsc.sh:
# the current image's runner fails on it, every job a program_runner_error,
# so bench/run-baseline.sh measures it with the code of its day). For each:
#   the bare `docker run --rm` rate (4 at a time) and CPU-s per container;
#   hello-world and pandas-job latency p50/p99 via POST /v1/run at
#   concurrency 1 (each job sent when every pool is full and quiet);
#   sustained jobs/s at concurrency 4 for a 70 % hello / 30 % pandas mix, the
#   pool's creation rate meanwhile and the CPU-s per job of the mix.
# Targets: pandas p50 <= 2x hello p50; hello p50 <= 15 ms; the mix >= 80 % of
# the bare rate. Prints the figures, one table (new/old ratios) and the load
# average before and after; fails only when it cannot measure.
# SANDGATE_TAG picks the sandbox image tag (latest).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
EXECUTOR=$BUILD/sandgate-executor
SANDGATE=$BUILD/sandgate
N=${POOLS_BENCH_N:-30}            # latency samples per kind
SECS=${POOLS_BENCH_SECONDS:-30}   # sustained mix
BARE=${POOLS_BENCH_BARE_RUNS:-24} # bare docker runs (4 at a time)
PLAIN=${POOLS_BENCH_PLAIN:-4}     # warm plain sandboxes
PANDAS=${POOLS_BENCH_PANDAS:-2}   # warm pandas sandboxes
BUDGET=${POOLS_BENCH_MEMORY_MB:-400}
IMAGE=sandgate/sandbox-python:${SANDGATE_TAG:-latest}
RUNTIMES=${POOLS_BENCH_RUNTIMES:-runsc}
for b in "$EXECUTOR" "$SANDGATE"; do
    [ -x "$b" ] || { echo "run-pools: $b is not built (make bench-bins)"; exit 1; }
done
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "run-pools: $IMAGE missing (make images)"; exit 1; }
bench_workdir

# measure RUNTIME: every figure for one runtime; appends a row to $work/table.
measure() {
local rt=$1
echo "== runtime $rt: $(docker info --format "{{json (index .Runtimes \"$rt\")}}")"
echo "bare docker run --rm --runtime=$rt, $BARE runs, 4 in parallel ..."
c0=$(cpu_busy_s)
bare=$(BARE_RUNTIME=$rt bare_rate "$BARE" "$IMAGE" /bin/true)
c1=$(cpu_busy_s)
bare_cpu=$(per_unit "$c0" "$c1" "$BARE")
echo "  bare rate: $bare containers/s, $bare_cpu CPU-s per container ($(nproc) CPUs)"

pools_start "$EXECUTOR" "$IMAGE" "$rt" "bench-pools-$rt-$$" --runsc-accept-old true

hello=$(bench/pools_load.py latency "$gw" "$ex" hello "$N")
pandas=$(bench/pools_load.py latency "$gw" "$ex" pandas "$N")
c0=$(cpu_busy_s)
mix=$(bench/pools_load.py mix "$gw" "$ex" 4 "$SECS" 30)
c1=$(cpu_busy_s)
health=$(curl -fsS "$ex/healthz")
h50=$(jq_ hello.p50_ms <<<"$hello")
p50=$(jq_ pandas.p50_ms <<<"$pandas")
jps=$(jq_ jobs_per_s <<<"$mix")
echo "hello-world via /v1/run, c=1, warm ($N jobs): p50 $h50 ms, p99 $(jq_ hello.p99_ms <<<"$hello") ms," \
     "flavours $(jq_ by_flavour <<<"$hello")"
echo "pandas job via /v1/run, c=1, warm ($N jobs): p50 $p50 ms, p99 $(jq_ pandas.p99_ms <<<"$pandas") ms," \
     "flavours $(jq_ by_flavour <<<"$pandas") = $(python3 -c "print(round($p50 / $h50, 2))")x hello p50"
echo "mix 70/30 hello/pandas, c=4 for ${SECS}s: $jps jobs/s = $(python3 -c "print(round(100 * $jps / $bare))")%" \
     "of the bare rate ($bare/s); hello p50 $(jq_ hello.p50_ms <<<"$mix") ms, pandas p50" \
     "$(jq_ pandas.p50_ms <<<"$mix") ms; flavours $(jq_ by_flavour <<<"$mix");" \
     "statuses $(jq_ by_status <<<"$mix"); creates $(jq_ creates_per_s <<<"$mix")/s"
mix_cpu=$(per_unit "$c0" "$c1" "$(python3 -c "print($jps * $SECS)")")
echo "CPU per unit of work: a bare container $bare_cpu CPU-s, a job of the mix $mix_cpu CPU-s" \
     "(sandbox launch and teardown, the runner, the job, pandas imports, the daemons):" \
     "$(nproc) CPUs allow at most $(awk -v n="$(nproc)" -v c="$mix_cpu" 'BEGIN { printf "%.2f", (c > 0 ? n / c : 0) }')" \
     "mix jobs/s = $(awk -v a="$bare_cpu" -v b="$mix_cpu" 'BEGIN { printf "%.0f", (b > 0 ? 100 * a / b : 0) }')% of the bare rate"
echo "warm-pool memory: planned max $(jq_ planned_mb_max <<<"$mix") MB of a $BUDGET MB budget;" \
     "per sandbox $(python3 -c 'import json,sys
for f in json.load(sys.stdin)["flavours"]:
    est = "" if f["memory_measured"] else " (estimated)"
    print("%s %s MB%s, refill %.0f ms;" % (f["name"], f["memory_mb"], est, f["create_ms"]), end=" ")
' <<<"$health")"
pools_stop "bench-pools-$rt-$$"
bench_summary "hello-world via \`POST /v1/run\`, c=1, warm pools (\`bench/run-pools.sh\`, $rt)" \
    "p50 $h50 ms, p99 $(jq_ hello.p99_ms <<<"$hello") ms" "p50 ≤ 15 ms: $(verdict "$h50" '<=' 15)"
bench_summary "one-line pandas job, same (pandas flavour)" \
    "p50 $p50 ms, p99 $(jq_ pandas.p99_ms <<<"$pandas") ms = $(ratio "$p50" "$h50")× hello" \
    "≤ 2× hello p50: $(verdict "$(python3 -c "print($p50 / $h50)")" '<=' 2)"
local pct
pct=$(python3 -c "print(round(100 * $jps / $bare))")
bench_summary "70 % hello / 30 % pandas at c=4 for ${SECS} s, against bare \`docker run --rm\` of \`/bin/true\` (4 at a time)" \
    "$jps jobs/s = $pct % of bare ($bare/s, $bare_cpu CPU-s each); $mix_cpu CPU-s per mix job; statuses $(jq_ by_status <<<"$mix")" \
    "≥ 80 % of bare: $(verdict "$pct" '>=' 80)"
bench_summary "warm-pool memory, same" "planned at most $(jq_ planned_mb_max <<<"$mix") MB of $BUDGET MB" \
    "within budget: $(verdict "$(jq_ planned_mb_max <<<"$mix")" '<=' "$BUDGET")"
printf '%s %s %s %s %s %s %s %s %s %s %s\n' "$rt" "$bare" "$bare_cpu" "$h50" \
    "$(jq_ hello.p99_ms <<<"$hello")" "$p50" "$(jq_ pandas.p99_ms <<<"$pandas")" "$jps" \
    "$(jq_ creates_per_s <<<"$mix")" "$mix_cpu" "$(jq_ hello.p50_ms <<<"$mix")" >>"$work/table"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for rt in $RUNTIMES; do measure "$rt"; done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/table" <<'PY'
import sys
sys.path.insert(0, "bench")
from bench_table import print_table
rows = [l.split() for l in open(sys.argv[1])]
cols = ["bare runs/s", "CPU-s/bare", "hello p50 ms", "hello p99 ms", "pandas p50 ms",
        "pandas p99 ms", "mix jobs/s (c=4)", "pool creates/s", "CPU-s/mix job", "mix hello p50 ms"]
print_table("runtime", cols, rows)
PY
