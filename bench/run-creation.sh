#!/usr/bin/env bash
# run-creation.sh - one sandbox's creation taken apart (bench/creation_cost.py:
# Engine API create, attach, start with runsc's boot, the runner's ready line,
# the first job, the removal; wall and CPU of each), and a hello-world by
# `docker run --rm` against `runsc run` on an OCI bundle of the same image
# without Docker, for the current runsc and, as root, bookworm's old one
# (bench/old-runsc.sh), in one run. CREATION_BENCH_N samples each (10).
# docs/executor.md ("What a sandbox costs") reads these figures.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
N=${CREATION_BENCH_N:-10}
IMAGE=sandgate/sandbox-python:${SANDGATE_TAG:-latest}
[ "$(id -u)" = 0 ] || { echo "run-creation: needs root (runsc run, cgroups)"; exit 1; }
docker image inspect "$IMAGE" >/dev/null 2>&1 || { echo "run-creation: $IMAGE missing (make images)"; exit 1; }
RUNTIMES=runsc
old=$(bench/old-runsc.sh) && RUNTIMES="$old runsc"
print_load
for rt in $RUNTIMES; do
    bench/creation_cost.py "$IMAGE" "$rt" "$N"
done | python3 -c '
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
print_load
