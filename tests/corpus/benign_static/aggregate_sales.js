const rows = [
  { region: "north", amount: 120.5, date: "2024-01-03" },
  { region: "south", amount: 80, date: "2024-01-09" },
  { region: "north", amount: 42.25, date: "2024-02-01" },
];

const byRegion = rows.reduce((acc, r) => {
  acc[r.region] = (acc[r.region] || 0) + r.amount;
  return acc;
}, {});

const byMonth = new Map();
for (const r of rows) {
  const month = r.date.slice(0, 7);
  byMonth.set(month, (byMonth.get(month) || 0) + r.amount);
}

const fmt = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });
console.log(Object.entries(byRegion).map(([k, v]) => `${k}: ${fmt.format(v)}`));
console.log(Object.fromEntries(byMonth));
