// Timers, promises, events, util and crypto under the default policy.
const { EventEmitter } = require('events');
const util = require('node:util');
const crypto = require('crypto');

async function main(args) {
  const e = new EventEmitter();
  const got = new Promise((resolve) => e.once('x', resolve));
  setTimeout(() => e.emit('x', 41), 5);
  const v = await got;
  await util.promisify(setImmediate)();
  const h = crypto.createHash('sha256').update('a').digest('hex').slice(0, 8);
  class Box { constructor(x) { this.x = x; } }
  Box.prototype.toString = function () { return `Box(${this.x})`; };
  process.nextTick(() => {});
  return { v: v + 1, h, box: String(new Box(2)), env: typeof process.env, args };
}
module.exports = { main };
