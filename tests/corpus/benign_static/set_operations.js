const a = new Set(["x", "y", "z"]);
const b = new Set(["y", "z", "w"]);
const union = new Set([...a, ...b]);
const inter = [...a].filter((v) => b.has(v));
const diff = [...a].filter((v) => !b.has(v));
const jaccard = inter.length / union.size;
console.log({ union: [...union].sort(), inter, diff, jaccard: jaccard.toFixed(2) });
