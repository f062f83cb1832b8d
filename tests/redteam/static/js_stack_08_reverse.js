// family: stack-trace-hook — a name computed at run time, assigned onto Error
const k = "ecarTkcatSeraperp".split("").reverse().join("");
Error[k] = (e, s) => s;
