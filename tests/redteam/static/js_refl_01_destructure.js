// family: reflective-getter — getPrototypeOf by destructuring
const { getPrototypeOf: gp } = Object;
gp(function () {}).constructor;
