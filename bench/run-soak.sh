#!/usr/bin/env bash
# run-soak.sh - the daemons' memory under a long valid load: a compose stack
# of its own (project sgsoak<pid>, its own published loopback port, egress
# subnet and state directory; images under SANDGATE_TAG) driven by
# bench/soak_load.py at each concurrency of SOAK_BENCH_CONCURRENCY (8 16 32)
# for SOAK_BENCH_SECONDS each (30 in `make bench`, to keep the whole bench
# reasonable; the issue's soak is 120): jobs carrying input files at the caps
# (4 MiB), sessions with an upload at the cap, streamed jobs with about 1 MiB
# of output. Reports, per level, the answers (a result, a documented busy
# answer, anything else) and the peak RSS of the gateway and the Python
# executor against their container limits; then, SOAK_BENCH_REST_S (60)
# after the load, their RSS against the idle value measured before it.
# Fails when a daemon restarted or was OOM-killed (RestartCount, OOMKilled)
# or when an answer was neither a result nor a documented busy answer (or
# when it cannot measure). The RSS at rest is judged against idle (back
# within SOAK_BENCH_RSS_PCT, 20 %, or within SOAK_BENCH_RSS_SLACK_MB, 4 MB)
# and the verdict printed, without failing: like the other benchmarks' figures
# it depends on the machine. Loopback and the stack's own networks only;
# everything it created is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
TAG=${SANDGATE_TAG:-latest}
SECS=${SOAK_BENCH_SECONDS:-30}
LEVELS=${SOAK_BENCH_CONCURRENCY:-8 16 32}
REST=${SOAK_BENCH_REST_S:-60}
RSS_PCT=${SOAK_BENCH_RSS_PCT:-20}
RSS_SLACK_MB=${SOAK_BENCH_RSS_SLACK_MB:-4}
PROJECT=sgsoak$$
for n in gateway executor sandbox-python sandbox-nodejs egress; do
    docker image inspect "sandgate/$n:$TAG" >/dev/null 2>&1 ||
        { echo "run-soak: sandgate/$n:$TAG missing (SANDGATE_TAG=$TAG make images)"; exit 1; }
done
work=$(mktemp -d)
port=$(free_port)
export SANDGATE_PROJECT=$PROJECT SANDGATE_PUBLISH=127.0.0.1:$port SANDGATE_STACK_DIR=$work/stack \
    SANDGATE_POOL_SIZE_PYTHON=2 SANDGATE_POOL_SIZE_NODEJS=1 SANDGATE_READY_TIMEOUT_S=240 \
        SANDGATE_GATEWAY_IMAGE=sandgate/gateway:$TAG SANDGATE_EXECUTOR_IMAGE=sandgate/executor:$TAG \
    SANDBOX_BASE_PYTHON_IMAGE=sandgate/sandbox-python:$TAG \
    SANDBOX_BASE_NODEJS_IMAGE=sandgate/sandbox-nodejs:$TAG SANDGATE_EGRESS_IMAGE=sandgate/egress:$TAG
soak_down() {
    images/stack.sh down >"$work/down.log" 2>&1 || { echo "run-soak: stack.sh down failed:"; tail -20 "$work/down.log"; }
    rm -rf "$work"
}
trap soak_down EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
images/stack.sh up >"$work/up.log" 2>&1 || { echo "run-soak: stack.sh up failed:"; tail -30 "$work/up.log"; exit 1; }
gw=http://127.0.0.1:$port
token=$(cat "$work/stack/config/client.token")
cid() { docker ps -q --filter "label=com.docker.compose.project=$PROJECT" \
    --filter "label=com.docker.compose.service=$1"; }
gateway=$(cid gateway)
executor=$(cid executor-python)
[ -n "$gateway" ] && [ -n "$executor" ] || { echo "run-soak: containers not found"; exit 1; }
inspect() { docker inspect -f "$2" "$1"; }
pid_rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$(inspect "$1" '{{.State.Pid}}')/status"; }
limit_mb() { echo $(($(inspect "$1" '{{.HostConfig.Memory}}') / 1048576)); }
restarts() { echo "$(inspect "$gateway" '{{.RestartCount}}') $(inspect "$executor" '{{.RestartCount}}')"; }
restarts0=$(restarts)
# a few jobs so that what is built on first use is in the idle figure
for _ in 1 2 3 4 5; do
    curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$gw/v1/run" \
        -d '{"language":"python","code":"def main():\n    return 1\n"}' || true
done
sleep 5
idle_gw=$(pid_rss_mb "$gateway") idle_ex=$(pid_rss_mb "$executor")
budget() { docker logs "$1" 2>&1 | sed -n 's/.*memory_budget bytes=\([0-9]*\) source=\([a-z]*\).*/\1 \2/p' |
    awk 'NR == 1 { printf "%d MiB (%s)", $1 / 1048576, $2 }'; }
echo "limits: gateway $(limit_mb "$gateway") MiB, executor-python $(limit_mb "$executor") MiB;" \
     "memory budgets: gateway $(budget "$gateway"), executor-python $(budget "$executor")"
echo "idle RSS: gateway $idle_gw MB, executor-python $idle_ex MB"
bad=0
for c in $LEVELS; do
    r=$(bench/soak_load.py "$gw" "$token" "$c" "$SECS" "$gateway" "$executor")
    python3 - "$r" "$gateway" "$executor" "$(limit_mb "$gateway")" "$(limit_mb "$executor")" \
        "$work/soak-$c.tsv" <<'PY' || bad=1
import json, sys
r = json.loads(sys.argv[1]); gw, ex = sys.argv[2], sys.argv[3]
lim = {gw: int(sys.argv[4]), ex: int(sys.argv[5])}
a = r["answers"]
print(f"c={r['concurrency']} for {r['seconds']}s: {a['result']} results, {a['busy']} busy, "
      f"{a['other']} other; by kind {json.dumps(r['by_kind'])}")
for name, c in (("gateway", gw), ("executor-python", ex)):
    peak = r["peak_rss"][c] / 1048576
    print(f"    peak RSS {name}: {peak:.1f} MB of {lim[c]} MiB ({100 * peak / lim[c]:.0f} %)")
for o in r["others"]:
    print(f"    other: {json.dumps(o)[:400]}")
peak = {c: r["peak_rss"][c] / 1048576 for c in (gw, ex)}
with open(sys.argv[6], "w") as f:
    f.write(f"memory soak, c={r['concurrency']} for {r['seconds']} s (the compose stack, shipped limits;"
            f" `bench/run-soak.sh`)\t{a['result']} results, {a['busy']} busy, {a['other']} other;"
            f" peak RSS gateway {peak[gw]:.1f} MB ({100 * peak[gw] / lim[gw]:.0f} % of its limit),"
            f" executor {peak[ex]:.1f} MB ({100 * peak[ex] / lim[ex]:.0f} %)\t"
            f"every answer a result or busy: {'met' if not a['other'] else '**not met**'}\n")
sys.exit(1 if a["other"] else 0)
PY
    [ -s "$work/soak-$c.tsv" ] && bench_summary_tsv <"$work/soak-$c.tsv"
done
echo "resting ${REST}s"
sleep "$REST"
rest_gw=$(pid_rss_mb "$gateway") rest_ex=$(pid_rss_mb "$executor")
restarts1=$(restarts)
oom="$(inspect "$gateway" '{{.State.OOMKilled}}') $(inspect "$executor" '{{.State.OOMKilled}}')"
echo "RSS ${REST}s after: gateway $rest_gw MB (idle $idle_gw), executor-python $rest_ex MB (idle $idle_ex)"
echo "restarts (gateway executor): before $restarts0, after $restarts1; OOMKilled: $oom"
back=met
python3 - "$idle_gw" "$rest_gw" "$idle_ex" "$rest_ex" "$RSS_PCT" "$RSS_SLACK_MB" <<'PY' || back="**not met**"
import sys
ig, rg, ie, re_, pct, slack = map(float, sys.argv[1:])
ok = True
for name, idle, rest in (("gateway", ig, rg), ("executor-python", ie, re_)):
    within = rest <= idle * (1 + pct / 100) or rest - idle <= slack
    print(f"    {name}: {100 * (rest - idle) / idle:+.0f} % of idle: {'ok' if within else 'NOT back'}")
    ok = ok and within
sys.exit(0 if ok else 1)
PY
[ "$restarts0" = "$restarts1" ] && [ "$oom" = "false false" ] || { echo "run-soak: a daemon restarted"; bad=1; }
bench_summary "memory soak: RSS ${REST} s after the load against idle" \
    "gateway $rest_gw vs $idle_gw MB ($(awk -v a="$rest_gw" -v b="$idle_gw" 'BEGIN { printf "%+.0f", 100 * (a - b) / b }') %), executor $rest_ex vs $idle_ex MB ($(awk -v a="$rest_ex" -v b="$idle_ex" 'BEGIN { printf "%+.0f", 100 * (a - b) / b }') %); restarts $restarts0 → $restarts1" \
    "back within $RSS_PCT % (or $RSS_SLACK_MB MB) of idle: $back; no restart: $([ "$restarts0" = "$restarts1" ] && [ "$oom" = "false false" ] && echo met || echo "**not met**")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $bad
