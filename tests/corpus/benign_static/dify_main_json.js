function main({ arg1, arg2 }) {
  const data = JSON.parse(arg1);
  const limit = Number(arg2) || 10;
  const items = (data.items || []).filter((it) => it && it.name).slice(0, limit);
  return { result: items.map((it) => it.name.trim()).join(", "), count: items.length };
}

module.exports = { main };
