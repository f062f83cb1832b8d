var yield = 4, i = 1;
var y = yield /i/ 2;
