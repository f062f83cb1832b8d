// family: stack-trace-hook — captureStackTrace with a hook already set
const holder = {};
Error.captureStackTrace(holder);
