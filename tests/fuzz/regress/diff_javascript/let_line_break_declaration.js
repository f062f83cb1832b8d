async function f(xs) {
  for await (const x of xs) await x;
  return Promise.all(xs.map(async (y) => y?.z ?? 0));
}
function* g() { yield* [1, 2]; }
let 
a = 1, b = 2; [a, b] = [b, a];
