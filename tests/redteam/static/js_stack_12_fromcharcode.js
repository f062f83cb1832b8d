// family: stack-trace-hook — String.fromCharCode spelling
const n = String.fromCharCode(112,114,101,112,97,114,101,83,116,97,99,107,84,114,97,99,101);
