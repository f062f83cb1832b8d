let a = 4, b = 2, g = 1;
const q = a / b / g;
const re = /b/g;
const x = (a) / 2, y = [a] / 1;
