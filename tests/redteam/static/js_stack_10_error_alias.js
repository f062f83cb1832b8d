// family: stack-trace-hook — Error passed around as a value
const E = Error;
const set = (t, v) => { t.stackTraceLimit = 50; return Object.assign(t, v); };
set(E, {});
