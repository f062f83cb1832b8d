// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; here it is read off the object
const o = { m() { return this; } };
const f = o.m;
module.exports = { main: () => f().process };
