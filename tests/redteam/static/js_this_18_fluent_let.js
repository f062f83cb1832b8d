// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; an object in a let: the name may be rebound to anything
let o = { m() { return this; } };
module.exports = { main: () => o.m().process };
