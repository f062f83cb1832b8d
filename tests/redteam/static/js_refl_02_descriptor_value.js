// family: reflective-getter — taken from its descriptor's value
const d = Object.getOwnPropertyDescriptor(Object, "getPrototypeOf");
d.value(async function () {});
