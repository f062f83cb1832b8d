// family: stack-trace-hook — the hook name as a string constant
const name = "prepareStackTrace";
Error[name] = (e, frames) => frames;
