// family: computed-key-scope — a class key is evaluated in the enclosing sloppy function
function outer() {
  class A { [this.process.exit(4)]() {} }
  return A;
}
outer();
