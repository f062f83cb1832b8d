outer: for (let i = 0; i < 3; i++) {
  inner: for (const k in { a: 1 }) {
    if (k) continue outer;
    break inner;
  }
}
