// family: this-global + network — fetch through this
function h() { return this.fetch("http://127.0.0.1:1/"); }
h();
