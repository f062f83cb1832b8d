var x = 1, g = 1;
class A { async
  m() { return await /x/g; } }
