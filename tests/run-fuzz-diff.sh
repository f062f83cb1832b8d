#!/usr/bin/env bash
# run-fuzz-diff.sh BUILD SECONDS [LANG...] - the differential fuzzers
# (tests/fuzz/diff/): for python and javascript (or the named ones), replay
# the regression seeds (tests/fuzz/regress/diff_<lang>/), then fuzz for
# SECONDS from the analyzer seed corpus. Fails when any input the analyzer
# accepts is read differently by the runtime (findings in
# build/fuzz-diff/findings/<lang>/: the source and <hash>.txt saying what
# differs), or on any crash or sanitizer report.
#
# The oracle is the runtime the sandbox runs: the sandbox image
# (sandgate/sandbox-<lang>:$SANDGATE_TAG, default latest) when Docker has it,
# run with no network and only tests/fuzz/diff mounted; otherwise the host's
# python3 / node, which may be another version (the script says which).
# DIFF_RUNTIME=host or DIFF_RUNTIME=docker forces one. FUZZ_OUT (default build) moves the
# corpora, logs and findings elsewhere.
set -uo pipefail
build=$1 seconds=$2
out=${FUZZ_OUT:-build} # where corpora, logs and findings go
shift 2
langs=("$@")
[ ${#langs[@]} -gt 0 ] || langs=(python javascript)
tag=${SANDGATE_TAG:-latest}
here=$(pwd)
rc=0

oracle_for() { # lang -> command line on stdout, description on stderr
    local lang=$1 image cmd
    case $lang in
        python) image=sandgate/sandbox-python:$tag cmd="python3 DIR/py_oracle.py" ;;
        javascript) image=sandgate/sandbox-nodejs:$tag cmd="node --expose-internals DIR/js_oracle.js" ;;
    esac
    local runtime=${DIFF_RUNTIME:-}
    if [ -z "$runtime" ]; then
        if docker image inspect "$image" >/dev/null 2>&1; then runtime=docker; else runtime=host; fi
    fi
    if [ "$runtime" = docker ]; then
        local run="docker run --rm -i --network none --label sandgate.test=fuzz-diff"
        run+=" -v $here/tests/fuzz/diff:/diff:ro --entrypoint ${cmd%% *} $image"
        echo "$run ${cmd#* }" | sed 's#DIR#/diff#'
        echo "oracle: $image ($($run --version 2>/dev/null | sed 's#DIR#/diff#' | head -1))" >&2
    else
        echo "$cmd" | sed "s#DIR#$here/tests/fuzz/diff#"
        echo "oracle: host $(${cmd%% *} --version 2>&1 | head -1) (not the sandbox image's build)" >&2
    fi
}

for lang in "${langs[@]}"; do
    bin=$build/fuzz/diff_$lang
    [ -x "$bin" ] || { echo "diff_$lang: no binary $bin"; rc=1; continue; }
    findings=$out/fuzz-diff/findings/$lang
    log=$out/fuzz-artifacts/diff_$lang.log
    rm -rf "$findings"
    mkdir -p "$findings" $out/fuzz-corpus/diff_"$lang" $out/fuzz-artifacts
    DIFF_ORACLE=$(oracle_for "$lang") || { rc=1; continue; }
    export DIFF_ORACLE DIFF_FINDINGS=$findings
    # pending batches are kept across inputs, so libFuzzer's per-input leak
    # heuristic would fire on every batch: leaks are the analyzer targets' job
    flags=(-detect_leaks=0 -timeout=10 -rss_limit_mb=2048
           -artifact_prefix=$out/fuzz-artifacts/diff_"$lang"-)
    regress=tests/fuzz/regress/diff_$lang
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        "$bin" "${flags[@]}" "$regress"/* >"$log" 2>&1 || { tail -30 "$log"; rc=1; }
        grep -a '^diff:' "$log" | tail -1 | sed "s/^/diff_$lang regression seeds: /"
    fi
    echo "== diff_$lang for ${seconds}s"
    if ! "$bin" "${flags[@]}" -max_len=4096 -dict=tests/fuzz/"$lang".dict \
        -max_total_time="$seconds" -print_final_stats=1 \
        $out/fuzz-corpus/diff_"$lang" tests/fuzz/corpus/fuzz_analyze_"$lang" >>"$log" 2>&1; then
        tail -30 "$log"
        echo "diff_$lang: FAILED"
        rc=1
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    grep -a '^diff: compared' "$log" | tail -1
    n=$(find "$findings" -type f ! -name '*.txt' | wc -l)
    if [ "$n" -gt 0 ]; then
        echo "diff_$lang: $n findings (accepted by the analyzer, read differently by the runtime):"
        for t in $(ls "$findings"/*.txt | head -5); do echo "  $t: $(head -c 300 "$t")"; done
        rc=1
    else
        echo "diff_$lang: ok, $runs runs in ${seconds}s, load $(cut -d' ' -f1-3 /proc/loadavg)"
    fi
done
exit $rc
