'use strict';
const EventEmitter = require('events');

function makeCounter() {
  const counts = new Map();
  return {
    hit(name) {
      counts.set(name, (counts.get(name) || 0) + 1);
      return this;
    },
    top(n) {
      return [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
    },
  };
}

function main(args) {
  const bus = new EventEmitter();
  const counter = makeCounter();
  bus.on('page', (p) => counter.hit(p));
  for (const p of args.pages || ['/', '/a', '/', '/b', '/']) bus.emit('page', p);
  return counter.top(2);
}
module.exports = { main };
