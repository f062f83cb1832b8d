const EventEmitter = require("events");

class Counter extends EventEmitter {
  constructor() {
    super();
    this.count = 0;
  }

  add(n = 1) {
    this.count += n;
    this.emit("change", this.count);
  }
}

const c = new Counter();
const seen = [];
c.on("change", (v) => seen.push(v));
c.add();
c.add(5);
console.log(seen);
