// family: this-global — destructuring the global out of a sloppy this
function f() { const { process: p } = this; return p.pid; }
f();
