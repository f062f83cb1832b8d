\u0065val("x");
