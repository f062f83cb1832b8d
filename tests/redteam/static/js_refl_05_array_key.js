// family: key folding — an array literal as the key
const O2 = Object;
O2[["getPrototypeOf"]](() => 0);
