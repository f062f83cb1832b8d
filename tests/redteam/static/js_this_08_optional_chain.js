// family: this-global — optional chaining on a sloppy this
function f() { return this?.process; }
f();
