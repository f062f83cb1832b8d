// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; the call returns o itself, kept in a name that is then detached
const o = { m() { return this; } };
const r = o.m();
const f = r.m;
module.exports = { main: () => f().process };
