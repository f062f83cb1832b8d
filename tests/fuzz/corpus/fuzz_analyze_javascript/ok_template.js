const n = 3;
const s = `a${n + 1}b${`c${n}`}\u{1F600}`;
const r = /[a-z]+\/x/giu.test("ab");
const t = String.raw`\n${s}`;
