// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; the object itself is exported; any caller may detach the method
const o = { m() { return this; } };
module.exports = o;
