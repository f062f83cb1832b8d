var x = 1, g = 1;
async /* a
 */ function f() { return await /x/g; }
