const o = {};
o.__proto__.polluted = 1;
