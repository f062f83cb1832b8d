const k = 'constructor'; f[k]('return 1')();
x = a[['con', 'structor'].join('')] + a[String.fromCharCode(99, 111)] + a['A'.toLowerCase()];
const {constructor: C, ["__pro" + "to__"]: P} = () => {};
const O = Object; O.getPrototypeOf(x); Reflect.get(globalThis, `ev${"al"}`);
arguments[1]('child_process'); module.require('vm'); require(`node:${"fs"}/../x`);
function g() { 'use strict'; return [this, \u0065val, "\x63\143\u{63}"] }
class A extends B { constructor() { super(); this[k] = 1 } static s() { return this } }
with (o) { constructor } label: for (const {a = 1, ...r} of xs) continue label;
