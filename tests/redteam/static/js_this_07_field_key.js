// family: computed-key-scope — a class field key inside a sloppy function
function k() {
  class B { [this.process.pid] = 1; }
  return B;
}
k();
