class Stats {
  #values = [];
  static #instances = 0;

  constructor(values = []) {
    this.#values = values.slice();
    Stats.#instances += 1;
  }

  get mean() {
    return this.#values.reduce((a, b) => a + b, 0) / (this.#values.length || 1);
  }

  push(v) {
    this.#values.push(v);
    return this;
  }

  static count() {
    return Stats.#instances;
  }

  toString() {
    return `Stats(n=${this.#values.length}, mean=${this.mean.toFixed(2)})`;
  }
}

const s = new Stats([1, 2, 3]).push(10);
console.log(String(s), Stats.count());
