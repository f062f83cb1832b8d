#!/usr/bin/env bash
# run-analyze-js.sh - JavaScript analyzer throughput and per-job latency.
#
# Writes a ~2 KB submission of ordinary data-processing code (a class,
# closures, destructuring, template literals, require of allowed modules,
# the RAGFlow main/module.exports shape) and a ~100 KB module made of renamed
# copies of it, then reports under policies/default.json, side by side and
# all cold (bench_analyze calls the analyzer directly, no verdict cache):
#   - per-job latency p50/p99 on the 2 KB submission (target p50 <= 100 us)
#     and tree-sitter's bare parse of the same bytes (the floor)
#   - throughput on the 100 KB module (MB/s), analysis and bare parse
#   - the split between the analysis's parse and its evaluation
# Figures are medians over ROUNDS alternating rounds. Fails only when it
# cannot measure (missing binary, analysis error).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
BUILD=${BUILD:-build/rel}
RUNS=${RUNS:-51}
JOBS=${JOBS:-5000}
bin=$BUILD/bench/bench_analyze
work=build/bench-data
mkdir -p "$work"
[ -x "$bin" ] || { echo "run-analyze-js: $bin missing (make bench-bins)"; exit 1; }
command -v python3 >/dev/null || { echo "run-analyze-js: python3 missing"; exit 1; }

small=$work/small.js big=$work/big.js
cat >"$small" <<'JS'
const crypto = require('crypto');
const path = require('path');

class Summary {
  constructor(rows, opts = {}) {
    this.rows = rows;
    this.top = opts.top ?? 5;
    this.byKey = new Map();
  }

  add(row) {
    const list = this.byKey.get(row.key) || [];
    list.push(Number(row.value) || 0);
    this.byKey.set(row.key, list);
  }

  stats() {
    const values = this.rows.map((r) => Number(r.value)).filter((v) => !Number.isNaN(v));
    const mean = values.reduce((a, b) => a + b, 0) / (values.length || 1);
    const sq = values.reduce((a, b) => a + (b - mean) ** 2, 0);
    const tags = {};
    for (const r of this.rows) {
      for (const t of r.tags || []) {
        tags[t] = (tags[t] || 0) + 1;
      }
    }
    const top = Object.entries(tags).sort((a, b) => b[1] - a[1]).slice(0, this.top);
    return { count: values.length, mean, stdev: Math.sqrt(sq / (values.length || 1)), top };
  }
}

function digest(text) {
  return crypto.createHash('sha256').update(String(text)).digest('hex');
}

function parseRows(text) {
  let rows;
  try {
    rows = JSON.parse(text);
  } catch (e) {
    return { error: `bad input: ${e.message}` };
  }
  if (!Array.isArray(rows)) {
    return { error: 'expected an array' };
  }
  return rows.map((row, i) => ({
    key: String(row.key ?? i),
    value: row.value,
    tags: Array.isArray(row.tags) ? row.tags : [],
    file: path.basename(String(row.file || 'x.txt')),
  }));
}

async function main(args) {
  const { data = '[]', top = 5 } = args || {};
  const rows = parseRows(data);
  if (rows.error) {
    return { ok: false, error: rows.error };
  }
  const s = new Summary(rows, { top });
  rows.forEach((r) => s.add(r));
  const keys = {};
  for (const [k, v] of s.byKey) {
    keys[k] = Math.max(...v);
  }
  const result = { ok: true, ...s.stats(), keys, digest: digest(data) };
  await new Promise((resolve) => setTimeout(resolve, 0));
  return result;
}

module.exports = { main };
JS
python3 - "$small" "$big" <<'PY'
import sys
small, big = sys.argv[1], sys.argv[2]
src = open(small).read().replace("module.exports = { main };\n", "")
parts, i = [], 0
while sum(map(len, parts)) < 100_000:
    parts.append(src.replace("Summary", f"Summary{i}").replace("function main", f"function main{i}")
                 .replace("function digest", f"function digest{i}").replace("function parseRows", f"function parseRows{i}"))
    i += 1
parts.append("module.exports = { main: main0 };\n")
open(big, "w").write("".join(parts))
PY

policy=policies/default.json
print_load
printf 'inputs: %s (%d bytes), %s (%d bytes), policy %s\n' "$small" "$(wc -c <"$small")" \
    "$big" "$(wc -c <"$big")" "$policy"
ROUNDS=${ROUNDS:-5}
per_round=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
jobs_round=$(( (JOBS + ROUNDS - 1) / ROUNDS ))
measure() { "$bin" "$policy" nodejs "$@" || { echo "run-analyze-js: cannot measure"; exit 1; }; }
s50=() s99=() sparse=() seval=() sbare=() ban=() bparse=() beval=() bbare=()
for ((i = 0; i < ROUNDS; i++)); do
    small_line=$(measure "$small" "$jobs_round")
    s50+=("$(field p50_us "$small_line")") s99+=("$(field p99_us "$small_line")")
    sparse+=("$(field parse_median_us "$small_line")") seval+=("$(field eval_median_us "$small_line")")
    sbare+=("$(field p50_us "$(measure "$small" "$jobs_round" parse)")")
    big_line=$(measure "$big" "$per_round")
    ban+=("$(field median_us "$big_line")")
    bparse+=("$(field parse_median_us "$big_line")") beval+=("$(field eval_median_us "$big_line")")
    bbare+=("$(field median_us "$(measure "$big" "$per_round" parse)")")
done
[ "$(field verdict "$small_line")" = accept ] && [ "$(field verdict "$big_line")" = accept ] ||
    { echo "run-analyze-js: the benchmark inputs must be accepted"; exit 1; }
an_us=$(med "${ban[@]}") bare_us=$(med "${bbare[@]}") bytes=$(wc -c <"$big")
echo "cold analysis (analyzer called directly, no cache), medians of $ROUNDS rounds:"
printf '  2 KB job:   analysis p50 %s us, p99 %s us (parse %s us + evaluation %s us; target p50 <= 100 us)\n' \
    "$(med "${s50[@]}")" "$(med "${s99[@]}")" "$(med "${sparse[@]}")" "$(med "${seval[@]}")"
printf '              tree-sitter bare parse p50 %s us (the floor)\n' "$(med "${sbare[@]}")"
printf '  100 KB:     analysis %s us = %s MB/s (parse %s us + evaluation %s us); bare parse %s us = %s MB/s\n' \
    "$an_us" "$(mbps "$bytes" "$an_us")" "$(med "${bparse[@]}")" "$(med "${beval[@]}")" \
    "$bare_us" "$(mbps "$bytes" "$bare_us")"
s50=$(med "${s50[@]}")
bench_summary "JavaScript analysis of a 2 KB job, cold (\`bench/run-analyze-js.sh\`)" \
    "p50 $s50 µs, p99 $(med "${s99[@]}") µs; 100 KB: $an_us µs = $(mbps "$bytes" "$an_us") MB/s" \
    "p50 ≤ 100 µs: $(verdict "$s50" '<=' 100)"
