#!/usr/bin/env bash
# run-egress.sh - networked jobs (README, "Network") against the real dockerd +
# runsc: hello-world p50 of a networked job beside an offline one in the same
# run (target: within 5 ms), and the egress proxy's overhead per HTTPS request
# to a local test origin (bench/egress_load.py). Everything it talks to is a
# container it creates and removes. EGRESS_BENCH_N, EGRESS_BENCH_REQUESTS size it.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
[ -x "$BUILD/sandgate-executor" ] || { echo "run-egress: $BUILD/sandgate-executor is not built (make bench-bins)"; exit 1; }
images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
SANDGATE_BUILD=$BUILD python3 bench/egress_load.py | tee "$out"
off=$(sed -n 's/.*: offline \([0-9.]*\) ms, networked.*/\1/p' "$out")
net=$(sed -n 's/.*, networked \([0-9.]*\) ms.*/\1/p' "$out")
bench_summary "networked vs offline hello-world via \`POST /v1/exec\` (\`bench/run-egress.sh\`)" \
    "p50 $net vs $off ms ($(awk -v a="$net" -v b="$off" 'BEGIN { printf "%+.1f", a - b }') ms)" \
    "within 5 ms: $(verdict "$(awk -v a="$net" -v b="$off" 'BEGIN { print a - b }')" '<=' 5)"
bench_summary "egress proxy overhead per HTTPS request to a local origin" \
    "$(sed -n 's/.*overhead \([0-9.]*\) ms.*/\1/p' "$out") ms at p50 (new connection, TLS, one GET)" "-"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
