#!/usr/bin/env bash
# run-suites.sh unit|all
# Runs the test suites in order and ends with one line "N passed, N failed".
#   unit: the Criterion binaries under $BUILD/tests (ASan+UBSan build)
#   all:  unit, integration, then host setup + images, e2e (dockerd + runsc)
#         the stack suite and the swarm suite (a single-node swarm the suite
#         starts and leaves as it found it). A suite that cannot run (no engine, image build
#         failed) counts as a failure, never as a skip.
set -uo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
BUILD=${BUILD:-build/asan}
export SANDGATE_BUILD=$BUILD
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
passed=0
failed=0
log_dir=build/test-logs
mkdir -p "$log_dir"

count() { passed=$((passed + $1)); failed=$((failed + $2)); }

run_unit() {
    local bin out p f
    for bin in "$BUILD"/tests/test_*; do
        [ -x "$bin" ] || continue
        out="$log_dir/$(basename "$bin").log"
        "$bin" --jobs 2 >"$out" 2>&1
        local rc=$?
        # Criterion: "[====] Synthesis: Tested: N | Passing: N | Failing: N | Crashing: N"
        local line
        line=$(grep -a 'Synthesis:' "$out" | tail -1)
        p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$line")
        f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$line")
        c=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$line")
        p=${p:-0}
        f=$(( ${f:-0} + ${c:-0} ))
        if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$f" = 0 ]; }; then f=$((f + 1)); fi
        [ "$f" -gt 0 ] && { echo "--- $(basename "$bin") failed:"; grep -aE '\[FAIL\]|\[----\]|ERROR|Sanitizer' "$out" | head -40; }
        echo "unit $(basename "$bin"): $p passed, $f failed"
        count "$p" "$f"
    done
}

run_py() {
    local dir=$1 out="$log_dir/$(basename "$1").log"
    [ -n "$(ls "$dir"/test_*.py 2>/dev/null)" ] || return 0
    python3 tests/lib/sgtest.py "$dir" 2>&1 | tee "$out" | grep -aE '^(FAIL|ERROR|ok|suite)' | grep -av '^ok'
    local line
    line=$(grep -a '^suite ' "$out" | tail -1)
    local p f
    p=$(sed -n 's/.*: \([0-9]*\) passed.*/\1/p' <<<"$line")
    f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
    [ -z "$line" ] && { echo "suite $dir: did not report (see $out)"; f=1; }
    # The tracebacks of what failed, so a CI log alone says why.
    [ "${f:-0}" != 0 ] && awk '/^(FAIL|ERROR): /{on=1; n=0} /^={20,}$/{on=0} on && n++ < 60' "$out"
    count "${p:-0}" "${f:-0}"
}

step() { # a setup step that must succeed for the suites after it
    local name=$1; shift
    echo "== $name"
    if ! "$@" >"$log_dir/$name.log" 2>&1; then
        tail -30 "$log_dir/$name.log"
        echo "setup step '$name' failed: the suites that need it count as failed"
        count 0 1
        return 1
    fi
}

run_unit
if [ "$which" = all ]; then
    run_py tests/integration
    if step host-setup images/host-setup.sh --fix && step images make images; then
        run_py tests/e2e
        run_py tests/stack
        run_py tests/swarm
    fi
fi
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
