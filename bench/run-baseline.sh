#!/usr/bin/env bash
# run-baseline.sh - "today's" against the current code, side by side in one
# run: the product as it was before the move to runsc 0.0~20240729 (commit
# BASELINE_REV, 33b75e4^: its executor and its Python sandbox image, on
# bookworm's runsc 0.0~20221219 with ptrace, runtime "runsc-20221219"
# registered by bench/old-runsc.sh) and this checkout (the release executor,
# sandgate/sandbox-python:$SANDGATE_TAG, runtime "runsc"). The current
# runner cannot run on the old runsc (the identity split needs the new one),
# so each side is the code of its day. A third side, new-restore, is this
# checkout in its fastest configuration: the direct runsc backend restoring
# its pool sandboxes from checkpoints (--sandbox-backend runsc
# --sandbox-restore on). All behind this checkout's release gateway, with
# the same pools (plain:4, pandas=numpy,pandas:2, 400 MB).
# For each side:
#   the bare `docker run --rm` of /bin/true on its runtime (4 at a time):
#   containers/s and CPU-s each (the whole machine's);
#   the pool creation rate: hello-world jobs at concurrency 4 for S seconds,
#   every job using up a sandbox, so jobs/s is sandboxes/s; per core; and the
#   CPU-s per sandbox: the whole machine's busy CPU (other users' too: an
#   upper bound on a shared host), the executor's own with its reaped
#   children, dockerd + containerd's, and the sandboxes' own (sentry,
#   gofer, stub processes) from the direct backend's cgroup parent; on the
#   Docker path it cannot be told apart: the cgroups go with the containers;
#   hello-world and one-line pandas job p50/p99 via POST /v1/run, c=1, warm;
#   the 70 % hello / 30 % pandas mix at concurrency 4 for S seconds, as a
#   share of the side's bare rate.
# The issue's targets: sandboxes/s per core >= 1.5x today's (the pool
# creation rate, new / old) and the mix >= 80 % of the bare rate.
# The baseline is built once into build/baseline/ (`git archive` of the
# revision, its `make`; needs the full history: a shallow clone says so)
# and its image tagged sandgate/sandbox-python:baseline (an offline build
# from $SANDGATE_BASE_IMAGE, default sandgate/base:bookworm, as
# `make images` does). Needs root (old-runsc.sh, the direct backend).
# Prints the figures, one table, the per-core ratio of each new side to the
# old and the load average before, between and after; fails only when it
# cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
REV=${BASELINE_REV:-33b75e4^}
N=${BASELINE_BENCH_N:-20}            # latency samples per kind
SECS=${BASELINE_BENCH_SECONDS:-30}   # each sustained phase
BARE=${BASELINE_BENCH_BARE_RUNS:-24} # bare docker runs (4 at a time)
IMAGE=sandgate/sandbox-python:${SANDGATE_TAG:-latest}
OLD_IMAGE=sandgate/sandbox-python:baseline
BASE_IMAGE=${SANDGATE_BASE_IMAGE:-sandgate/base:bookworm}
DIR=$PWD/build/baseline
PLAIN=4 PANDAS=2 BUDGET=400
[ "$(id -u)" = 0 ] || { echo "run-baseline: needs root (bench/old-runsc.sh registers the old runsc)"; exit 1; }
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" != false ] ||
    ! rev=$(git rev-parse -q --verify "$REV^{commit}"); then
    echo "run-baseline: $REV is not in this clone's history (a shallow clone? git fetch --unshallow)"
    exit 1
fi
bench_preflight run-baseline "${SANDGATE_TAG:-latest}"
old_rt=$(bench/old-runsc.sh)

# The baseline's executor and image, rebuilt only when the revision changes
# (make and the Docker layer cache make a second run fast).
if [ "$(cat "$DIR/rev" 2>/dev/null)" != "$rev" ]; then
    rm -rf "$DIR"
    mkdir -p "$DIR/src"
    git archive "$rev" | tar -x -C "$DIR/src"
fi
echo "baseline $REV = $(git log -1 --format='%h %cs' "$rev"): building its executor and image"
make -C "$DIR/src" -j2 build/rel/sandgate-executor >"$DIR/make.log" 2>&1 ||
    { echo "run-baseline: the baseline's make failed:"; tail -20 "$DIR/make.log"; exit 1; }
docker build --build-arg BASE_IMAGE="$BASE_IMAGE" -f "$DIR/src/images/python/Dockerfile" \
    -t "$OLD_IMAGE" "$DIR/src" >"$DIR/image.log" 2>&1 ||
    { echo "run-baseline: the baseline's image failed:"; tail -20 "$DIR/image.log"; exit 1; }
echo "$rev" >"$DIR/rev"
bench_workdir

# measure NAME EXECUTOR IMAGE RUNTIME [ARGS...]: every figure for one side;
# appends a row to $work/table.
measure() {
    local name=$1 bin=$2 image=$3 rt=$4 inst c0 c1 e0 e1 d0 d1 bare bare_cpu hello pandas create
    local mix n rate mjps g0 g1 own
    shift 4
    inst=bench-baseline-$name-$$
    echo "== $name: $bin, $image, runtime $rt $(docker info --format "{{json (index .Runtimes \"$rt\")}}")"
    c0=$(cpu_busy_s)
    bare=$(BARE_RUNTIME=$rt bare_rate "$BARE" "$image" /bin/true)
    c1=$(cpu_busy_s)
    bare_cpu=$(per_unit "$c0" "$c1" "$BARE")
    echo "bare docker run --rm, $BARE runs, 4 at a time: $bare containers/s, $bare_cpu CPU-s each"
    pools_start "$bin" "$image" "$rt" "$inst" "$@"
    hello=$(bench/pools_load.py latency "$gw" "$ex" hello "$N")
    pandas=$(bench/pools_load.py latency "$gw" "$ex" pandas "$N")
    c0=$(cpu_busy_s) e0=$(proc_cpu "$expid") d0=$(daemons_cpu) g0=$(cgroup_cpu "$inst")
    create=$(bench/pools_load.py mix "$gw" "$ex" 4 "$SECS" 0)
    c1=$(cpu_busy_s) e1=$(proc_cpu "$expid") d1=$(daemons_cpu) g1=$(cgroup_cpu "$inst")
    rate=$(jq_ jobs_per_s <<<"$create")
    n=$(python3 -c "print($rate * $SECS)")
    own=-
    [ "$g0" = - ] || own=$(per_unit "$g0" "$g1" "$n")
    mix=$(bench/pools_load.py mix "$gw" "$ex" 4 "$SECS" 30)
    mjps=$(jq_ jobs_per_s <<<"$mix")
    pools_stop "$inst"
    echo "hello p50 $(jq_ hello.p50_ms <<<"$hello") ms, p99 $(jq_ hello.p99_ms <<<"$hello") ms;" \
        "pandas p50 $(jq_ pandas.p50_ms <<<"$pandas") ms, p99 $(jq_ pandas.p99_ms <<<"$pandas") ms"
    echo "creation: $rate sandboxes/s (statuses $(jq_ by_status <<<"$create")); CPU-s per sandbox:" \
        "machine $(per_unit "$c0" "$c1" "$n"), executor+children $(per_unit "$e0" "$e1" "$n")," \
        "dockerd+containerd $(per_unit "$d0" "$d1" "$n"), the sandboxes' cgroups $own"
    echo "mix 70/30: $mjps jobs/s (statuses $(jq_ by_status <<<"$mix"))"
    printf '%s %s %s %s %s %s %s %s %s %s %s %s %s %s %s\n' "$name" "$bare" "$bare_cpu" "$rate" \
        "$(python3 -c "print(round($rate / $(nproc), 2))")" "$(per_unit "$c0" "$c1" "$n")" \
        "$(per_unit "$e0" "$e1" "$n")" "$(per_unit "$d0" "$d1" "$n")" \
        "$(jq_ hello.p50_ms <<<"$hello")" "$(jq_ hello.p99_ms <<<"$hello")" \
        "$(jq_ pandas.p50_ms <<<"$pandas")" "$(jq_ pandas.p99_ms <<<"$pandas")" "$mjps" \
        "$(python3 -c "print(round(100 * $mjps / $bare) if $bare else 0)")" "$own" >>"$work/table"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
measure old "$DIR/src/build/rel/sandgate-executor" "$OLD_IMAGE" "$old_rt"
echo "load average between: $(cut -d' ' -f1-3 /proc/loadavg)"
measure new "$BUILD/sandgate-executor" "$IMAGE" runsc
echo "load average between: $(cut -d' ' -f1-3 /proc/loadavg)"
# The fastest configuration this code offers: the direct runsc backend with
# every pool sandbox after the first of a generation restored from a
# checkpoint (docs/executor.md), on the same runsc, the same pools (the
# direct backend has no pool memory budget: its sandboxes' memory is their
# cgroups' limit).
BUDGET='' measure new-restore "$BUILD/sandgate-executor" "$IMAGE" runsc \
    --sandbox-backend runsc --sandbox-restore on --max-sessions 0 \
    --runsc-state-dir "$work/state-new-restore"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/table" "$work/summary.tsv" <<'PY'
import sys
sys.path.insert(0, "bench")
from bench_table import print_table
rows = [l.split() for l in open(sys.argv[1])]
cols = ["bare runs/s", "CPU-s/bare", "pool sandboxes/s (c=4)", "per core",
        "CPU-s/sandbox machine", "CPU-s/sandbox executor+children",
        "CPU-s/sandbox dockerd+containerd", "hello p50 ms", "hello p99 ms", "pandas p50 ms",
        "pandas p99 ms", "mix jobs/s (c=4)", "mix % of bare", "CPU-s/sandbox own cgroups"]
print_table("side", cols, rows)
old, new = rows[0], rows[1:]
out = open(sys.argv[2], "w")
for n in new:
    x = float(n[4]) / float(old[4]) if float(old[4]) else 0
    print("pool creation, hello-world jobs at c=4 for the sustained phase, every job a new sandbox"
          " (`bench/run-baseline.sh`, one run: old = 33b75e4^ on runsc 20221219/ptrace, %s = this code"
          " on the current runsc%s)\told %s sandboxes/s (%s per core), %s %s (%s per core) = %.2f×;"
          " CPU-s per sandbox, whole machine old %s / %s %s, of it dockerd + containerd %s / %s%s"
          "\tper core ≥ 1.5× today's: %s"
          % (n[0], ", the direct backend restoring its sandboxes" if n[0] == "new-restore" else
             ", the Docker backend (the default)", old[3], old[4], n[0], n[3], n[4], x, old[5],
             n[0], n[5], old[7], n[7],
             "" if n[14] == "-" else ", the sandboxes' own cgroups %s" % n[14],
             "met (%.2f×)" % x if x >= 1.5 else "**not met** (%.2f×)" % x),
          file=out)
    print("hello-world / one-line pandas job via `POST /v1/run`, c=1, warm pools, old → %s"
          "\thello p50 %s → %s ms (p99 %s → %s); pandas p50 %s → %s ms (p99 %s → %s)\t-"
          % (n[0], old[8], n[8], old[9], n[9], old[10], n[10], old[11], n[11]), file=out)
for r in rows:
    print("70 %% hello / 30 %% pandas at c=4, %s, against its own bare `docker run --rm`"
          "\t%s jobs/s = %s %% of bare (%s/s)\t≥ 80 %% of bare: %s"
          % (r[0], r[12], r[13], r[1], "met" if int(r[13]) >= 80 else "**not met**"), file=out)
out.close()
print(open(sys.argv[2]).read().replace("\t", " | "), end="")
PY
bench_summary_tsv <"$work/summary.tsv"
