var yield = 4, g = 2, i = 1;
var y = yield /g/i;
