var await = 4, g = 2, i = 1;
var x = await /g/i;
