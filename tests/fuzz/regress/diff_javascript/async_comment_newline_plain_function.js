var x = 1;
async /* a
 */ function f() { return x; }
