function startOfWeek(d) {
  const x = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const day = x.getUTCDay() || 7;
  x.setUTCDate(x.getUTCDate() - day + 1);
  return x.toISOString().slice(0, 10);
}

const events = ["2024-03-04T10:00:00Z", "2024-03-06T08:00:00Z", "2024-03-12T12:00:00Z"];
const weeks = {};
for (const e of events) {
  const w = startOfWeek(new Date(e));
  weeks[w] = (weeks[w] || 0) + 1;
}
console.log(weeks, new Date(0).toISOString());
