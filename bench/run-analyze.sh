#!/usr/bin/env bash
# run-analyze.sh - analyzer throughput and per-job latency.
#
# Generates a ~100 KB Python module of realistic data-processing code and a
# ~2 KB submission, then reports:
#   - sandgate analysis throughput on the 100 KB file (MB/s, median of RUNS)
#   - CPython's ast.parse + full ast.walk on the same file (median), and the
#     ratio (target: sandgate >= 3x faster)
#   - per-job latency p50/p99 on the 2 KB submission (target: p50 <= 100 us)
# Fails only when it cannot measure (missing binary, analysis error).
set -euo pipefail
cd "$(dirname "$0")/.."
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
read -r load1 _ </proc/loadavg
echo "load average $load1 on $(nproc) CPUs (figures are noisy while the machine is busy)"
printf 'inputs: %s (%d bytes), %s (%d bytes), policy %s\n' "$big" "$(wc -c <"$big")" \
    "$small" "$(wc -c <"$small")" "$policy"

field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

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

# The two sides alternate in ROUNDS rounds so that a busy machine slows both
# alike; the figures are medians over the rounds.
ROUNDS=${ROUNDS:-5}
per_round=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
sg_meds=() cpy_meds=() ratios=()
for ((i = 0; i < ROUNDS; i++)); do
    big_line=$("$bin" "$policy" python "$big" "$per_round") || { echo "run-analyze: cannot measure"; exit 1; }
    sg_meds+=("$(field median_us "$big_line")")
    cpy_meds+=("$(cpython_median_us "$big" "$per_round")")
    ratios+=("$(ratio "${cpy_meds[i]}" "${sg_meds[i]}")")
done
sg_us=$(printf '%s\n' "${sg_meds[@]}" | median)
cpy_us=$(printf '%s\n' "${cpy_meds[@]}" | median)
small_line=$("$bin" "$policy" python "$small" "$JOBS") || { echo "run-analyze: cannot measure"; exit 1; }

echo "sandgate 100KB (last round): $big_line"
echo "sandgate 2KB:                $small_line"
printf 'throughput: %s MB/s (median %s us per 100 KB analysis over %d rounds of %d; last round: parse %s us, evaluation %s us; verdict %s)\n' \
    "$(awk -v b="$(wc -c <"$big")" -v t="$sg_us" 'BEGIN { printf "%.1f", b / t }')" "$sg_us" \
    "$ROUNDS" "$per_round" "$(field parse_median_us "$big_line")" \
    "$(field eval_median_us "$big_line")" "$(field verdict "$big_line")"
printf 'cpython ast.parse+walk: median %s us -> sandgate is %sx faster (target >= 3x); per-round ratios: %s\n' \
    "$cpy_us" "$(ratio "$cpy_us" "$sg_us")" "${ratios[*]}"
printf 'per-job latency (2 KB): p50 %s us, p99 %s us (target p50 <= 100 us; parse %s us, evaluation %s us), verdict %s\n' \
    "$(field p50_us "$small_line")" "$(field p99_us "$small_line")" \
    "$(field parse_median_us "$small_line")" "$(field eval_median_us "$small_line")" \
    "$(field verdict "$small_line")"
