var await = 1, g = 2;
var x = await /g/ 1;
