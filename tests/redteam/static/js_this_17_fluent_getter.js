// family: this-global — `return this` in an object-literal method is the global
// object once the method is called without a receiver; a getter that returns this, read through a descriptor
const o = { get me() { return this; } };
module.exports = { main: () => Object.getOwnPropertyDescriptor(o, 'me').get.call(null).process };
