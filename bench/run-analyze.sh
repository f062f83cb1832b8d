#!/usr/bin/env bash
# run-analyze.sh - Python analyzer throughput and per-job latency, cold.
#
# Generates a ~100 KB Python module of realistic data-processing code and a
# ~2 KB submission, then reports side by side (every figure is a cold
# analysis: bench_analyze calls the analyzer directly, no verdict cache):
#   - per-job latency p50/p99 of the full analysis on the 2 KB submission
#     (target: p50 <= 100 us), and tree-sitter's bare parse of the same
#     bytes (the floor no analysis can go under)
#   - throughput on the 100 KB file (MB/s), analysis and bare parse
#   - CPython's ast.parse + full ast.walk on the 100 KB file, and the ratio
#     (target: sandgate >= 3x faster)
# Each figure is the median over ROUNDS rounds that alternate the sides, so
# a busy machine slows all of them alike. Fails only when it cannot measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
RUNS=${RUNS:-50}
JOBS=${JOBS:-5000}
bin=$BUILD/bench/bench_analyze
work=build/bench-data
mkdir -p "$work"
[ -x "$bin" ] || { echo "run-analyze: $bin missing (make bench-bins)"; exit 1; }
command -v python3 >/dev/null || { echo "run-analyze: python3 missing"; exit 1; }

# Realistic code: data classes, comprehensions, f-strings, decorators,
# try/except, typing, only modules the default policy allows.
python3 - "$work" <<'PY'
import sys, textwrap
out = sys.argv[1]
head = textwrap.dedent('''\
    import json
    import math
    import statistics
    from collections import Counter, defaultdict
    from dataclasses import dataclass, field
    from datetime import datetime, timedelta
    from functools import reduce
    from itertools import groupby
    from typing import Dict, Iterable, List, Optional

    ''')
block = textwrap.dedent('''\
    @dataclass
    class Record{i}:
        key: str
        value: float
        tags: List[str] = field(default_factory=list)
        seen: Optional[datetime] = None

        def score(self, weight: float = 1.0) -> float:
            base = math.log1p(abs(self.value)) * weight
            return base + 0.5 * len(self.tags) if self.tags else base


    def load_records_{i}(text: str) -> List[Record{i}]:
        rows = json.loads(text)
        out = []
        for row in rows:
            try:
                out.append(Record{i}(str(row["key"]), float(row.get("value", 0)), list(row.get("tags", []))))
            except (KeyError, TypeError, ValueError) as exc:
                print(f"skipping row {{row!r}}: {{exc}}")
        return out


    def summarize_{i}(records: Iterable[Record{i}], top: int = 5) -> Dict[str, object]:
        records = list(records)
        values = [r.value for r in records if r.value is not None]
        by_key = defaultdict(list)
        for r in records:
            by_key[r.key].append(r.value)
        tags = Counter(t for r in records for t in r.tags)
        window = datetime(2024, 1, 1) + timedelta(days={i} % 28)
        grouped = {{k: sum(1 for _ in g) for k, g in groupby(sorted(r.key for r in records))}}
        return {{
            "count": len(values),
            "mean": statistics.fmean(values) if values else 0.0,
            "stdev": statistics.pstdev(values) if len(values) > 1 else 0.0,
            "top_tags": tags.most_common(top),
            "keys": {{k: max(v) for k, v in by_key.items()}},
            "total": reduce(lambda a, b: a + b, values, 0.0),
            "window": window.isoformat(),
            "grouped": grouped,
            "scores": sorted((r.score() for r in records), reverse=True)[:top],
        }}


    ''')
def module(target):
    parts, i = [head], 0
    while sum(map(len, parts)) < target:
        parts.append(block.format(i=i)); i += 1
    parts.append(textwrap.dedent('''\
        def main(data: str = "[]") -> dict:
            return summarize_0(load_records_0(data))
        '''))
    return "".join(parts)
big = module(100_000)
open(f"{out}/big.py", "w").write(big)
small = head + block.format(i=0) + 'def main(data: str = "[]") -> dict:\n    return summarize_0(load_records_0(data))\n'
open(f"{out}/small.py", "w").write(small)
PY

policy=policies/default.json
big=$work/big.py small=$work/small.py
print_load
printf 'inputs: %s (%d bytes), %s (%d bytes), policy %s\n' "$big" "$(wc -c <"$big")" \
    "$small" "$(wc -c <"$small")" "$policy"


# CPython's side: ast.parse + a full ast.walk, median of N runs after a warm-up.
cpython_median_us() {
    python3 - "$1" "$2" <<'PY'
import ast, statistics, sys, time
src = open(sys.argv[1]).read()
ts = []
for _ in range(int(sys.argv[2]) + 1):
    t0 = time.perf_counter_ns()
    n = sum(1 for _ in ast.walk(ast.parse(src)))
    ts.append((time.perf_counter_ns() - t0) / 1000)
print(int(statistics.median(ts[1:])))
PY
}

# The sides alternate in ROUNDS rounds so that a busy machine slows all of
# them alike; the figures are medians over the rounds.
ROUNDS=${ROUNDS:-5}
per_round=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
jobs_round=$(( (JOBS + ROUNDS - 1) / ROUNDS ))
measure() { "$bin" "$policy" python "$@" || { echo "run-analyze: cannot measure"; exit 1; }; }
big_an=() big_parse=() cpy=() small_p50=() small_p99=() small_parse=() small_eval=() small_bare=()
for ((i = 0; i < ROUNDS; i++)); do
    big_line=$(measure "$big" "$per_round")
    big_an+=("$(field median_us "$big_line")")
    big_parse+=("$(field median_us "$(measure "$big" "$per_round" parse)")")
    cpy+=("$(cpython_median_us "$big" "$per_round")")
    small_line=$(measure "$small" "$jobs_round")
    small_p50+=("$(field p50_us "$small_line")")
    small_p99+=("$(field p99_us "$small_line")")
    small_parse+=("$(field parse_median_us "$small_line")")
    small_eval+=("$(field eval_median_us "$small_line")")
    small_bare+=("$(field p50_us "$(measure "$small" "$jobs_round" parse)")")
done
an_us=$(med "${big_an[@]}") bare_us=$(med "${big_parse[@]}") cpy_us=$(med "${cpy[@]}")
[ "$(field verdict "$big_line")" = accept ] && [ "$(field verdict "$small_line")" = accept ] ||
    { echo "run-analyze: the benchmark inputs must be accepted"; exit 1; }
echo "cold analysis (analyzer called directly, no cache), medians of $ROUNDS rounds:"
printf '  2 KB job:   analysis p50 %s us, p99 %s us (parse %s us + evaluation %s us; target p50 <= 100 us)\n' \
    "$(med "${small_p50[@]}")" "$(med "${small_p99[@]}")" "$(med "${small_parse[@]}")" \
    "$(med "${small_eval[@]}")"
printf '              tree-sitter bare parse p50 %s us (the floor)\n' "$(med "${small_bare[@]}")"
printf '  100 KB:     analysis %s us = %s MB/s; bare parse %s us = %s MB/s\n' \
    "$an_us" "$(mbps "$(wc -c <"$big")" "$an_us")" "$bare_us" "$(mbps "$(wc -c <"$big")" "$bare_us")"
printf '  CPython ast.parse+walk 100 KB: %s us -> sandgate %sx faster (target >= 3x; bare parse alone: %sx)\n' \
    "$cpy_us" "$(ratio "$cpy_us" "$an_us")" "$(ratio "$cpy_us" "$bare_us")"
printf '  per-round 100 KB analysis / CPython: %s / %s us\n' "${big_an[*]}" "${cpy[*]}"
s50=$(med "${small_p50[@]}")
bench_summary "Python analysis of a 2 KB job, cold (\`bench/run-analyze.sh\`)" \
    "p50 $s50 µs, p99 $(med "${small_p99[@]}") µs" "p50 ≤ 100 µs: $(verdict "$s50" '<=' 100)"
bench_summary "Python analysis of 100 KB against CPython's \`ast.parse\` + walk" \
    "$an_us vs $cpy_us µs = $(ratio "$cpy_us" "$an_us")× faster ($(mbps "$(wc -c <"$big")" "$an_us") MB/s)" \
    "≥ 3×: $(verdict "$(ratio "$cpy_us" "$an_us")" '>=' 3)"
