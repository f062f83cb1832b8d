// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; here through .call(null)
const o = { m() { return this; } };
module.exports = { main: () => o.m.call(null).process };
