const cart = {
  items: [],
  discount: 0,
  add(name, price, qty = 1) {
    this.items.push({ name, price, qty });
    return this;
  },
  applyDiscount(pct) {
    this.discount = pct;
    return this;
  },
  get total() {
    const gross = this.items.reduce((s, it) => s + it.price * it.qty, 0);
    return Math.round(gross * (100 - this.discount)) / 100;
  },
};

function main() {
  cart.add('pen', 1.5, 4).add('book', 12).applyDiscount(10);
  console.log(Object.keys(cart), JSON.stringify(cart.items));
  return { total: cart.total, count: cart.items.length };
}
module.exports = { main };
