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
