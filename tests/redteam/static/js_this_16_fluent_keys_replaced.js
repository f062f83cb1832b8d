// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; Object.keys replaced by the job
Object.keys = function (x) { const f = x.m; return f(); };
const o = { m() { return this; } };
module.exports = { main: () => Object.keys(o).process };
