function toMarkdown(records) {
  if (!records.length) return "";
  const cols = Object.keys(records[0]);
  const header = `| ${cols.join(" | ")} |`;
  const sep = `|${cols.map(() => "---").join("|")}|`;
  const body = records.map((r) => `| ${cols.map((c) => String(r[c] ?? "")).join(" | ")} |`);
  return [header, sep, ...body].join("\n");
}

function main({ records }) {
  return { result: toMarkdown(Array.isArray(records) ? records : JSON.parse(records)) };
}

console.log(main({ records: [{ a: 1, b: "x" }, { a: 2 }] }).result);
module.exports = { main };
