class Node {
  constructor(value, next = null) {
    this.value = value;
    this.next = next;
  }
}

class LinkedList {
  constructor() {
    this.head = null;
    this.size = 0;
  }

  prepend(value) {
    this.head = new Node(value, this.head);
    this.size += 1;
    return this;
  }

  reverse() {
    let prev = null;
    let node = this.head;
    while (node) {
      const next = node.next;
      node.next = prev;
      prev = node;
      node = next;
    }
    this.head = prev;
    return this;
  }

  toArray() {
    const out = [];
    for (let n = this.head; n; n = n.next) out.push(n.value);
    return out;
  }
}

function main(args) {
  const list = new LinkedList();
  for (const v of args.values || [1, 2, 3, 4]) list.prepend(v);
  return { reversed: list.reverse().toArray(), size: list.size };
}
module.exports = { main };
