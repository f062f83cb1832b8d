const assert = require("assert");

function parseRow(line) {
  const [id, name, score] = line.split(",");
  const row = { id: Number(id), name: name.trim(), score: parseFloat(score) };
  assert.ok(Number.isInteger(row.id), "id must be an integer");
  return row;
}

const rows = ["1, ann, 3.5", "2, bob, 4"].map(parseRow);
assert.deepStrictEqual(rows.map((r) => r.id), [1, 2]);
console.log(rows);
