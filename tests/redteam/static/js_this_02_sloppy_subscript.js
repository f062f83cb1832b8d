// family: this-global — this["process"] with a constant key
function g() { return this["process"].env; }
console.log(g());
