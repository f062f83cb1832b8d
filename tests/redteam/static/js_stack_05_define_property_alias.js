// family: stack-trace-hook — aliased Object and defineProperty.call
const O = Object;
O.defineProperty.call(null, Error, ["prepare", "StackTrace"].join(""), { value: (e, s) => s });
