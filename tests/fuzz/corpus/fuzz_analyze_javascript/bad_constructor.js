[].constructor.constructor("return this")();
