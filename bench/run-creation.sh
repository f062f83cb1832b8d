#!/usr/bin/env bash
# run-creation.sh - one sandbox's creation taken apart (bench/creation_cost.py:
# Engine API create, attach, start with runsc's boot, the runner's ready line,
# the first job, the removal; wall and CPU of each), and a hello-world by
# `docker run --rm` against `runsc run` on an OCI bundle of the same image
# without Docker, for the current runsc (CREATION_BENCH_RUNTIMES picks others,
# in one run; the current image's runner needs runsc 20240729, so bookworm's
# old one is compared by bench/run-baseline.sh, with the code of its day).
# CREATION_BENCH_N samples each (10).
# docs/executor.md ("What a sandbox costs") reads these figures.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${CREATION_BENCH_N:-10}
IMAGE=sandgate/sandbox-python:${SANDGATE_TAG:-latest}
[ "$(id -u)" = 0 ] || { echo "run-creation: needs root (runsc run, cgroups)"; exit 1; }
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "run-creation: $IMAGE missing (make images)"; exit 1; }
RUNTIMES=${CREATION_BENCH_RUNTIMES:-runsc}
print_load
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for rt in $RUNTIMES; do
    bench/creation_cost.py "$IMAGE" "$rt" "$N"
done | tee "$rows" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
parts = ["create", "attach", "start", "ready", "job", "remove", "total"]
print("| runtime (platform) | " + " | ".join(parts) + " | docker run hello | runsc run hello |")
print("|---" * (len(parts) + 3) + "|")
for r in rows:
    plat = [a.split("=")[1] for a in r["args"] if a.startswith("--platform=")] or ["default"]
    cells = ["%s / %s" % (r["wall_ms"][p], r["cpu_ms"][p]) for p in parts]
    print("| %s (%s) | %s | %s | %s / %s |" % (r["runtime"], plat[0], " | ".join(cells),
          r["docker_run_hello"]["wall_ms"], r["runsc_run_hello"]["wall_ms"],
          r["runsc_run_hello"]["cpu_ms"]))
print("(wall ms / CPU ms, medians of %d; load %.1f before the first, %.1f after the last)"
      % (rows[0]["n"], rows[0]["load_before"], rows[-1]["load_after"]))
'
# the summary rows: one per runtime, its total and where the CPU goes
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        plat = [a.split("=")[1] for a in r["args"] if a.startswith("--platform=")] or ["default"]
        w, c = r["wall_ms"], r["cpu_ms"]
        print("one sandbox created, used once, removed: %s (%s; `bench/run-creation.sh`)\t"
              "%s ms wall, %s ms CPU (CPU: start %s, runner ready %s, first job %s, remove %s);"
              " hello-world `docker run --rm` %s ms vs `runsc run` on a bundle %s ms (wall)\t-"
              % (r["runtime"], plat[0], w["total"], c["total"], c["start"], c["ready"], c["job"],
                 c["remove"], r["docker_run_hello"]["wall_ms"], r["runsc_run_hello"]["wall_ms"]))
' "$rows" | bench_summary_tsv
print_load
