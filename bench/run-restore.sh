#!/usr/bin/env bash
# run-restore.sh - gVisor checkpoint/restore of a warm Python runner against
# a cold boot to the same point, for the plain and the pandas flavour
# (docs/executor.md, "Restore instead of boot"). The bundle's config.json is
# the one the direct backend writes: a `--sandbox-backend runsc` executor is
# started with a pool of one, its sandbox's config.json copied, the executor
# stopped; bench/restore_probe.py then drives runsc by hand on that spec and
# the unpacked image, under a runsc root and cgroups of its own that it
# removes. Per sandbox: wall and CPU-s to warm (cgroup cpuacct + the runsc
# CLI calls), RSS, the first job's wall, the whole life's CPU, and what
# restored sandboxes share (random state, hash seed, addresses); then the
# floor: sandboxes of the same spec that run /bin/true and python3 -c pass
# (restore_probe.py --floor). Needs root.
# RESTORE_BENCH_N: sandboxes of each kind (8); SANDGATE_TAG picks the image.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
N=${RESTORE_BENCH_N:-8}
IMAGE=sandgate/sandbox-python:${SANDGATE_TAG:-latest}
[ "$(id -u)" = 0 ] || { echo "run-restore: runsc needs root"; exit 1; }
bench_preflight run-restore "${SANDGATE_TAG:-latest}"
bench_workdir

port=$(free_port)
"$BUILD/sandgate-executor" --language python --image "$IMAGE" --listen "127.0.0.1:$port" \
    --sandbox-backend runsc --runsc-state-dir "$work/state" --max-sessions 0 \
    --instance "bench-restore-$$" --flavour plain:1 --log-level warn 2>"$work/executor.log" &
pids+=($!)
config=
for _ in $(seq 600); do
    # the runner's sandbox, not the start-up seccomp probe's
    config=$(grep -l runner.py "$work"/state/bundles/*/config.json 2>/dev/null | head -1) || true
    [ -n "$config" ] && break
    sleep 0.1
done
[ -n "$config" ] || { echo "run-restore: no bundle in 60 s"; tail -20 "$work/executor.log"; exit 1; }
cp "$config" "$work/config.json"
rootfs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["root"]["path"])' \
    "$work/config.json")
kill "${pids[0]}"
wait "${pids[0]}" || true  # the executor removes its sandboxes; the unpacked image stays
pids=()

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for flavour in plain pandas; do
    pre=""
    [ "$flavour" = pandas ] && pre=numpy,pandas
    echo "== $flavour flavour ($N boots and $N restores, alternated)"
    bench/restore_probe.py --config "$work/config.json" --rootfs "$rootfs" -n "$N" \
        --preimport "$pre" --workdir "$work" >"$work/$flavour.jsonl"
    : >"$work/$flavour.tsv"
    python3 - "$work/$flavour.jsonl" "$work/$flavour.tsv" "$flavour" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ck = lines[0]["checkpoint"]
print("checkpoint: %.0f ms wall, %.0f ms CPU, image %.1f MB" %
      (ck["checkpoint_ms"], ck["checkpoint_cpu_ms"], ck["image_mb"]))
rows = [l for l in lines if "cid" in l]
for l in lines:
    if "summary" in l:
        print("%-8s wall to warm %6.0f ms  CPU to warm %5.0f ms  RSS %4.0f MB  first job %4.0f ms"
              "  life CPU %5.0f ms  jobs ok %d/%d" % (l["summary"], l["wall_ms"], l["cpu_ms"],
              l["rss_mb"], l["job_ms"], l["life_cpu_ms"], l["ok"], l["n"]))
restored = [r["job"] for r in rows if r["kind"] == "restore"]
shared = [k for k in ("random", "numpy_random", "hash", "libc_addr", "heap_addr", "urandom")
          if len(restored) > 1 and restored[0][k] is not None
          and len({str(j[k]) for j in restored}) == 1]
print("same in every restored sandbox: %s" % (", ".join(shared) or "nothing"))
s = {l["summary"]: l for l in lines if "summary" in l}
if len(s) == 2:
    (a, x), (b, y) = sorted(s.items())
    with open(sys.argv[2], "w") as f:
        f.write("%s sandbox from a gVisor checkpoint vs a boot (`bench/run-restore.sh`)\t"
                "CPU to warm %s %.0f / %s %.0f ms, wall %.0f / %.0f ms, RSS %.0f / %.0f MB\t-\n"
                % (sys.argv[3], a, x["cpu_ms"], b, y["cpu_ms"], x["wall_ms"], y["wall_ms"],
                   x["rss_mb"], y["rss_mb"]))
PY
    bench_summary_tsv <"$work/$flavour.tsv"
done
# The runtime's own price of a sandbox of the same spec, below which no pool
# can go (docs/executor.md, "Where a pool sandbox's CPU goes").
echo "== the floor: the same spec running /bin/true and python3 -c pass ($N of each)"
bench/restore_probe.py --config "$work/config.json" --rootfs "$rootfs" -n "$N" --floor \
    --workdir "$work" >"$work/floor.jsonl"
python3 - "$work/floor.jsonl" "$work/floor.tsv" <<'PY'
import json, sys
s = {l["summary"]: l for l in map(json.loads, open(sys.argv[1])) if "summary" in l}
for k, l in s.items():
    print("%-16s wall %5.0f ms  life CPU %5.0f ms" % (k, l["wall_ms"], l["life_cpu_ms"]))
t, p = s["/bin/true"], s["python3 -c pass"]
with open(sys.argv[2], "w") as f:
    f.write("a bare sandbox of the pool's spec, the runtime's floor (`bench/run-restore.sh`)\t"
            "whole life CPU /bin/true %.0f ms, python3 -c pass %.0f ms; wall %.0f / %.0f ms\t-\n"
            % (t["life_cpu_ms"], p["life_cpu_ms"], t["wall_ms"], p["wall_ms"]))
PY
bench_summary_tsv <"$work/floor.tsv"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
