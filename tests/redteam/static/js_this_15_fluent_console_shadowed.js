// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; a console of the job's own receives the object
const console = { log(x) { const f = x.m; return f(); } };
const o = { m() { return this; } };
module.exports = { main: () => console.log(o).process };
