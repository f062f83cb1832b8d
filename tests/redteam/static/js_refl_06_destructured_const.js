// family: key folding — a key destructured from a constant array
const [kk] = ["getOwnPropertyDescriptors"];
Object[kk](Math);
