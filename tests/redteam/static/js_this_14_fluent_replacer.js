// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; JSON.stringify's replacer receives every value, the method too
const o = { m() { return this; } };
let g = null;
JSON.stringify(o, (k, v) => { if (typeof v === 'function') g = v(); return v; });
module.exports = { main: () => g.process };
