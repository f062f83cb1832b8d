class Temperature {
  #celsius = 0;

  static fromFahrenheit(f) {
    const t = new Temperature();
    t.fahrenheit = f;
    return t;
  }

  get celsius() {
    return this.#celsius;
  }

  set celsius(v) {
    if (typeof v !== 'number' || Number.isNaN(v)) throw new TypeError('not a number');
    this.#celsius = v;
  }

  get fahrenheit() {
    return this.#celsius * 9 / 5 + 32;
  }

  set fahrenheit(v) {
    this.celsius = (v - 32) * 5 / 9;
  }

  equals(other) {
    return other instanceof Temperature && Math.abs(other.celsius - this.celsius) < 1e-9;
  }
}

function main(args) {
  const t = Temperature.fromFahrenheit(args.f === undefined ? 212 : args.f);
  const u = new Temperature();
  u.celsius = 100;
  return { c: t.celsius, same: t.equals(u) };
}
module.exports = { main };
