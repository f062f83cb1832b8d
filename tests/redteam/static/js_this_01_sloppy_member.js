// family: this-global — this.process in a sloppy function is the global's process
function f() { return this.process; }
const p = f();
p.exit(3);
