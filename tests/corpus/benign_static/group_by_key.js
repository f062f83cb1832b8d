function groupBy(list, keyFn) {
  const out = new Map();
  for (const item of list) {
    const k = keyFn(item);
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(item);
  }
  return out;
}

const people = [
  { name: "ann", dept: "eng", age: 31 },
  { name: "bob", dept: "ops", age: 45 },
  { name: "cy", dept: "eng", age: 28 },
];
const byDept = groupBy(people, (p) => p.dept);
const summary = [...byDept].map(([dept, ps]) => ({ dept, n: ps.length, avgAge: ps.reduce((a, p) => a + p.age, 0) / ps.length }));
console.log(summary);
