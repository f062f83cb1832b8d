const F = Function;
F("return process")();
