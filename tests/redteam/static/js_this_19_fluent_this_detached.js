// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; another method of the object detaches it through this
const o = { m() { return this; }, n() { const f = this.m; return f(); } };
module.exports = { main: () => o.n().process };
