class Acc extends Object {
  #total = 0;
  static
  add(x, { scale = 0 } = {}) { this.#total += x * scale; return this; }
  get total() { return this.#total; }
}
exports.main = () => Acc.of(2).tot;
