#!/usr/bin/env bash
# run-fuzz.sh BUILD SECONDS - run every fuzz target for SECONDS with its seed
# corpus (tests/fuzz/corpus/<target>/); fails on any crash, leak or sanitizer report.
set -uo pipefail
build=$1 seconds=$2
rc=0
for bin in "$build"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    work=build/fuzz-corpus/$name
    mkdir -p "$work" build/fuzz-artifacts
    seeds=tests/fuzz/corpus/$name
    echo "== $name for ${seconds}s"
    if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=build/fuzz-artifacts/"$name"- "$work" $( [ -d "$seeds" ] && echo "$seeds" ) \
        >build/fuzz-artifacts/"$name".log 2>&1; then
        tail -40 build/fuzz-artifacts/"$name".log
        echo "$name: FAILED"
        rc=1
    else
        grep -a 'Done' build/fuzz-artifacts/"$name".log | tail -1
        echo "$name: ok"
    fi
done
exit $rc
