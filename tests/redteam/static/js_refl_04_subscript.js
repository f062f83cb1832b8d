// family: reflective-getter — by constant subscript on an alias
const M = Object;
M["getOwnPropertyNames"](M);
