// family: stack-trace-hook — defineProperties with a descriptor map
Object.defineProperties(Error, { prepareStackTrace: { value: (e, s) => s, writable: true } });
