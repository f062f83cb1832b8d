// family: stack-trace-hook — Object.assign with fromEntries
Object.assign(Error, Object.fromEntries([["prepareStackTrace", (e, s) => s]]));
