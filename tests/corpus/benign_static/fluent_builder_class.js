class QueryBuilder {
  constructor(table) {
    this.table = table;
    this.wheres = [];
    this.limitN = null;
    this.order = null;
  }

  where(field, op, value) {
    this.wheres.push({ field, op, value });
    return this;
  }

  orderBy(field, dir = 'asc') {
    this.order = { field, dir };
    return this;
  }

  limit(n) {
    this.limitN = n;
    return this;
  }

  run(rows) {
    const ops = { '=': (a, b) => a === b, '>': (a, b) => a > b, '<': (a, b) => a < b };
    let out = rows.filter((r) => this.wheres.every((w) => ops[w.op](r[w.field], w.value)));
    if (this.order) {
      const { field, dir } = this.order;
      out = out.slice().sort((a, b) => (a[field] < b[field] ? -1 : 1) * (dir === 'asc' ? 1 : -1));
    }
    return this.limitN === null ? out : out.slice(0, this.limitN);
  }
}

function main(args) {
  const rows = args.rows || [{ n: 'a', v: 3 }, { n: 'b', v: 9 }, { n: 'c', v: 5 }];
  return new QueryBuilder('t').where('v', '>', 2).orderBy('v', 'desc').limit(2).run(rows);
}
module.exports = { main };
