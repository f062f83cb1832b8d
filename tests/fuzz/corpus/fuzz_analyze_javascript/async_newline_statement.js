var async = 1, x = 1, g = 1;
async
function f() { return await /x/g; }
