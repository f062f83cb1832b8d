#!/usr/bin/env bash
# run-egress.sh - networked jobs (README, "Network") against the real dockerd +
# runsc: hello-world p50 of a networked job beside an offline one in the same
# run (target: within 5 ms), and the egress proxy's overhead per HTTPS request
# to a local test origin (bench/egress_load.py). Everything it talks to is a
# container it creates and removes. EGRESS_BENCH_N, EGRESS_BENCH_REQUESTS size it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build/rel}
[ -x "$BUILD/sandgate-executor" ] || { echo "run-egress: $BUILD/sandgate-executor is not built (make bench-bins)"; exit 1; }
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
SANDGATE_BUILD=$BUILD python3 bench/egress_load.py
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
