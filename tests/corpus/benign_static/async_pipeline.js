const { setTimeout: sleep } = require("timers/promises");

async function score(item) {
  await sleep(1);
  return { ...item, score: item.a * 2 + item.b };
}

async function main() {
  const items = [{ a: 1, b: 2 }, { a: 3, b: 0 }];
  const scored = await Promise.all(items.map(score));
  scored.sort((x, y) => y.score - x.score);
  return { best: scored[0], all: scored };
}

main().then((r) => console.log(JSON.stringify(r)));
