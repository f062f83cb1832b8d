// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; Object.values hands the method out
const o = { m() { return this; } };
module.exports = { main: () => Object.values(o)[0]().process };
