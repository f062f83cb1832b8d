// family: network — fetch destructured from the sloppy this
function n() { const { fetch: f } = this; return f("http://127.0.0.1:9/"); }
n();
