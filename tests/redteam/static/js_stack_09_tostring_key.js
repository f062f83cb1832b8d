// family: stack-trace-hook / key folding — a toString object as the key
const key = { toString() { return "prepare" + "StackTrace"; } };
Error[key] = (e, s) => s;
