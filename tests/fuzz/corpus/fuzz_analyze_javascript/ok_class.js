class Acc extends Object {
  #total = 0;
  static of(x) { return new Acc().add(x); }
  add(x, { scale = 1 } = {}) { this.#total += x * scale; return this; }
  get total() { return this.#total; }
}
exports.main = () => Acc.of(2).total;
