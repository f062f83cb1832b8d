const util = require("util");

const rows = [{ id: 1, tags: ["a", "b"] }, { id: 2, tags: [] }];
console.log(util.format("%d rows, first: %j", rows.length, rows[0]));
console.log(util.inspect(rows, { depth: 2, compact: true }));
console.log(util.isDeepStrictEqual(rows[0], { id: 1, tags: ["a", "b"] }));
