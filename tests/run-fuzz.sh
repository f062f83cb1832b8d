#!/usr/bin/env bash
# run-fuzz.sh BUILD SECONDS [TARGET...] - for every fuzz target (or the named
# ones): replay its regression seeds (tests/fuzz/regress/<target>/, each input
# once, whatever its size), then fuzz it for SECONDS from its seed corpus
# (tests/fuzz/corpus/<target>/) with the extra flags of
# tests/fuzz/<target>.options (one libFuzzer flag a line: -max_len, -dict).
# Fails on any crash, leak, timeout or sanitizer report; prints each
# target's executions per second. The working corpus grows in
# build/fuzz-corpus/<target>/, logs and crashing inputs go to build/fuzz-artifacts/.
set -uo pipefail
build=$1 seconds=$2
out=${FUZZ_OUT:-build} # where corpora, logs and findings go
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for bin in "$build"/fuzz/fuzz_*; do
        [ -x "$bin" ] && targets+=("$(basename "$bin")")
    done
fi
[ ${#targets[@]} -gt 0 ] || { echo "run-fuzz: no fuzz targets in $build/fuzz" >&2; exit 1; }
mkdir -p "$out"/fuzz-artifacts
rc=0
for name in "${targets[@]}"; do
    bin=$build/fuzz/$name
    [ -x "$bin" ] || { echo "$name: no binary $bin"; rc=1; continue; }
    work=$out/fuzz-corpus/$name
    log=$out/fuzz-artifacts/$name.log
    mkdir -p "$work"
    flags=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix=$out/fuzz-artifacts/"$name"-)
    if [ -f tests/fuzz/"$name".options ]; then
        while read -r flag; do
            [ -n "$flag" ] && [ "${flag:0:1}" != "#" ] && flags+=("$flag")
        done <tests/fuzz/"$name".options
    fi
    regress=tests/fuzz/regress/$name
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        # each file once, at full length (no -max_len: a seed may be larger)
        if ! "$bin" -timeout=10 -rss_limit_mb=2048 "$regress"/* >"$log" 2>&1; then
            tail -40 "$log"
            echo "$name: FAILED on a regression seed"
            rc=1
            continue
        fi
    fi
    seeds=tests/fuzz/corpus/$name
    echo "== $name for ${seconds}s"
    if ! "$bin" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        "$work" $([ -d "$seeds" ] && echo "$seeds") >"$log" 2>&1; then
        tail -40 "$log"
        echo "$name: FAILED"
        rc=1
    else
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
        echo "$name: ok, $runs runs in ${secs}s ($((runs / (secs > 0 ? secs : 1))) exec/s)," \
             "load $(cut -d' ' -f1-3 /proc/loadavg)"
    fi
done
exit $rc
