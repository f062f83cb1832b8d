# lib.sh - helpers sourced by the bench/run-*.sh scripts (not run on its own).

# field KEY LINE: the value of KEY=value in a bench_analyze output line.
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
# median of the numbers on stdin; med ARGS...: median of its arguments.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
med() { printf '%s\n' "$@" | median; }
# mbps BYTES MICROSECONDS; ratio A B (A / B, one decimal).
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.1f", (t > 0 ? b / t : 0) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
# print_load: the 1-minute load average, since every figure depends on it.
print_load() {
    local load1 _rest
    read -r load1 _rest </proc/loadavg
    echo "load average $load1 on $(nproc) CPUs (figures are noisy while the machine is busy)"
}
# bench_summary WHAT MEASURED TARGET: one row of `make bench`'s summary table
# (| WHAT | MEASURED | TARGET |, a "|" inside a cell escaped) appended to the
# file $BENCH_SUMMARY names; nothing when it is unset (a script run alone).
# bench/summary.py writes the table with the machine and its load above it.
bench_summary() {
    [ -n "${BENCH_SUMMARY:-}" ] || return 0
    printf '| %s | %s | %s |\n' "${1//|/\\|}" "${2//|/\\|}" "${3//|/\\|}" >>"$BENCH_SUMMARY"
}
# bench_summary_tsv: bench_summary for each "WHAT<tab>MEASURED<tab>TARGET" line on stdin.
bench_summary_tsv() {
    local what measured target
    while IFS=$'\t' read -r what measured target; do bench_summary "$what" "$measured" "$target"; done
}
# verdict A OP B (OP <= or >=): "met" when A OP B holds, else "**not met**".
verdict() {
    awk -v a="$1" -v op="$2" -v b="$3" \
        'BEGIN { ok = (op == "<=") ? a + 0 <= b + 0 : a + 0 >= b + 0; print ok ? "met" : "**not met**" }'
}
# free_port: a free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# bare_rate RUNS IMAGE CMD...: containers/s for RUNS single-use
# `docker run --rm --runtime=$BARE_RUNTIME` (runsc) containers, 4 at a time (the creation
# ceiling: every job uses up a sandbox).
bare_rate() {
    local runs=$1 image=$2 t0 t1
    shift 2
    t0=$(date +%s.%N)
    seq "$runs" | xargs -P 4 -I{} docker run --rm --runtime="${BARE_RUNTIME:-runsc}" --network none \
        --security-opt seccomp=unconfined --entrypoint "$1" "$image" "${@:2}" >/dev/null
    t1=$(date +%s.%N)
    python3 -c "print(round($runs / ($t1 - $t0), 2))"
}

# cpu_busy_s: CPU seconds the whole machine has spent busy since boot (every
# core, every process: dockerd, runsc, the sandboxes), from /proc/stat. The
# difference over a phase divided by its containers or jobs is what each one
# costs; the number of CPUs divided by that is the rate the machine can reach.
cpu_busy_s() {
    awk '/^cpu / { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy / 100 }' /proc/stat
}
# proc_cpu PID: CPU-s of a process with its reaped children (utime, stime,
# cutime, cstime of /proc/PID/stat).
proc_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13 + $14 + $15) / hz }' \
        "/proc/$1/stat"
}
# daemons_cpu: dockerd's and containerd's CPU-s (with their reaped children).
daemons_cpu() {
    local p t=0
    for p in $(pgrep -x dockerd) $(pgrep -x containerd); do
        t=$(awk -v a="$t" -v b="$(proc_cpu "$p")" 'BEGIN { print a + b }')
    done
    echo "$t"
}
# cgroup_cpu INSTANCE: CPU-s charged so far to the runsc backend's sandbox
# cgroups (cpuacct of their parent, sandgate-INSTANCE: hierarchical, so a
# removed sandbox's share stays counted). Every process of every sandbox:
# sentry, gofer and the platform's stub processes (systrap's run the
# sandboxed program and are not reaped into the executor's rusage: the
# executor+children column misses them). "-" for the Docker backend, whose
# containers' cgroups are mixed with every other container's.
cgroup_cpu() {
    local f=/sys/fs/cgroup/cpuacct/sandgate-$1/cpuacct.usage
    if [ -r "$f" ]; then awk '{ print $1 / 1e9 }' "$f"; else echo -; fi
}
# per_unit A B N: (B - A) / N, two decimals.
per_unit() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (n > 0 ? (b - a) / n : 0) }'; }

# bench_preflight NAME TAG: the release gateway and executor are built, the
# Python sandbox image under TAG exists, and the host is set up for runsc.
bench_preflight() {
    local name=$1 tag=$2 b
    for b in sandgate sandgate-executor; do
        [ -x "$BUILD/$b" ] || { echo "$name: $BUILD/$b is not built (make bench-bins)"; exit 1; }
    done
    docker image inspect "sandgate/sandbox-python:$tag" >/dev/null 2>&1 ||
        { echo "$name: sandgate/sandbox-python:$tag missing (make images)"; exit 1; }
    images/host-setup.sh --check >/dev/null || images/host-setup.sh --fix
}

# bench_workdir: sets $work (a temp dir) and $pids (daemons the script
# starts, appended by the caller); both are cleaned up when the script exits.
bench_cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
bench_workdir() {
    work=$(mktemp -d)
    pids=()
    trap bench_cleanup EXIT
}

# jq_ PATH: the value at a dotted PATH of the JSON on stdin ("None" if absent).
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d.get(k) if isinstance(d, dict) else None
print(d)' "$1"; }

# gateway_for EXEC_URL POLICIES_DIR: starts the release sandgate in front of
# one executor (both languages), sets $gw, appends its pid to $pids, waits
# until every flavour of the executor has its target of idle sandboxes and
# the gateway answers. Logs in $work.
gateway_for() {
    local ex=$1 policies=$2 gp
    gp=$(free_port)
    gw=http://127.0.0.1:$gp
    cat >"$work/sandgate.json" <<JSON
{"port": $gp, "policies_dir": "$policies", "audit_log": "$work/audit.log",
 "log_level": "warn", "executors": {"python": ["$ex"], "nodejs": ["$ex"]}}
JSON
    "$BUILD/sandgate" -c "$work/sandgate.json" 2>"$work/sandgate.log" & pids+=($!)
    for _ in $(seq 600); do
        curl -fsS "$ex/healthz" 2>/dev/null | python3 2>/dev/null -c 'import json,sys
h = json.load(sys.stdin)
sys.exit(0 if all(f["idle"] >= f["target"] > 0 for f in h["flavours"]) else 1)' && break
        sleep 0.2
    done
    curl -fsS "$gw/healthz" >/dev/null || { echo "gateway not up"; cat "$work/sandgate.log"; exit 1; }
}

# pools_start EXECUTOR IMAGE RUNTIME INSTANCE [ARGS...]: a Python executor
# with the pool benchmarks' flavours (plain:${PLAIN:-4},
# pandas=numpy,pandas:${PANDAS:-2}, a budget of $BUDGET MB when set: the direct
# backend takes none) on RUNTIME, ARGS added, each executor's own default of
# launches at once (--create-parallel: 2 per pool, 2 per CPU when restoring),
# and a release gateway in front of it (gateway_for); sets $ex, $gw and
# $expid, appends both pids to $pids. Its log: $work/executor-INSTANCE.log.
pools_start() {
    local bin=$1 image=$2 rt=$3 inst=$4 ep
    shift 4
    ep=$(free_port)
    ex=http://127.0.0.1:$ep
    "$bin" --language python --image "$image" --listen "127.0.0.1:$ep" --runtime "$rt" \
        --instance "$inst" --flavour "plain:${PLAIN:-4}" --flavour "pandas=numpy,pandas:${PANDAS:-2}" \
        ${BUDGET:+--pool-memory-mb "$BUDGET"} --pool-wait-ms 30000 \
        --log-level warn "$@" 2>"$work/executor-$inst.log" & pids+=($!)
    expid=$!
    gateway_for "$ex" policies
}
# pools_stop INSTANCE: stops the last executor and gateway pools_start began
# and removes any sandbox of INSTANCE left behind.
pools_stop() {
    kill "${pids[@]: -2}" 2>/dev/null || true
    wait "${pids[@]: -2}" 2>/dev/null || true
    docker ps -aq --filter "label=org.sandgate.executor=$1" | xargs -r docker rm -f >/dev/null
}

# show_ab LABEL JSON BASE_KEY BASE_NAME NEW_KEY NEW_NAME [TARGET_MS]: one line
# of an A/B latency comparison (bench/exec_load.py's output: each side's
# client p50, the executor's run_ms p50 and the statuses), the new side's
# difference from the base; with TARGET_MS also a summary row (bench_summary)
# judging that difference against "at most TARGET_MS added at p50".
show_ab() {
    local out
    out=$(python3 - "$@" <<'PY'
import json, sys
label, raw, bk, bn, nk, nn = sys.argv[1:7]
r = json.loads(raw)
base, new = r[bk], r[nk]
def diff(k):
    return round(new[k] - base[k], 2)
print(f"{label}: p50 {bn} {base['p50_ms']} ms, {nn} {new['p50_ms']} ms (+{diff('p50_ms')} ms); "
      f"executor run_ms p50 {bn} {base['run_ms_p50']}, {nn} {new['run_ms_p50']} "
      f"(+{diff('run_ms_p50')} ms); statuses {base['by_status']} / {new['by_status']}")
if len(sys.argv) > 7:
    ok = "met" if diff("p50_ms") <= float(sys.argv[7]) else "**not met**"
    print(f"{label}\tp50 {bn} {base['p50_ms']} ms, {nn} {new['p50_ms']} ms (+{diff('p50_ms')} ms)"
          f"\t≤ {sys.argv[7]} ms added: {ok}")
PY
) || return 1
    head -1 <<<"$out"
    tail -n +2 <<<"$out" | bench_summary_tsv
}
