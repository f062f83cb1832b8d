// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; a spread copies the method into an object the analysis does not follow
const o = { m() { return this; } };
const p = { ...o };
const f = p.m;
module.exports = { main: () => f().process };
